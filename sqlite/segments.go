package sqlite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	return &segments{dir: dir, open: map[string]*segEntry{}}, nil
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
}
