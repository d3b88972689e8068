package postgres

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// UserService implements mapcommons.UserService on the store.
type UserService struct{ db *DB }

var _ mapcommons.UserService = (*UserService)(nil)

// userColumns are the columns scanUser reads from the table users (not
// aliased): the user's own and their groups, read in the same statement so
// that authenticating a request costs one query.
const userColumns = `id, login, email, fullname, password_hash, admin, created_at, updated_at,
	(SELECT array_agg(group_id ORDER BY group_id) FROM group_members WHERE user_id = users.id)`

// loginKey is the expression of the unique index on logins, which both
// the index and the lookups must spell the same way.
const loginKey = `lower(login COLLATE "C")`

func scanUser(row pgx.Row) (*mapcommons.User, error) {
	var u mapcommons.User
	if err := row.Scan(&u.ID, &u.Login, &u.Email, &u.Fullname, &u.PasswordHash, &u.Admin, &u.CreatedAt, &u.UpdatedAt, &u.GroupIDs); err != nil {
		return nil, err
	}
	u.CreatedAt, u.UpdatedAt = utc(u.CreatedAt), utc(u.UpdatedAt)
	if len(u.GroupIDs) == 0 {
		u.GroupIDs = nil
	}
	return &u, nil
}

// FindUserByID implements mapcommons.UserService.
func (s *UserService) FindUserByID(ctx context.Context, id int64) (_ *mapcommons.User, err error) {
	defer derrors.Wrap(&err, "UserService.FindUserByID(%d)", id)
	u, err := scanUser(s.db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	return u, storekit.UserNotFound(formatError(err), strconv.FormatInt(id, 10))
}

// FindUserByLogin implements mapcommons.UserService.
func (s *UserService) FindUserByLogin(ctx context.Context, login string) (_ *mapcommons.User, err error) {
	defer derrors.Wrap(&err, "UserService.FindUserByLogin()")
	u, err := scanUser(s.db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users WHERE `+loginKey+` = lower($1 COLLATE "C")`, login))
	return u, storekit.UserNotFound(formatError(err), login)
}

var _ mapcommons.LoginFinder = (*UserService)(nil)

// FindUserAndSecondFactor implements mapcommons.LoginFinder: the user's
// row and the second factor's (FindSecondFactor's) in one query.
func (s *UserService) FindUserAndSecondFactor(ctx context.Context, login string) (_ *mapcommons.User, _ *mapcommons.SecondFactor, err error) {
	defer derrors.Wrap(&err, "UserService.FindUserAndSecondFactor()")
	var u mapcommons.User
	var secret []byte
	var confirmed *bool
	var step *int64
	var created *time.Time
	var codes int
	err = s.db.pool.QueryRow(ctx, `SELECT `+userColumns+`, t.f_secret, t.f_confirmed, t.f_step, t.f_created,
		(SELECT count(*) FROM user_recovery_codes WHERE user_id = users.id)
		FROM users LEFT JOIN LATERAL (SELECT secret AS f_secret, confirmed AS f_confirmed, last_step AS f_step, created_at AS f_created
			FROM user_totp WHERE user_id = users.id) t ON true
		WHERE `+loginKey+` = lower($1 COLLATE "C")`, login).
		Scan(&u.ID, &u.Login, &u.Email, &u.Fullname, &u.PasswordHash, &u.Admin, &u.CreatedAt, &u.UpdatedAt, &u.GroupIDs,
			&secret, &confirmed, &step, &created, &codes)
	if err != nil {
		return nil, nil, storekit.UserNotFound(formatError(err), login)
	}
	u.CreatedAt, u.UpdatedAt = utc(u.CreatedAt), utc(u.UpdatedAt)
	if len(u.GroupIDs) == 0 {
		u.GroupIDs = nil
	}
	if confirmed == nil {
		return &u, nil, nil
	}
	return &u, &mapcommons.SecondFactor{UserID: u.ID, Secret: secret, Confirmed: *confirmed, LastStep: *step,
		RecoveryCodes: codes, CreatedAt: utc(*created)}, nil
}

// CreateUser implements mapcommons.UserService.
func (s *UserService) CreateUser(ctx context.Context, u *mapcommons.User) (err error) {
	defer derrors.Wrap(&err, "UserService.CreateUser()")
	now := s.db.now()
	err = s.db.pool.QueryRow(ctx,
		`INSERT INTO users (login, email, fullname, password_hash, admin, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
		u.Login, u.Email, u.Fullname, u.PasswordHash, u.Admin, now).Scan(&u.ID)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ECONFLICT {
		return storekit.LoginTaken(u.Login)
	} else if err != nil {
		return err
	}
	u.CreatedAt, u.UpdatedAt = now, now
	return nil
}

// HasAdmin implements mapcommons.UserService.
func (s *UserService) HasAdmin(ctx context.Context) (_ bool, err error) {
	defer derrors.Wrap(&err, "UserService.HasAdmin()")
	var yes bool
	err = s.db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE admin)`).Scan(&yes)
	return yes, formatError(err)
}

// CreateFirstAdmin implements mapcommons.UserService. The table of users
// is locked against every other writer of it (SHARE ROW EXCLUSIVE
// conflicts with itself and with inserts and updates) before the insert
// reads whether an administrator is there: a server racing this one
// waits, then its own statement sees this one's administrator and inserts
// nothing. Without the lock, two inserts each seeing no administrator
// (read committed) would both make one.
func (s *UserService) CreateFirstAdmin(ctx context.Context, u *mapcommons.User) (err error) {
	defer derrors.Wrap(&err, "UserService.CreateFirstAdmin()")
	now := s.db.now()
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`); err != nil {
			return formatError(err)
		}
		err := tx.QueryRow(ctx,
			`INSERT INTO users (login, email, fullname, password_hash, admin, created_at, updated_at)
			SELECT $1, $2, $3, $4, true, $5, $5 WHERE NOT EXISTS (SELECT 1 FROM users WHERE admin) RETURNING id`,
			u.Login, u.Email, u.Fullname, u.PasswordHash, now).Scan(&u.ID)
		if errors.Is(err, pgx.ErrNoRows) {
			return mapcommons.ErrAdminExists
		}
		if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ECONFLICT {
			return storekit.LoginTaken(u.Login)
		}
		return err
	})
	if err != nil {
		return err
	}
	u.Admin = true
	u.CreatedAt, u.UpdatedAt = now, now
	return nil
}

