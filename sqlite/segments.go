package sqlite

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"mapcommons"
	"mapcommons/segment"
)

// segments keeps the open segment files of the store, each shared by the
// readers that use it, and removes those no dataset references any more.
type segments struct {
	dir  string
	mu   sync.Mutex
	open map[string]*segEntry
	// views are the open layouts (a dataset's base, delta and dead
	// positions, as its row names them), by their names.
	views map[string]*viewEntry
	// loadDelta reads a committed delta segment from the catalogue.
	loadDelta func(name string) ([]byte, error)
}

type segEntry struct {
	seg  *segment.Segment
	refs int
	dead bool // the file is gone: unmap when the last reader leaves
}

func newSegments(dir string) (*segments, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	return &segments{dir: dir, open: map[string]*segEntry{}, views: map[string]*viewEntry{}}, nil
}

// newSegmentName returns a fresh, unguessable segment file name.
func newSegmentName() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "ds-" + hex.EncodeToString(b) + ".seg"
}

// write streams src into a new segment file and returns its name. The
// features get fresh ids, from next on (from 1 when next is 0), but those
// to which match (when not nil) gives an old id.
func (c *segments) write(ctx context.Context, attrs []mapcommons.Attribute, src mapcommons.FeatureSource, next int64, match *idMatcher) (string, *segment.Summary, error) {
	w, err := segment.NewWriter(c.dir, attrs)
	if err != nil {
		return "", nil, err
	}
	w.SetNextID(next)
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				w.Abort()
				return "", nil, err
			}
		}
		f, err := src.Next()
		if errors.Is(err, mapcommons.EOF) {
			break
		} else if err != nil {
			w.Abort()
			return "", nil, err
		}
		f.ID = 0 // the store gives the ids, whatever the source says
		if match != nil {
			f.ID = match.id(f, w.LastID())
		}
		if err := w.Add(f); err != nil {
			w.Abort()
			return "", nil, err
		}
	}
	name := newSegmentName()
	sum, err := w.Finish(filepath.Join(c.dir, name))
	if err != nil {
		return "", nil, err
	}
	return name, sum, nil
}

// acquire opens (or shares) a segment; release must be called when done.
func (c *segments) acquire(name string) (*segment.Segment, func(), error) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "no features")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.open[name]
	if !ok {
		seg, err := segment.Open(filepath.Join(c.dir, name))
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset not found")
		} else if err != nil {
			return nil, nil, err
		}
		e = &segEntry{seg: seg}
		c.open[name] = e
	}
	e.refs++
	return e.seg, func() { c.release(name, e) }, nil
}

func (c *segments) release(name string, e *segEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refs--
	if e.refs == 0 && e.dead {
		e.seg.Close()
		if c.open[name] == e {
			delete(c.open, name)
		}
	}
}

// retire removes a segment no dataset references any more. Readers that
// have it keep reading; it is unmapped when the last one leaves.
func (c *segments) retire(name string) {
	if name == "" {
		return
	}
	os.Remove(filepath.Join(c.dir, name))
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.open[name]; ok {
		e.dead = true
		delete(c.open, name)
		if e.refs == 0 {
			e.seg.Close()
		}
	}
}

