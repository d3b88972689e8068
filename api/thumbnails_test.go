package api_test

import (
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// TestEagerThumbnails: with EagerThumbnails, an upload, an edit and a
// map's change draw the lists' and feeds' thumbnails in the background,
// so that fetching them draws nothing; without it nothing is drawn until
// asked. A map's thumbnail made for its owner serves another viewer who
// sees the same layers; one who sees fewer gets an image of its own.
func TestEagerThumbnails(t *testing.T) {
	t.Parallel()
	for _, eager := range []bool{false, true} {
		ts := newServer(t, func(c *api.Config) { c.EagerThumbnails = eager; c.Mode = mapcommons.ModeAppliance })
		srv := ts.handler.(*api.Server)
		id := uploadNC(t, ts, "")
		srv.WaitThumbnails() // each change drawn before the next (one queued twice is drawn once)
		must(t, ts.do(req{method: "PUT", path: "/datasets/" + id + ".json", user: "alice", ctype: "application/json",
			body: []byte(`{"permissions": [{"group_id": "everyone", "permissions": {"view": true, "download": true}}]}`)}), 200)
		srv.WaitThumbnails()
		private := uploadNC(t, ts, "")
		srv.WaitThumbnails()
		before := srv.Draws()
		want := int64(0)
		if eager {
			want = 9 // three sizes of each version: the uploads', and the first's after its PUT
		}
		if before != want {
			t.Fatalf("eager %v: %d images drawn after the uploads, want %d", eager, before, want)
		}
		for _, q := range []string{"width=120&height=90", "width=120&height=90&scale=2", "height=256&width=256"} {
			decodePNG(t, ts.get("/datasets/"+id+".png?"+q, ""))
		}
		drawn := srv.Draws() - before
		if eager && drawn != 0 || !eager && drawn != 3 {
			t.Errorf("eager %v: fetching the thumbnails drew %d images", eager, drawn)
		}
		if !eager {
			continue
		}
		// A map of both datasets, public; its owner alice sees both.
		form := "application/x-www-form-urlencoded"
		m := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form,
			body: []byte("title=m&basemap=Acetate&permissions[][group_id]=everyone&permissions[][permissions][view]=true" +
				"&layers[][source]=finder:" + id + "&layers[][source]=finder:" + private)}), 201))
		mid := strconv.Itoa(int(m["id"].(float64)))
		srv.WaitThumbnails()
		before = srv.Draws()
		decodePNG(t, ts.get("/maps/"+mid+".png?width=120&height=90", "alice"))
		if d := srv.Draws() - before; d != 0 {
			t.Errorf("the map's thumbnail for its owner drew %d images after the change", d)
		}
		// An anonymous viewer may not download the private dataset: an
		// image without it, drawn for them.
		decodePNG(t, ts.get("/maps/"+mid+".png?width=120&height=90", ""))
		if d := srv.Draws() - before; d != 1 {
			t.Errorf("the anonymous viewer's image drew %d, want 1 of its own", d)
		}
		// A change of a dataset it draws: the map's thumbnails are drawn
		// again after the dataset's.
		must(t, ts.do(req{method: "POST", path: "/datasets/" + id + "/edits.json", user: "alice", ctype: jsonType, body: []byte(`{"deletes": [1]}`)}), 200)
		srv.WaitThumbnails()
		before = srv.Draws()
		decodePNG(t, ts.get("/maps/"+mid+".png?width=120&height=90", "alice"))
		decodePNG(t, ts.get("/datasets/"+id+".png?width=120&height=90", ""))
		if d := srv.Draws() - before; d != 0 {
			t.Errorf("after a change of its dataset, the map's and the dataset's thumbnails drew %d images", d)
		}
	}
}

// TestCloseStopsThumbnails: Close returns once no thumbnail is being
// drawn (the store may be closed after it: a drawing reads its mapped
// files), and a change after it queues none.
func TestCloseStopsThumbnails(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.EagerThumbnails = true })
	srv := ts.handler.(*api.Server)
	id := uploadNC(t, ts, "") // its thumbnails queued, maybe being drawn
	srv.Close()
	if srv.Warming() {
		t.Fatal("a thumbnail is still being drawn after Close")
	}
	before := srv.Draws()
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + id + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions": [{"group_id": "everyone", "permissions": {"view": true, "download": true}}]}`)}), 200)
	if srv.Warming() {
		t.Fatal("a change after Close queued thumbnails")
	}
	srv.WaitThumbnails()
	if d := srv.Draws() - before; d != 0 {
		t.Errorf("%d images drawn after Close", d)
	}
}
