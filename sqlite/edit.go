package sqlite

// Edits that cost the change, not the dataset.
//
// A dataset's features are a base segment, the dead positions of the base
// (features deleted, or replaced by a newer version) and one delta
// segment: the features added or updated since the base was written (the
// layout, segments.go). A write rewrites only the delta and the dead
// positions, and commits the new layout in the dataset's row; readers see
// the base less the dead plus the delta (segment.View), exactly what a
// compacted segment would answer. Compaction (compact.go) merges them into
// a new base in the background.
//
// Why one delta rewritten by each write rather than one more delta per
// write (size-tiered): a read then merges at most two segments, however
// many writes came before it, so a read costs at most about twice a read of
// the compacted dataset; the price is that a write costs the size of the
// delta, which compaction bounds (compactAt).

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/segment"
)

// change is one write of a dataset's features.
type change struct {
	updates map[int64]*mapcommons.Feature // new versions, by id
	deletes map[int64]bool                // ids
	// adds calls add with each new feature (its ID 0: the next id), and
	// add sets the ID given.
	adds func(add func(*mapcommons.Feature) error) error
}

// edit applies the change plan makes of the dataset's view, under the
// dataset's write lock: the delta is rewritten with the change, the dead
// positions grow by the base features it deletes or updates, and the row
// points at the new layout; the summary follows. Nothing is changed when
// plan or the writing fails. A version above zero is the one the dataset
// must be at (Edits.Version): else the edit fails with
// feature.StaleVersion's error.
func (db *DB) edit(ctx context.Context, id, version int64, plan func(v *segment.View) (*change, error)) error {
	unlock := db.lockFeatures(id)
	defer unlock()
	// The cached row is the row: its layout changes only under this lock,
	// and every change drops it from the cache before the lock is released.
	ds, oldName, err := db.dataset(ctx, id)
	if err != nil {
		return err
	}
	if err := feature.CheckVersion(&mapcommons.Edits{Version: version}, ds.Version); err != nil {
		return err
	}
	v, release, err := db.segs.acquireView(oldName)
	if err != nil {
		return datasetNotFound(err, id)
	}
	defer release()
	c, err := plan(v)
	if err != nil {
		return err
	}
	nl, pending, err := db.writeDelta(ctx, v, parseLayout(oldName), c)
	if err != nil {
		return err
	}
	if err := db.commitLayout(ctx, id, ds, oldName, nl, true); err != nil {
		return err
	}
	db.compactor.changed(id, pending)
	return nil
}

// writeDelta writes the delta of view v after change c, and returns the
// new layout with its dead positions (the delta written, not committed:
// the caller retires it when it does not commit), and the number of
// pending features: those of the delta and the dead positions.
func (db *DB) writeDelta(ctx context.Context, v *segment.View, old layout, c *change) (layout, int, error) {
	nl := layout{base: old.base}
	gone := func(id int64) bool { return c.deletes[id] || c.updates[id] != nil }
	// The dead positions: the old ones, and the base features the change
	// deletes or updates.
	dead := slices.Clone(v.Dead())
	for _, m := range []map[int64]bool{c.deletes, keysOf(c.updates)} {
		for id := range m {
			if p, ok := v.Base().Position(id); ok && !v.IsDead(p) {
				dead = append(dead, int32(p))
			}
		}
	}
	slices.Sort(dead)
	dead = slices.Compact(dead)
	// The delta: the old delta's features less those the change deletes or
	// updates, and the updated versions, in id order; then the adds.
	// A change that adds nothing, updates nothing and deletes no feature of
	// the delta keeps the delta as it is: deletes of base features change
	// only the dead positions, in the row.
	if c.adds == nil && len(c.updates) == 0 && !deletesIn(v.Delta(), c.deletes) {
		nl.delta, nl.dead = old.delta, dead
		n := len(dead)
		if d := v.Delta(); d != nil {
			n += d.Len()
		}
		return nl, n, nil
	}
	w, err := segment.NewWriter(db.segs.dir, v.Attributes())
	if err != nil {
		return nl, 0, err
	}
	w.SetNextID(v.NextID())
	w.SetDelta()
	ups := make([]int64, 0, len(c.updates))
	for id := range c.updates {
		ups = append(ups, id)
	}
	slices.Sort(ups)
	od := v.Delta()
	k, n := 0, 0
	if od != nil {
		n = od.Len()
	}
	for k < n || len(ups) > 0 {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				w.Abort()
				return nl, 0, err
			}
		}
		if k < n && (len(ups) == 0 || od.ID(k) < ups[0]) {
			if id := od.ID(k); !gone(id) {
				if err := w.AddFrom(od, k); err != nil {
					w.Abort()
					return nl, 0, err
				}
			}
			k++
			continue
		}
		u := c.updates[ups[0]]
		if err := w.Add(&mapcommons.Feature{ID: u.ID, Values: u.Values, Geometry: u.Geometry}); err != nil {
			w.Abort()
			return nl, 0, err
		}
		ups = ups[1:]
		if k < n && od.ID(k) == u.ID {
			k++
		}
	}
	// base takes the adds once the delta would outgrow maxDelta: the
	// dataset is then written whole, as a compaction would write it right
	// after, in the writer's bounded memory instead of a delta kept in the
	// catalogue and read into memory.
	var base *segment.Writer
	abort := func() {
		w.Abort()
		if base != nil {
			base.Abort()
		}
	}
	if c.adds != nil {
		added := 0
		err := c.adds(func(f *mapcommons.Feature) error {
			if added++; added%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			to := w
			if base != nil {
				to = base
			}
			f.ID = 0
			if err := to.Add(f); err != nil {
				return err
			}
			f.ID = to.LastID()
			if base == nil && w.Count() >= maxDelta {
				var err error
				base, err = db.promoteDelta(ctx, v, w, dead)
				return err
			}
			return nil
		})
		if err != nil {
			abort()
			return nl, 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		abort()
		return nl, 0, err
	}
	if base != nil {
		name := newSegmentName()
		if _, err := base.Finish(filepath.Join(db.segs.dir, name)); err != nil {
			return nl, 0, err
		}
		return layout{base: name}, 0, nil
	}
	count := w.Count()
	if err := nl.finishDelta(w, v.Base()); err != nil {
		return nl, 0, err
	}
	nl.dead = dead
	return nl, count + len(dead), nil
}