// UpdateUser implements mapcommons.UserService.
func (s *UserService) UpdateUser(ctx context.Context, id int64, upd mapcommons.UserUpdate) (_ *mapcommons.User, err error) {
	defer derrors.Wrap(&err, "UserService.UpdateUser(%d)", id)
	sets, args := storekit.UserSets(upd, s.db.now(), func(i int) string { return "$" + strconv.Itoa(i) })
	args = append(args, id)
	var u *mapcommons.User
	err = s.db.tx(ctx, func(tx pgx.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRow(ctx, `UPDATE users SET `+sets+
			` WHERE id = $`+strconv.Itoa(len(args))+` RETURNING `+userColumns, args...))
		if err != nil {
			return storekit.UserNotFound(formatError(err), strconv.FormatInt(id, 10))
		}
		// What an administrator may see, their private maps' entries may show.
		if upd.Admin != nil {
			return refreshMapDocs(ctx, tx, mapsOwnedBy, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// DeleteUser implements mapcommons.UserService. Memberships, login trust
// and sessions go with the user (ON DELETE CASCADE); datasets and maps stay
// without an owner (ON DELETE SET NULL).
func (s *UserService) DeleteUser(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "UserService.DeleteUser(%d)", id)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		// Their datasets' rows (which the deletion changes: owner_id), then
		// the lock of maps' entries, then the maps' rows (lockMapDocs says
		// why in this order).
		if _, err := tx.Exec(ctx, `SELECT id FROM datasets WHERE owner_id = $1 ORDER BY id FOR UPDATE`, id); err != nil {
			return formatError(err)
		}
		if err := lockMapDocs(ctx, tx); err != nil {
			return err
		}
		// Their objects' search entries lose their owner.
		maps, err := selectIDs(ctx, tx, mapsOwnedBy, id)
		if err != nil {
			return err
		}
		datasets, err := selectIDs(ctx, tx, `SELECT id FROM datasets WHERE owner_id = $1`, id)
		if err != nil {
			return err
		}
		n, err := affected(tx.Exec(ctx, `DELETE FROM users WHERE id = $1`, id))
		if err != nil {
			return err
		}
		if n == 0 {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d not found", id)
		}
		for _, ds := range datasets {
			if err := writeDatasetDoc(ctx, tx, ds); err != nil {
				return err
			}
		}
		return writeMapDocs(ctx, tx, maps)
	})
}
