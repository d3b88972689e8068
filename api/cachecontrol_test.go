package api_test

import (
	"bytes"
	"strings"
	"testing"
)

// TestCacheControlPerCaller: the answers that depend on who asks (search,
// the list of datasets, the OGC collections, a map's layer) are private
// whoever asks; and every GET route answered to a signed-in browser says
// how to cache it, "public" only where the anonymous answer is the same.
func TestCacheControlPerCaller(t *testing.T) {
	ts := newServer(t)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Numbers", user: "alice", ctype: "text/csv", body: numbersCSV(3)}), 201)
	ts.createMap(t, "alice", "title=T&basemap=Acetate&layers[][source]=finder:1")
	b := ts.mustSignIn("alice")
	for _, p := range []string{"/search.json", "/search.atom", "/search.html", "/datasets.json", "/ogc/collections", "/ogc/collections?f=html", "/maps/1/layers/0.json"} {
		for _, who := range []string{"", "alice", "session"} {
			var w = ts.get(p, who)
			if who == "session" {
				w = b.get(p)
			}
			must(t, w, 200)
			if cc := w.Header().Get("Cache-Control"); !strings.Contains(cc, "private") {
				t.Errorf("%s to %q: Cache-Control %q", p, who, cc)
			}
		}
	}
	// Every GET route, to a session.
	for _, path := range getPaths(t, ts) {
		w := b.get(path)
		if w.Code >= 300 {
			continue
		}
		cc := w.Header().Get("Cache-Control")
		switch {
		case cc == "":
			t.Errorf("%s (%d) to a session: no Cache-Control", path, w.Code)
		case strings.Contains(cc, "public"):
			if anon := ts.get(path, ""); anon.Code != w.Code || !bytes.Equal(anon.Body.Bytes(), w.Body.Bytes()) {
				t.Errorf("%s: %q, but the anonymous answer differs (%d)", path, cc, anon.Code)
			}
		}
	}
}
