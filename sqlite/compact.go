package sqlite

// Compaction merges a dataset's base, dead positions and delta (edit.go)
// into a new base segment, in the background.
//
// It writes the new base from the view it found, without any lock: readers
// and writers go on meanwhile. Then, under the dataset's write lock, it
// carries over what writes changed since (a new, small delta and dead
// positions against the new base: reconcile) and points the row at the
// new layout in one update. A kill at any point leaves the row on the old
// layout or the new, both complete; files no row names are removed at the
// next start (collectSegments).

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"mapcommons"
	"mapcommons/segment"
)

// The compaction policy: a write that leaves compactAt pending features
// (delta features and dead positions) or more asks for a compaction at
// once; fewer are compacted when the dataset's last write is the
// compactor's idle old (10 s unless SetCompactAfter says otherwise). Each
// write rewrites the delta, so compactAt bounds its cost.
var compactAt = 2048

// compactHook, when set (tests), is called by a compaction between the
// writing of the new base and the taking of the dataset's lock.
var compactHook func(id int64)

// compactor runs the compactions of a store, one at a time.
type compactor struct {
	db     *DB
	mu     sync.Mutex
	due    map[int64]time.Time
	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	idle   time.Duration
	log    *slog.Logger
	// Off stops background compactions (tests and benchmarks call Compact).
	off bool
}

func (c *compactor) start(db *DB) {
	c.db, c.due, c.wake, c.done = db, map[int64]time.Time{}, make(chan struct{}, 1), make(chan struct{})
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.idle = 10 * time.Second
	c.log = slog.Default()
	go c.run()
}

// stop ends the compactions: a running one is abandoned (its files are
// removed at the next start, or when it notices).
func (c *compactor) stop() {
	if c.cancel == nil {
		return
	}
	c.cancel()
	<-c.done
}

// changed notes a write of dataset id that left pending features.
func (c *compactor) changed(id int64, pending int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.due == nil {
		return
	}
	if pending == 0 {
		delete(c.due, id)
		return
	}
	at := time.Now().Add(c.idle)
	if pending >= compactAt {
		at = time.Time{} // at once
	}
	c.due[id] = at
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *compactor) logger() *slog.Logger {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log
}

func (c *compactor) run() {
	defer close(c.done)
	lowerPriority()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		c.mu.Lock()
		var next time.Time
		var ready []int64
		now := time.Now()
		if !c.off {
			for id, at := range c.due {
				if !at.After(now) {
					ready = append(ready, id)
				} else if next.IsZero() || at.Before(next) {
					next = at
				}
			}
		}
		for _, id := range ready {
			delete(c.due, id)
		}
		c.mu.Unlock()
		slices.Sort(ready)
		for _, id := range ready {
			t := time.Now()
			if done, err := c.db.compact(c.ctx, id); err != nil && c.ctx.Err() == nil {
				c.logger().Warn("compaction failed", "dataset", id, "err", err)
				c.changed(id, 1) // again later
			} else if done {
				c.logger().Info("dataset compacted", "dataset", id, "seconds", time.Since(t).Seconds())
			}
		}
		if len(ready) > 0 {
			continue
		}
		wait := time.Hour
		if !next.IsZero() {
			wait = max(next.Sub(now), time.Millisecond)
		}
		timer.Reset(wait)
		select {
		case <-c.ctx.Done():
			return
		case <-c.wake:
		case <-timer.C:
		}
	}
}

// Compact merges dataset id's pending changes into a new base segment; it
// does nothing when there are none.
func (db *DB) Compact(ctx context.Context, id int64) error {
	_, err := db.compact(ctx, id)
	return err
}

