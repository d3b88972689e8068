package sqlite

import (
	"context"
	"database/sql"
	"strconv"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// GroupService implements mapcommons.GroupService on the store.
type GroupService struct{ db *DB }

// NewGroupService returns the group service of db.
func NewGroupService(db *DB) *GroupService { return &GroupService{db: db} }

var _ mapcommons.GroupService = (*GroupService)(nil)

// CreateGroup implements mapcommons.GroupService.
func (s *GroupService) CreateGroup(ctx context.Context, g *mapcommons.UserGroup) (err error) {
	defer derrors.Wrap(&err, "GroupService.CreateGroup()")
	now := s.db.now()
	err = s.db.write.QueryRowContext(ctx, `INSERT INTO user_groups (name, created_at) VALUES (?, ?) RETURNING id`,
		g.Name, now).Scan(&g.ID)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ECONFLICT {
		return storekit.GroupNameTaken(g.Name)
	} else if err != nil {
		return err
	}
	g.CreatedAt = parseTime(now)
	return nil
}

func findGroup(ctx context.Context, q queryer, id int64) (*mapcommons.UserGroup, error) {
	var g mapcommons.UserGroup
	var created string
	err := q.QueryRowContext(ctx, `SELECT id, name, created_at FROM user_groups WHERE id = ?`, id).Scan(&g.ID, &g.Name, &created)
	if err == sql.ErrNoRows {
		return nil, storekit.GroupNotFound(id)
	} else if err != nil {
		return nil, formatError(err)
	}
	g.CreatedAt = parseTime(created)
	return &g, nil
}

// FindGroupByID implements mapcommons.GroupService.
func (s *GroupService) FindGroupByID(ctx context.Context, id int64) (_ *mapcommons.UserGroup, err error) {
	defer derrors.Wrap(&err, "GroupService.FindGroupByID(%d)", id)
	return findGroup(ctx, s.db.read, id)
}

// FindGroups implements mapcommons.GroupService.
func (s *GroupService) FindGroups(ctx context.Context) (_ []*mapcommons.GroupSummary, err error) {
	defer derrors.Wrap(&err, "GroupService.FindGroups()")
	rows, err := s.db.read.QueryContext(ctx, `SELECT g.id, g.name, g.created_at,
		(SELECT count(*) FROM group_members m WHERE m.group_id = g.id)
		FROM user_groups g ORDER BY lower(g.name), g.id`)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	out := []*mapcommons.GroupSummary{}
	for rows.Next() {
		var g mapcommons.GroupSummary
		var created string
		if err := rows.Scan(&g.ID, &g.Name, &created, &g.Members); err != nil {
			return nil, formatError(err)
		}
		g.CreatedAt = parseTime(created)
		out = append(out, &g)
	}
	return out, formatError(rows.Err())
}

// FindGroupMembers implements mapcommons.GroupService.
func (s *GroupService) FindGroupMembers(ctx context.Context, id int64) (_ []*mapcommons.User, err error) {
	defer derrors.Wrap(&err, "GroupService.FindGroupMembers(%d)", id)
	// One snapshot: the group and its members as of the same moment.
	tx, err := s.db.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, formatError(err)
	}
	defer tx.Rollback()
	if _, err := findGroup(ctx, tx, id); err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+userColumns+` FROM users
		WHERE id IN (SELECT user_id FROM group_members WHERE group_id = ?) ORDER BY login`, id)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	out := []*mapcommons.User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, formatError(rows.Err())
}

// AddGroupMember implements mapcommons.GroupService.
func (s *GroupService) AddGroupMember(ctx context.Context, groupID, userID int64) (err error) {
	defer derrors.Wrap(&err, "GroupService.AddGroupMember(%d, %d)", groupID, userID)
	return s.changeMember(ctx, groupID, userID, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = ?`, userID).Scan(&n); err != nil {
			return formatError(err)
		} else if n == 0 {
			return storekit.UserNotFound(formatError(sql.ErrNoRows), itoa(userID))
		}
		_, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO group_members (group_id, user_id, created_at) VALUES (?, ?, ?)`,
			groupID, userID, s.db.now())
		return formatError(err)
	})
}

