package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/derrors"
	"mapcommons/internal/storekit"
)

// GroupService implements mapcommons.GroupService on the store.
type GroupService struct{ db *DB }

var _ mapcommons.GroupService = (*GroupService)(nil)

// CreateGroup implements mapcommons.GroupService.
func (s *GroupService) CreateGroup(ctx context.Context, g *mapcommons.UserGroup) (err error) {
	defer derrors.Wrap(&err, "GroupService.CreateGroup()")
	now := s.db.now()
	err = s.db.pool.QueryRow(ctx, `INSERT INTO user_groups (name, created_at) VALUES ($1, $2) RETURNING id`, g.Name, now).Scan(&g.ID)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ECONFLICT {
		return storekit.GroupNameTaken(g.Name)
	} else if err != nil {
		return err
	}
	g.CreatedAt = now
	return nil
}

// findGroup reads a group through q (the pool or a transaction).
func findGroup(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, id int64) (*mapcommons.UserGroup, error) {
	var g mapcommons.UserGroup
	err := q.QueryRow(ctx, `SELECT id, name, created_at FROM user_groups WHERE id = $1`, id).Scan(&g.ID, &g.Name, &g.CreatedAt)
	if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, storekit.GroupNotFound(id)
	} else if err != nil {
		return nil, err
	}
	g.CreatedAt = utc(g.CreatedAt)
	return &g, nil
}

// FindGroupByID implements mapcommons.GroupService.
func (s *GroupService) FindGroupByID(ctx context.Context, id int64) (_ *mapcommons.UserGroup, err error) {
	defer derrors.Wrap(&err, "GroupService.FindGroupByID(%d)", id)
	return findGroup(ctx, s.db.pool, id)
}

// FindGroups implements mapcommons.GroupService: ordered by name folded
// as SQLite folds it (ASCII only), then by id.
func (s *GroupService) FindGroups(ctx context.Context) (_ []*mapcommons.GroupSummary, err error) {
	defer derrors.Wrap(&err, "GroupService.FindGroups()")
	rows, err := s.db.pool.Query(ctx, `SELECT g.id, g.name, g.created_at,
		(SELECT count(*) FROM group_members m WHERE m.group_id = g.id)
		FROM user_groups g ORDER BY lower(g.name COLLATE "C"), g.id`)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	out := []*mapcommons.GroupSummary{}
	for rows.Next() {
		var g mapcommons.GroupSummary
		if err := rows.Scan(&g.ID, &g.Name, &g.CreatedAt, &g.Members); err != nil {
			return nil, formatError(err)
		}
		g.CreatedAt = utc(g.CreatedAt)
		out = append(out, &g)
	}
	return out, formatError(rows.Err())
}