// maxDelta is the most features a write puts in a delta; an edit that adds
// more writes the dataset whole (promoteDelta). A variable for tests.
var maxDelta = 1 << 16

// promoteDelta turns a write whose delta writer w grew to maxDelta into
// a write of the whole dataset: w is finished into a scratch segment, and
// the writer returned holds the live features of v's base (those not in
// dead, sorted) and all w held (v's delta as the change leaves it, the
// updates, the adds so far), merged in id order as a view merges them
// (copyView), ids kept, ready for the rest of the adds (whose ids are
// above them all). w
// is done either way.
func (db *DB) promoteDelta(ctx context.Context, v *segment.View, w *segment.Writer, dead []int32) (*segment.Writer, error) {
	next := w.NextID()
	scratch := filepath.Join(db.segs.dir, "tmp-"+newSegmentName())
	if _, err := w.Finish(scratch); err != nil {
		return nil, err
	}
	defer os.Remove(scratch)
	d, err := segment.Open(scratch)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := segment.NewWriter(db.segs.dir, v.Attributes())
	if err != nil {
		return nil, err
	}
	b.SetNextID(next)
	// The dataset as the change leaves it so far: v's base less dead,
	// merged by id with what w held.
	nv, err := segment.NewView(v.Base(), dead, d)
	if err == nil {
		err = copyView(ctx, b, nv)
	}
	if err != nil {
		b.Abort()
		return nil, err
	}
	return b, nil
}

// finishDelta makes what w wrote the delta of l, on base: none when w
// wrote no feature and no next id above the base's (an empty delta is
// kept when it carries one: ids given once are not given again).
func (l *layout) finishDelta(w *segment.Writer, base *segment.Segment) error {
	if w.Count() == 0 && w.NextID() <= base.NextID() {
		w.Abort()
		return nil
	}
	data, _, err := w.FinishBytes()
	if err != nil {
		return err
	}
	l.delta, l.deltaData = newDeltaName(), data
	return nil
}

// deletesIn reports whether one of the ids deleted is a feature of delta
// d (nil: none).
func deletesIn(d *segment.Segment, deletes map[int64]bool) bool {
	if d == nil {
		return false
	}
	for id := range deletes {
		if _, ok := d.Position(id); ok {
			return true
		}
	}
	return false
}

func keysOf(m map[int64]*mapcommons.Feature) map[int64]bool {
	out := make(map[int64]bool, len(m))
	for id := range m {
		out[id] = true
	}
	return out
}