// collect removes every file in the directory that is not a segment in
// use: spooled parts and half-written segments of an interrupted write,
// and segments whose dataset row never committed.
func (c *segments) collect(inUse map[string]bool) error {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !inUse[e.Name()] {
			if err := os.Remove(filepath.Join(c.dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// closeAll unmaps every open segment.
func (c *segments) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, e := range c.open {
		e.seg.Close()
		delete(c.open, name)
	}
	clear(c.views)
}

// A dataset's features are its layout, which the segment column of its
// row holds, its parts separated by spaces: the base segment's file, then,
// between compactions, the name of the delta segment (features added or
// updated since the base was written, "dl-…", kept in the table
// segment_deltas) and the dead positions of the base ("dead:" and the
// positions, ascending, as uvarint gaps in base64url). The delta and the
// dead positions are in the catalogue, not in files, so that an edit costs
// one synced commit.
type layout struct {
	base, delta string
	dead        []int32
	bad         bool // the dead positions do not decode
	// deltaData is the delta's segment when it is new (written by this
	// change, to be committed with it); nil when it is in the catalogue.
	deltaData []byte
}

const deadPrefix = "dead:"

func parseLayout(s string) layout {
	var l layout
	for i, f := range strings.Fields(s) {
		switch {
		case i == 0:
			l.base = f
		case strings.HasPrefix(f, deadPrefix):
			l.dead, l.bad = decodeDead(f[len(deadPrefix):])
		default:
			l.delta = f
		}
	}
	return l
}

func (l layout) String() string {
	s := l.base
	if l.delta != "" {
		s += " " + l.delta
	}
	if len(l.dead) > 0 {
		s += " " + deadPrefix + encodeDead(l.dead)
	}
	return s
}

// pending reports whether the layout has a delta or dead positions.
func (l layout) pending() bool { return l.delta != "" || len(l.dead) > 0 }

// files are the layout's file names: its base's.
func (l layout) files() []string { return []string{l.base} }

// encodeDead encodes ascending positions.
func encodeDead(dead []int32) string {
	b := make([]byte, 0, 2*len(dead))
	last := int32(-1)
	for _, p := range dead {
		b = binary.AppendUvarint(b, uint64(p-last))
		last = p
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeDead decodes what encodeDead encoded; bad when it cannot.
func decodeDead(s string) (dead []int32, bad bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, true
	}
	last := int64(-1)
	for len(b) > 0 {
		gap, n := binary.Uvarint(b)
		if n <= 0 || gap == 0 || last+int64(gap) > math.MaxInt32 {
			return nil, true
		}
		last += int64(gap)
		dead = append(dead, int32(last))
		b = b[n:]
	}
	return dead, false
}

// newDeltaName returns a fresh name of a delta segment.
func newDeltaName() string { return "dl-" + strings.TrimPrefix(newSegmentName(), "ds-") }

// viewEntry is an open layout, shared by the readers that use it.
type viewEntry struct {
	view    *segment.View
	release func() // releases the segments the view holds
	refs    int
	dead    bool
}

// acquireView opens (or shares) the view of a layout; release must be
// called when done.
func (c *segments) acquireView(name string) (*segment.View, func(), error) {
	return c.acquireViewData(name, nil)
}

// acquireViewData is acquireView of a layout whose delta, not committed
// yet, is data (nil: read it from the catalogue).
func (c *segments) acquireViewData(name string, data []byte) (*segment.View, func(), error) {
	c.mu.Lock()
	if e, ok := c.views[name]; ok {
		e.refs++
		c.mu.Unlock()
		return e.view, func() { c.releaseView(name, e) }, nil
	}
	c.mu.Unlock()
	l := parseLayout(name)
	if l.bad {
		return nil, nil, fmt.Errorf("the dead positions of layout %.40q… are corrupt", name)
	}
	base, release, err := c.acquire(l.base)
	if err != nil {
		return nil, nil, err
	}
	var delta *segment.Segment
	if l.delta != "" {
		if data == nil {
			if data, err = c.loadDelta(l.delta); err != nil {
				release()
				return nil, nil, err
			}
		}
		if delta, err = segment.FromBytes(l.delta, data); err != nil {
			release()
			return nil, nil, err
		}
	}
	v, err := segment.NewView(base, l.dead, delta)
	if err != nil {
		release()
		return nil, nil, err
	}
	if viewOpenedHook != nil {
		viewOpenedHook(c, name)
	}
	c.mu.Lock()
	if e, ok := c.views[name]; ok { // opened meanwhile by another reader
		e.refs++
		c.mu.Unlock()
		release() // after the unlock: it takes c.mu
		return e.view, func() { c.releaseView(name, e) }, nil
	}
	e := &viewEntry{view: v, release: release, refs: 1}
	c.views[name] = e
	c.mu.Unlock()
	return v, func() { c.releaseView(name, e) }, nil
}

// viewOpenedHook, when set (by tests), is called by acquireViewData
// between opening a view and sharing it.
var viewOpenedHook func(c *segments, name string)

func (c *segments) releaseView(name string, e *viewEntry) {
	c.mu.Lock()
	e.refs--
	done := e.refs == 0 && e.dead
	c.mu.Unlock()
	if done {
		e.release()
	}
}

// retireLayout removes the files of layout old that layout now (the
// dataset's new one; "" when it is deleted) does not use. Readers that have
// the old view keep reading it.
func (c *segments) retireLayout(old, now string) {
	keep := map[string]bool{}
	for _, n := range parseLayout(now).files() {
		keep[n] = true
	}
	c.mu.Lock()
	e, ok := c.views[old]
	if ok {
		e.dead = true
		delete(c.views, old)
	}
	done := ok && e.refs == 0
	c.mu.Unlock()
	if done {
		e.release()
	}
	for _, n := range parseLayout(old).files() {
		if !keep[n] {
			c.retire(n)
		}
	}
}
