package postgres

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/segment"
)

// ApplyEdits implements mapcommons.FeatureService: a new generation, in
// one transaction under the dataset's write lock, holds the features
// left untouched (copied in PostgreSQL, renumbered past the deleted ones),
// the updated ones in their places with their ids (a partial update
// merged with its row, read first), then the added ones
// with the next ids; it is swapped in as any rewrite is.
func (s *FeatureService) ApplyEdits(ctx context.Context, datasetID int64, e *mapcommons.Edits) (*mapcommons.EditResult, error) {
	res := &mapcommons.EditResult{}
	err := s.rewrite(ctx, datasetID, func(old *datasetRow, g *generation) error {
		// Partial updates are merged with the rows as the lock holds them.
		cur, err := patchedRows(ctx, g.tx, old, e)
		if err != nil {
			return err
		}
		e, err := segment.MergePatches(e, len(old.Attributes), func(id int64) (*mapcommons.Feature, bool, error) {
			f, ok := cur[id]
			return f, ok, nil
		})
		if err != nil {
			return err
		}
		if err := segment.CheckEdits(old.Attributes, e); err != nil {
			return err
		}
		// The positions of the ids named (the lock keeps them as they are).
		named := make([]int64, 0, len(e.Updates)+len(e.Deletes))
		for i := range e.Updates {
			named = append(named, e.Updates[i].ID)
		}
		named = append(named, e.Deletes...)
		posOf := make(map[int64]int64, len(named))
		if len(named) > 0 {
			rows, err := g.tx.Query(ctx, `SELECT fid, pos FROM `+ident(old.table)+` WHERE fid = ANY($1)`, named)
			if err != nil {
				return formatError(err)
			}
			for rows.Next() {
				var fid, pos int64
				if err := rows.Scan(&fid, &pos); err != nil {
					rows.Close()
					return formatError(err)
				}
				posOf[fid] = pos
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return formatError(err)
			}
		}
		updated := make([]int64, len(e.Updates)) // old positions, by update
		for i := range e.Updates {
			pos, ok := posOf[e.Updates[i].ID]
			if !ok {
				return segment.MissingFeature("updates", i, e.Updates[i].ID)
			}
			updated[i] = pos
		}
		gone := make([]int64, len(e.Deletes))
		for i, id := range e.Deletes {
			pos, ok := posOf[id]
			if !ok {
				return segment.MissingFeature("deletes", i, id)
			}
			gone[i] = pos
		}
		left := old.FeatureCount - int64(len(gone))
		if n := left + segment.NumAdds(e); e.MaxFeatures > 0 && n > e.MaxFeatures {
			return segment.TooManyFeatures(e.MaxFeatures)
		}
		slices.Sort(gone)
		// The untouched rows, renumbered past the deleted ones.
		cols := strings.Join(g.columns()[1:], ", ")
		if _, err := g.tx.Exec(ctx, `INSERT INTO `+ident(g.table)+` (pos, `+cols+`)
			SELECT t.np, `+cols+` FROM (SELECT row_number() OVER (ORDER BY pos) - 1 AS np, `+cols+`, pos
				FROM `+ident(old.table)+` WHERE pos <> ALL($1)) t WHERE t.pos <> ALL($2)`, gone, updated); err != nil {
			return formatError(err)
		}
		// The updated rows in their places, moved down past the deleted.
		if len(e.Updates) > 0 {
			scratch := mapcommons.NewSummaryBuilder(old.Attributes, false) // checked already: for the boxes
			buf := append([]byte(nil), copyHeader...)
			for i := range e.Updates {
				u := &e.Updates[i]
				r, ok, err := segment.CheckFeature(scratch, i, u)
				if err != nil {
					return err
				}
				before, _ := slices.BinarySearch(gone, updated[i])
				if buf, _, err = encodeRow(buf, updated[i]-int64(before), u.ID, u, r, ok); err != nil {
					return err
				}
			}
			buf = append(buf, 0xff, 0xff)
			sql := `COPY ` + ident(g.table) + ` (` + strings.Join(g.columns(), ", ") + `) FROM STDIN (FORMAT binary)`
			if _, err := g.tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(buf), sql); err != nil {
				return formatError(err)
			}
		}
		if err := g.summarize(ctx); err != nil {
			return err
		}
		first := g.nextID
		if err := g.copyFrom(ctx, segment.AddsOf(old.Attributes, e), nil); err != nil {
			return err
		}
		for i := range segment.NumAdds(e) {
			res.AddIDs = append(res.AddIDs, first+i)
		}
		res.FeatureCount = g.n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// patchedRows reads the features the partial updates of e name (those
// with a patch), by id: what MergePatches merges them with.
func patchedRows(ctx context.Context, tx pgx.Tx, old *datasetRow, e *mapcommons.Edits) (map[int64]*mapcommons.Feature, error) {
	var ids []int64
	for i, p := range e.Patches {
		if p != nil && i < len(e.Updates) {
			ids = append(ids, e.Updates[i].ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	sel := "fid, geom"
	for i := range old.Attributes {
		sel += ", " + attrColumn(i)
	}
	rows, err := tx.Query(ctx, `SELECT `+sel+` FROM `+ident(old.table)+` WHERE fid = ANY($1)`, ids)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	out := make(map[int64]*mapcommons.Feature, len(ids))
	rr := newRowReader(rows)
	for rows.Next() {
		vals, err := rr.values()
		if err != nil {
			return nil, formatError(err)
		}
		f := &mapcommons.Feature{ID: vals[0].(int64), Values: featureValues(vals[2:], nil)}
		if g, ok := vals[1].([]byte); ok {
			f.Geometry = bytes.Clone(g) // the row's bytes go with the next row
		}
		out[f.ID] = f
	}
	return out, formatError(rows.Err())
}
