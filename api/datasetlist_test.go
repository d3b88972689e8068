package api_test

import (
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
)

// TestDatasetList: GET /datasets.json lists the datasets the caller may
// view as search entries, newest first, paged with next links to the list.
func TestDatasetList(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	clock := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	ts.store.setNow(func() time.Time { clock = clock.Add(time.Minute); return clock })
	share := `{"permissions":[{"group_id":"everyone","permissions":{"view":true}}]}`
	var public []string
	for _, title := range []string{"First", "Second", "Third"} {
		id := ts.createCSV("?title="+title, "lat,lon\n1,2\n")
		must(t, ts.do(req{method: "PUT", path: id + ".json", user: "alice", ctype: "application/json", body: []byte(share)}), 200)
		public = append(public, title)
	}
	ts.createCSV("?title=Private", "lat,lon\n1,2\n")

	type doc struct {
		TotalResults int64  `json:"totalResults"`
		Next         string `json:"next"`
		Entries      []struct {
			Title string `json:"title"`
			Type  string `json:"type"`
		} `json:"entries"`
	}
	titles := func(d doc) string {
		var s []string
		for _, e := range d.Entries {
			s = append(s, e.Title)
		}
		return strings.Join(s, ",")
	}
	d := decode[doc](t, must(t, ts.get("/datasets.json", ""), 200))
	if d.TotalResults != 3 || titles(d) != "Third,Second,First" {
		t.Fatalf("anonymous: %d %s", d.TotalResults, titles(d))
	}
	d = decode[doc](t, must(t, ts.get("/datasets.json", "alice"), 200))
	if d.TotalResults != 4 || titles(d) != "Private,Third,Second,First" || d.Entries[0].Type != "Overlay" {
		t.Fatalf("owner: %d %s %+v", d.TotalResults, titles(d), d.Entries)
	}
	d = decode[doc](t, must(t, ts.get("/datasets.json?limit=2", "bob"), 200))
	if titles(d) != "Third,Second" || d.Next != base+"/datasets.json?limit=2&page=2" {
		t.Fatalf("page 1: %s next %q", titles(d), d.Next)
	}
	d = decode[doc](t, must(t, ts.get("/overlays.json?limit=2&page=2", "bob"), 200))
	if titles(d) != "First" || d.Next != "" {
		t.Fatalf("page 2: %s next %q", titles(d), d.Next)
	}
	d = decode[doc](t, must(t, ts.get("/datasets.json?sort=title", "bob"), 200))
	if titles(d) != "First,Second,Third" {
		t.Fatalf("by title: %s", titles(d))
	}
	errorOf(t, ts.get("/datasets.json?model=map", ""), 400, "invalid", "model")
}