// changeMember runs change, a write of user userID's membership of group
// groupID, in a transaction that first finds the group (ENOTFOUND without
// it) and after the change rewrites the entries of the user's maps: what
// the user may see, their private maps' entries may show.
func (s *GroupService) changeMember(ctx context.Context, groupID, userID int64, change func(tx *sql.Tx) error) error {
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	if _, err := findGroup(ctx, tx, groupID); err != nil {
		return err
	}
	if err := change(tx); err != nil {
		return err
	}
	if err := refreshMapDocs(ctx, tx, mapsOwnedBy, userID); err != nil {
		return err
	}
	return formatError(tx.Commit())
}

// RemoveGroupMember implements mapcommons.GroupService.
func (s *GroupService) RemoveGroupMember(ctx context.Context, groupID, userID int64) (err error) {
	defer derrors.Wrap(&err, "GroupService.RemoveGroupMember(%d, %d)", groupID, userID)
	return s.changeMember(ctx, groupID, userID, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ? AND user_id = ?`, groupID, userID)
		if err != nil {
			return formatError(err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d is not a member of group %d", userID, groupID)
		}
		return nil
	})
}

// withoutGroup is the SQL expression of a sharing list (the JSON column
// named) without the entries naming the group given as the parameter.
func withoutGroup(column string) string {
	return `(SELECT json_group_array(json(p.value)) FROM json_each(` + column + `) p
		WHERE json_extract(p.value, '$.group_id') IS NOT ?)`
}

// namesGroup is the SQL condition that a sharing list names the group
// given as the parameter.
func namesGroup(column string) string {
	return `EXISTS (SELECT 1 FROM json_each(` + column + `) p WHERE json_extract(p.value, '$.group_id') = ?)`
}

// DeleteGroup implements mapcommons.GroupService. The sharing lists that
// name the group lose those entries in the same transaction (and the
// search entries follow), so that no object keeps an entry for a group that is
// gone.
func (s *GroupService) DeleteGroup(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "GroupService.DeleteGroup(%d)", id)
	tx, err := s.db.write.BeginTx(ctx, nil)
	if err != nil {
		return formatError(err)
	}
	defer tx.Rollback()
	g := strconv.FormatInt(id, 10)
	// The maps whose search entries may change: those of its members, and
	// those whose sharing list or whose datasets' name it.
	maps, err := mapIDs(ctx, tx, `SELECT id FROM maps WHERE owner_id IN (SELECT user_id FROM group_members WHERE group_id = ?)
		OR `+namesGroup("maps.permissions")+`
		OR id IN (SELECT map_id FROM map_datasets WHERE dataset_id IN (SELECT id FROM datasets d WHERE `+namesGroup("d.permissions")+`))`,
		id, g, g)
	if err != nil {
		return err
	}
	// The datasets whose sharing lists name it: their entries change.
	datasets, err := mapIDs(ctx, tx, `SELECT id FROM datasets d WHERE `+namesGroup("d.permissions"), g)
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM user_groups WHERE id = ?`, id)
	if err != nil {
		return formatError(err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return storekit.GroupNotFound(id)
	}
	for _, table := range []string{"datasets", "maps"} {
		if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET permissions = `+withoutGroup(table+".permissions")+
			` WHERE `+namesGroup(table+".permissions"), g, g); err != nil {
			return formatError(err)
		}
	}
	for _, ds := range datasets {
		if err := writeDatasetDoc(ctx, tx, ds); err != nil {
			return err
		}
	}
	if err := writeMapDocs(ctx, tx, maps); err != nil {
		return err
	}
	err = tx.Commit()
	s.db.forget(0) // cached datasets carry their sharing lists
	return formatError(err)
}