// compact is Compact, and reports whether it wrote a new base.
func (db *DB) compact(ctx context.Context, id int64) (bool, error) {
	_, name, err := findDatasetRow(ctx, db.read, id)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return false, nil
	} else if err != nil {
		return false, err
	}
	l0 := parseLayout(name)
	if !l0.pending() {
		return false, nil
	}
	v0, release0, err := db.segs.acquireView(name)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return false, nil // replaced meanwhile
	} else if err != nil {
		return false, err
	}
	defer release0()
	base, err := db.writeBase(ctx, v0)
	if err != nil {
		return false, err
	}
	if compactHook != nil {
		compactHook(id)
	}
	unlock := db.lockFeatures(id)
	defer unlock()
	ds, name1, err := findDatasetRow(ctx, db.write, id)
	if err != nil {
		db.segs.retire(base)
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			return false, nil
		}
		return false, err
	}
	nl := layout{base: base}
	if name1 != name {
		if parseLayout(name1).base != l0.base { // replaced: nothing to merge into
			db.segs.retire(base)
			return false, nil
		}
		v1, release1, err := db.segs.acquireView(name1)
		if err != nil {
			db.segs.retire(base)
			return false, err
		}
		defer release1()
		if nl, err = db.reconcile(ctx, v0, v1, base); err != nil {
			db.segs.retire(base)
			return false, err
		}
	}
	if err := db.commitLayout(ctx, id, ds, name1, nl, false); err != nil {
		return false, err
	}
	pending := 0
	if nl.pending() {
		pending = 1
	}
	db.compactor.changed(id, pending)
	return true, nil
}

// writeBase writes the live features of v, ids kept, to a new segment and
// returns its name.
func (db *DB) writeBase(ctx context.Context, v *segment.View) (string, error) {
	w, err := segment.NewWriter(db.segs.dir, v.Attributes())
	if err != nil {
		return "", err
	}
	w.SetNextID(v.NextID())
	if err := copyView(ctx, w, v); err != nil {
		w.Abort()
		return "", err
	}
	name := newSegmentName()
	if _, err := w.Finish(filepath.Join(db.segs.dir, name)); err != nil {
		return "", err
	}
	return name, nil
}

// copyView adds the live features of v to w, in id order, ids kept.
func copyView(ctx context.Context, w *segment.Writer, v *segment.View) (err error) {
	n := 0
	v.Each(func(s *segment.Segment, p int) bool {
		if n++; n%4096 == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		err = w.AddFrom(s, p)
		return err == nil
	})
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// reconcile returns the layout on base (written from view v0) that holds
// what view v1, a later view on the same base segment as v0, holds: the
// features v1 no longer has as v0 had them are dead in the new base, and
// those v1 has that v0 had not are its delta.
func (db *DB) reconcile(ctx context.Context, v0, v1 *segment.View, base string) (layout, error) {
	nl := layout{base: base}
	nb, release, err := db.segs.acquire(base)
	if err != nil {
		return nl, err
	}
	defer release()
	var gone []int64
	// Base features deleted or updated since.
	for _, p := range v1.Dead() {
		if !v0.IsDead(int(p)) {
			gone = append(gone, v0.Base().ID(int(p)))
		}
	}
	d0, d1 := v0.Delta(), v1.Delta()
	// same reports whether delta feature k of a has the same id and
	// content in b.
	same := func(a *segment.Segment, k int, b *segment.Segment) bool {
		if b == nil {
			return false
		}
		j, ok := b.Position(a.ID(k))
		return ok && sameFeature(a, k, b, j)
	}
	if d0 != nil {
		for k := 0; k < d0.Len(); k++ {
			if !same(d0, k, d1) {
				gone = append(gone, d0.ID(k))
			}
		}
	}
	var dead []int32
	for _, id := range gone {
		if p, ok := nb.Position(id); ok {
			dead = append(dead, int32(p))
		}
	}
	slices.Sort(dead)
	dead = slices.Compact(dead)
	w, err := segment.NewWriter(db.segs.dir, v1.Attributes())
	if err != nil {
		return nl, err
	}
	w.SetNextID(v1.NextID())
	w.SetDelta()
	if d1 != nil {
		for k := 0; k < d1.Len(); k++ {
			if same(d1, k, d0) {
				continue
			}
			if err := w.AddFrom(d1, k); err != nil {
				w.Abort()
				return nl, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		w.Abort()
		return nl, err
	}
	if err := nl.finishDelta(w, nb); err != nil {
		return nl, err
	}
	nl.dead = dead
	return nl, nil
}

// sameFeature reports whether feature i of a and feature j of b have the
// same values (floats bit for bit) and geometry.
func sameFeature(a *segment.Segment, i int, b *segment.Segment, j int) bool {
	if !bytes.Equal(a.Geometry(i), b.Geometry(j)) {
		return false
	}
	for col := range a.Attributes() {
		x, y := a.Value(col, i), b.Value(col, j)
		if fx, ok := x.(float64); ok {
			fy, ok := y.(float64)
			if !ok || math.Float64bits(fx) != math.Float64bits(fy) {
				return false
			}
			continue
		}
		if x != y {
			return false
		}
	}
	return true
}
