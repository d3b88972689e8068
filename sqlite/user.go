package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// UserService implements mapcommons.UserService on the store.
type UserService struct{ db *DB }

// NewUserService returns the user service of db.
func NewUserService(db *DB) *UserService { return &UserService{db: db} }

var _ mapcommons.UserService = (*UserService)(nil)

// userColumns are the columns scanUser reads from the table users (not
// aliased): the user's own and their groups, read in the same statement so
// that authenticating a request costs one query.
const userColumns = `id, login, email, fullname, password_hash, admin, created_at, updated_at,
	coalesce((SELECT group_concat(group_id) FROM group_members WHERE user_id = users.id), '')`

func scanUser(row interface{ Scan(...any) error }) (*mapcommons.User, error) {
	var u mapcommons.User
	var created, updated, groups string
	if err := row.Scan(&u.ID, &u.Login, &u.Email, &u.Fullname, &u.PasswordHash, &u.Admin, &created, &updated, &groups); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = parseTime(created), parseTime(updated)
	if groups != "" {
		for _, g := range strings.Split(groups, ",") {
			id, err := strconv.ParseInt(g, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("user %d: group id %q", u.ID, g)
			}
			u.GroupIDs = append(u.GroupIDs, id)
		}
		slices.Sort(u.GroupIDs)
	}
	return &u, nil
}

// FindUserByID implements mapcommons.UserService.
func (s *UserService) FindUserByID(ctx context.Context, id int64) (_ *mapcommons.User, err error) {
	defer derrors.Wrap(&err, "UserService.FindUserByID(%d)", id)
	u, err := scanUser(s.db.read.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	return u, storekit.UserNotFound(formatError(err), itoa(id))
}

// FindUserByLogin implements mapcommons.UserService.
func (s *UserService) FindUserByLogin(ctx context.Context, login string) (_ *mapcommons.User, err error) {
	defer derrors.Wrap(&err, "UserService.FindUserByLogin()")
	u, err := scanUser(s.db.read.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE login = ?`, login))
	return u, storekit.UserNotFound(formatError(err), login)
}

// CreateUser implements mapcommons.UserService.
func (s *UserService) CreateUser(ctx context.Context, u *mapcommons.User) (err error) {
	defer derrors.Wrap(&err, "UserService.CreateUser()")
	now := s.db.now()
	res, err := s.db.write.ExecContext(ctx,
		`INSERT INTO users (login, email, fullname, password_hash, admin, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		u.Login, u.Email, u.Fullname, u.PasswordHash, u.Admin, now, now)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ECONFLICT {
		return storekit.LoginTaken(u.Login)
	} else if err != nil {
		return err
	}
	if u.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	u.CreatedAt, u.UpdatedAt = parseTime(now), parseTime(now)
	return nil
}

// HasAdmin implements mapcommons.UserService.
func (s *UserService) HasAdmin(ctx context.Context) (_ bool, err error) {
	defer derrors.Wrap(&err, "UserService.HasAdmin()")
	var n int
	err = s.db.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM users WHERE admin <> 0 LIMIT 1)`).Scan(&n)
	return n > 0, formatError(err)
}

// CreateFirstAdmin implements mapcommons.UserService: one statement, an
// insert of the row only where no administrator is (SQLite has one
// writer, and the statement reads the latest state under its write lock).
func (s *UserService) CreateFirstAdmin(ctx context.Context, u *mapcommons.User) (err error) {
	defer derrors.Wrap(&err, "UserService.CreateFirstAdmin()")
	now := s.db.now()
	var id int64
	err = s.db.write.QueryRowContext(ctx,
		`INSERT INTO users (login, email, fullname, password_hash, admin, created_at, updated_at)
		SELECT ?, ?, ?, ?, 1, ?, ? WHERE NOT EXISTS (SELECT 1 FROM users WHERE admin <> 0) RETURNING id`,
		u.Login, u.Email, u.Fullname, u.PasswordHash, now, now).Scan(&id)
	if err == sql.ErrNoRows {
		return mapcommons.ErrAdminExists
	}
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ECONFLICT {
		return storekit.LoginTaken(u.Login)
	} else if err != nil {
		return err
	}
	u.ID, u.Admin = id, true
	u.CreatedAt, u.UpdatedAt = parseTime(now), parseTime(now)
	return nil
}

// UpdateUser implements mapcommons.UserService.
func (s *UserService) UpdateUser(ctx context.Context, id int64, upd mapcommons.UserUpdate) (_ *mapcommons.User, err error) {
	defer derrors.Wrap(&err, "UserService.UpdateUser(%d)", id)
	sets, args := storekit.UserSets(upd, s.db.now(), func(int) string { return "?" })
	args = append(args, id)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, formatError(err)
	}
	defer tx.Rollback()
	u, err := scanUser(tx.QueryRowContext(ctx,
		`UPDATE users SET `+sets+` WHERE id = ? RETURNING `+userColumns, args...))
	if err != nil {
		return nil, storekit.UserNotFound(formatError(err), itoa(id))
	}
	// What an administrator may see, their private maps' entries may show.
	if upd.Admin != nil {
		if err := refreshMapDocs(ctx, tx, mapsOwnedBy, id); err != nil {
			return nil, err
		}
	}
	return u, formatError(tx.Commit())
}

// DeleteUser implements mapcommons.UserService.
func (s *UserService) DeleteUser(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "UserService.DeleteUser(%d)", id)
	// Their memberships cascade; their datasets and maps lose their owner,
	// and the search entries follow.
	defer s.db.forget(0)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	maps, err := mapIDs(ctx, tx, mapsOwnedBy, id)
	if err != nil {
		return err
	}
	datasets, err := mapIDs(ctx, tx, `SELECT id FROM datasets WHERE owner_id = ?`, id)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = ?`, id)
	if err != nil {
		return formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return storekit.UserNotFound(formatError(sql.ErrNoRows), itoa(id))
	}
	for _, ds := range datasets {
		if err := writeDatasetDoc(ctx, tx, ds); err != nil {
			return err
		}
	}
	if err := writeMapDocs(ctx, tx, maps); err != nil {
		return err
	}
	return formatError(tx.Commit())
}