// commitLayout points dataset id, whose row ds had layout oldName, at
// layout nl (its new delta written in the same transaction), with nl's
// summary; bump counts as a change of the features
// (the version and the time of update move on), else only the version
// moves, and only when the summary changed. The files of nl are retired
// when the row is not changed, those of oldName that nl does not use when
// it is.
func (db *DB) commitLayout(ctx context.Context, id int64, ds *mapcommons.Dataset, oldName string, nl layout, bump bool) error {
	newName := nl.String()
	fail := func(err error) error {
		db.segs.retireLayout(newName, oldName)
		return err
	}
	v, release, err := db.segs.acquireViewData(newName, nl.deltaData)
	if err != nil {
		return fail(err)
	}
	sum, err := viewSummary(ctx, v)
	release()
	if err != nil {
		return fail(err)
	}
	before := summaryJSON(ds)
	sum.Apply(ds)
	if !bump && summaryJSON(ds) == before && newName == oldName {
		return nil
	}
	statsJSON, err := json.Marshal(ds.Stats)
	if err != nil {
		return fail(err)
	}
	var ext [4]any
	if e := ds.Extent; e != nil {
		ext = [4]any{e.MinX, e.MinY, e.MaxX, e.MaxY}
	}
	changes, args := `version = version + 1, updated_at = ?`, []any{db.now()}
	if !bump {
		changes, args = `version = version`, nil
		if summaryJSON(ds) != before {
			changes = `version = version + 1`
		}
	}
	args = append([]any{ds.FeatureCount, ext[0], ext[1], ext[2], ext[3], strings.Join(ds.GeometryTypes, ","), ds.GeometryMask,
		string(statsJSON), newName}, args...)
	if err := db.swapThen(ctx, id, func(tx *sql.Tx) (sql.Result, error) {
		// The new delta is committed with the row that names it, and the
		// old one goes with the row that named it.
		if nl.deltaData != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO segment_deltas (name, data) VALUES (?, ?)`, nl.delta, nl.deltaData); err != nil {
				return nil, err
			}
		}
		if old := parseLayout(oldName).delta; old != "" && old != nl.delta {
			if _, err := tx.ExecContext(ctx, `DELETE FROM segment_deltas WHERE name = ?`, old); err != nil {
				return nil, err
			}
		}
		return tx.ExecContext(ctx, `UPDATE datasets SET feature_count = ?, minx = ?, miny = ?, maxx = ?, maxy = ?,
		geometry_types = ?, geometry_mask = ?, stats = ?, segment = ?, `+changes+` WHERE id = ? AND segment = ?`,
			append(args, id, oldName)...)
	}, featuresChanged); err != nil {
		return fail(err)
	}
	db.segs.retireLayout(oldName, newName)
	return nil
}

// summaryJSON is the summary part of a dataset row, to compare.
func summaryJSON(ds *mapcommons.Dataset) string {
	b, _ := json.Marshal([]any{ds.FeatureCount, ds.Extent, ds.GeometryTypes, ds.GeometryMask, ds.Stats})
	return string(b)
}

// exactSummaryMax is the number of features up to which a write computes
// the summary of a view with deltas exactly, in one pass over its
// features (a few milliseconds at most). Above it, a write extends the
// old summary with the delta's (see viewSummary), and the compaction that
// follows makes it exact.
var exactSummaryMax = mapcommons.ExactSummaryMax

// viewSummary is the summary of view v: exact (the summary a compacted
// segment of the same features has) when v has no pending change or at
// most exactSummaryMax features. Above that, the count is exact, and the
// extent, the geometry kinds and the statistics' minima and maxima are
// those of the base extended by the delta's features: they may still
// cover deleted features, and the means, deviations and medians are the
// base's, until the compaction that follows the write.
func viewSummary(ctx context.Context, v *segment.View) (*mapcommons.Summary, error) {
	if !v.Pending() {
		sum := v.Base().Summary()
		return &sum, nil
	}
	if v.Len() <= exactSummaryMax {
		b := mapcommons.NewSummaryBuilder(v.Attributes(), true)
		f := &mapcommons.Feature{}
		n := 0
		var err error
		v.Each(func(s *segment.Segment, p int) bool {
			if n%4096 == 0 {
				if err = ctx.Err(); err != nil {
					return false
				}
			}
			s.Read(p, f)
			_, _, err = feature.CheckFeature(b, n, f)
			n++
			return err == nil
		})
		if err != nil {
			return nil, err
		}
		return b.Summary(nil)
	}
	base := v.Base().Summary()
	if d := v.Delta(); d != nil && d.Len() > 0 {
		dsum := d.Summary()
		return mapcommons.ExtendSummary(&base, &dsum, int64(v.Len())), nil
	}
	return mapcommons.ExtendSummary(&base, nil, int64(v.Len())), nil
}
