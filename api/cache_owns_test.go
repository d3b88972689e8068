package api_test

import (
	"bytes"
	"fmt"
	"testing"
)

// TestCachedAnswerKeepsItsBytes: held answers are built in buffers that
// serve again for the next answer; the response cache keeps a copy of its
// own, so a hit after other answers still gives the bytes first sent.
func TestCachedAnswerKeepsItsBytes(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ds := ts.createCSV("?title=pts", string(pointsCSV(300)))
	paths := []string{ds + "/features.json?limit=20", "/ogc/collections/" + ds[len("/datasets/"):] + "/items?limit=20"}
	first := map[string][]byte{}
	for _, p := range paths {
		w := ts.get(p, "")
		must(t, w, 200)
		first[p] = bytes.Clone(w.Body.Bytes())
	}
	// Other answers, of other sizes, through the same buffers.
	for i := range 50 {
		must(t, ts.get(fmt.Sprintf("%s/features.json?limit=%d&start=%d", ds, 1+i%25, i), ""), 200)
	}
	for _, p := range paths {
		w := ts.get(p, "")
		must(t, w, 200)
		if !bytes.Equal(w.Body.Bytes(), first[p]) {
			t.Fatalf("%s: the cached answer changed:\n%.200s\nwas\n%.200s", p, w.Body.Bytes(), first[p])
		}
	}
}
