package api_test

import (
	"encoding/xml"
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

// TestDatasetListFeedImages: the list of datasets as Atom and KML links
// every entry's image, a dataset shared for viewing only too (the link
// tells nothing the entry does not); the image itself is authorized when
// fetched: refused to a visitor who may not download, drawn for the owner.
func TestDatasetListFeedImages(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := ts.createCSV("?title=Viewed", "lat,lon\n1,2\n")
	must(t, ts.do(req{method: "PUT", path: id + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions":[{"group_id":"everyone","permissions":{"view":true}}]}`)}), 200)
	img := base + id + ".png?width=256&height=256"

	var feed atomFeedIn
	if err := xml.Unmarshal(must(t, ts.get("/datasets.atom", ""), 200), &feed); err != nil {
		t.Fatal(err)
	}
	if len(feed.Entries) != 1 || linkOf(feed.Entries[0].Links, "enclosure", "image/png") != img {
		t.Fatalf("the Atom list: %+v", feed.Entries)
	}
	var doc struct {
		Descriptions []string `xml:"Document>Placemark>description"`
	}
	if err := xml.Unmarshal(must(t, ts.get("/datasets.kml", ""), 200), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Descriptions) != 1 || !strings.Contains(doc.Descriptions[0], `<img src="`+strings.ReplaceAll(img, "&", "&amp;")+`"`) {
		t.Fatalf("the KML list: %q", doc.Descriptions)
	}
	path := strings.TrimPrefix(img, base)
	if w := ts.get(path, ""); w.Code != 401 && w.Code != 403 {
		t.Errorf("a visitor who may only view gets the image: %d", w.Code)
	}
	if w := ts.get(path, "bob"); w.Code != 403 && w.Code != 404 {
		t.Errorf("bob, who may only view, gets the image: %d", w.Code)
	}
	decodePNG(t, ts.get(path, "alice"))
}