// FindGroupMembers implements mapcommons.GroupService.
func (s *GroupService) FindGroupMembers(ctx context.Context, id int64) (_ []*mapcommons.User, err error) {
	defer derrors.Wrap(&err, "GroupService.FindGroupMembers(%d)", id)
	// One snapshot: the group and its members as of the same moment.
	tx, err := s.db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, formatError(err)
	}
	defer tx.Rollback(ctx)
	if _, err := findGroup(ctx, tx, id); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT `+userColumns+` FROM users
		WHERE id IN (SELECT user_id FROM group_members WHERE group_id = $1) ORDER BY `+loginKey+`, id`, id)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	out := []*mapcommons.User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, formatError(err)
		}
		out = append(out, u)
	}
	return out, formatError(rows.Err())
}

// AddGroupMember implements mapcommons.GroupService.
func (s *GroupService) AddGroupMember(ctx context.Context, groupID, userID int64) (err error) {
	defer derrors.Wrap(&err, "GroupService.AddGroupMember(%d, %d)", groupID, userID)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		// FOR KEY SHARE: neither may go before the membership is stored.
		var n int
		err := tx.QueryRow(ctx, `SELECT 1 FROM user_groups WHERE id = $1 FOR KEY SHARE`, groupID).Scan(&n)
		if err = formatError(err); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			return storekit.GroupNotFound(groupID)
		} else if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `SELECT 1 FROM users WHERE id = $1 FOR KEY SHARE`, userID).Scan(&n)
		if err = formatError(err); err != nil {
			return storekit.UserNotFound(err, strconv.FormatInt(userID, 10))
		}
		_, err = tx.Exec(ctx, `INSERT INTO group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (group_id, user_id) DO NOTHING`, groupID, userID, s.db.now())
		if err != nil {
			return formatError(err)
		}
		// What the user may see, their private maps' entries may show.
		return refreshMapDocs(ctx, tx, mapsOwnedBy, userID)
	})
}

// RemoveGroupMember implements mapcommons.GroupService.
func (s *GroupService) RemoveGroupMember(ctx context.Context, groupID, userID int64) (err error) {
	defer derrors.Wrap(&err, "GroupService.RemoveGroupMember(%d, %d)", groupID, userID)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		if _, err := findGroup(ctx, tx, groupID); err != nil {
			return err
		}
		n, err := affected(tx.Exec(ctx, `DELETE FROM group_members WHERE group_id = $1 AND user_id = $2`, groupID, userID))
		if err != nil {
			return err
		}
		if n == 0 {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d is not a member of group %d", userID, groupID)
		}
		return refreshMapDocs(ctx, tx, mapsOwnedBy, userID)
	})
}

// withoutGroup is the SQL expression of the sharing list in the column
// permissions without the entries naming the group given as parameter $1,
// in their order.
const withoutGroup = `(SELECT coalesce(jsonb_agg(p ORDER BY i), '[]'::jsonb)
	FROM jsonb_array_elements(permissions) WITH ORDINALITY AS e(p, i) WHERE p->>'group_id' IS DISTINCT FROM $1)`

// namesGroup is the SQL condition that the sharing list in the column
// permissions names the group given as parameter $1 (a containment test
// that a GIN index could serve).
const namesGroup = `permissions @> jsonb_build_array(jsonb_build_object('group_id', $1::text))`

// DeleteGroup implements mapcommons.GroupService. The sharing lists that
// name the group lose those entries in the same transaction, so that no
// object keeps an entry for a group that is gone.
func (s *GroupService) DeleteGroup(ctx context.Context, id int64) (err error) {
	defer derrors.Wrap(&err, "GroupService.DeleteGroup(%d)", id)
	return s.db.tx(ctx, func(tx pgx.Tx) error {
		g := strconv.FormatInt(id, 10)
		// The search entries that may change: those of the datasets whose
		// sharing lists name it, and of the maps of its members, whose
		// sharing list names it or that show one of those datasets.
		datasets, err := selectIDs(ctx, tx, `SELECT id FROM datasets WHERE `+namesGroup, g)
		if err != nil {
			return err
		}
		members, err := selectIDs(ctx, tx, `SELECT user_id FROM group_members WHERE group_id = $1`, id)
		if err != nil {
			return err
		}
		n, err := affected(tx.Exec(ctx, `DELETE FROM user_groups WHERE id = $1`, id))
		if err != nil {
			return err
		}
		if n == 0 {
			return storekit.GroupNotFound(id)
		}
		// The datasets' rows, then the lock of maps' entries, then the
		// maps' rows (lockMapDocs says why in this order).
		if _, err := tx.Exec(ctx, `UPDATE datasets SET permissions = `+withoutGroup+` WHERE `+namesGroup, g); err != nil {
			return formatError(err)
		}
		if err := lockMapDocs(ctx, tx); err != nil {
			return err
		}
		maps, err := selectIDs(ctx, tx, `SELECT id FROM maps WHERE `+namesGroup+`
			OR owner_id = ANY($2) OR id IN (SELECT map_id FROM search_map_datasets WHERE dataset_id = ANY($3))`, g, members, datasets)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE maps SET permissions = `+withoutGroup+` WHERE `+namesGroup, g); err != nil {
			return formatError(err)
		}
		for _, ds := range datasets {
			if err := writeDatasetDoc(ctx, tx, ds); err != nil {
				return err
			}
		}
		return writeMapDocs(ctx, tx, maps)
	})
}
