package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"mapcommons/segment"
)

// Two readers open the same layout at once (the first requests after a
// start): the second to finish finds the first's view shared, gives back
// the segment it opened, and takes the shared view. It used to give the
// segment back holding the lock that giving back takes, and every later
// reader of any dataset waited for ever.
func TestViewOpenedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	w, err := segment.NewWriter(dir, matchAttrs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if err := w.Add(matchRow(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(filepath.Join(dir, "ds-a")); err != nil {
		t.Fatal(err)
	}
	c, err := newSegments(dir)
	if err != nil {
		t.Fatal(err)
	}

	var inner func()
	viewOpenedHook = func(c *segments, name string) {
		if inner != nil {
			return
		}
		inner = func() {} // the nested call below does not recurse
		_, release, err := c.acquireView(name)
		if err != nil {
			t.Error(err)
			return
		}
		inner = release
	}
	t.Cleanup(func() { viewOpenedHook = nil })

	done := make(chan struct{})
	var outerRelease func()
	go func() {
		defer close(done)
		v, release, err := c.acquireView("ds-a")
		if err != nil {
			t.Error(err)
			return
		}
		outerRelease = release
		if v.Len() != 8 {
			t.Errorf("view of %d features; want 8", v.Len())
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // a deadlock, not a slow machine
		t.Fatal("acquireView did not return: the lock was taken twice")
	}
	if t.Failed() {
		return
	}
	c.mu.Lock()
	e := c.views["ds-a"]
	refs, segRefs := e.refs, c.open["ds-a"].refs
	c.mu.Unlock()
	if refs != 2 || segRefs != 1 {
		t.Fatalf("view refs %d, segment refs %d; want 2 and 1 (one view, its segment held once)", refs, segRefs)
	}
	outerRelease()
	inner()
	if e.refs != 0 {
		t.Fatalf("view refs %d after both released", e.refs)
	}
	c.closeAll()
}
