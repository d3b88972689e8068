package api_test

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/storetest"
)

// searchFixture puts datasets and maps straight into the store of ts.
type searchFixture struct {
	t     *testing.T
	ts    *testServer
	s     mapcommons.Services
	share []mapcommons.Permission // new datasets' sharing list, as the instance gives it
}

func newSearchFixture(t *testing.T, mutate ...func(*api.Config)) *searchFixture {
	ts := newServer(t, mutate...)
	cfg := api.Config{Mode: mapcommons.ModeHosted}
	for _, m := range mutate {
		m(&cfg)
	}
	p := mapcommons.Policy{Mode: cfg.Mode, DefaultShare: cfg.DefaultShare}
	return &searchFixture{t: t, ts: ts, share: p.DefaultDatasetPermissions(), s: ts.svc}
}

func (fx *searchFixture) user(login string) int64 {
	u, err := fx.s.Users.FindUserByLogin(fx.t.Context(), login)
	if err != nil {
		fx.t.Fatal(err)
	}
	return u.ID
}

func (fx *searchFixture) dataset(owner, title, desc, tags string, xy ...float64) *mapcommons.Dataset {
	var id int64
	if owner != "" {
		id = fx.user(owner)
	}
	ds := &mapcommons.Dataset{OwnerID: id, Type: "csv", Permissions: fx.share,
		Metadata: mapcommons.Metadata{Title: title, Description: desc, Tags: tags}}
	if err := fx.s.Datasets.CreateDataset(fx.t.Context(), ds, storetest.PointsSource(xy...)); err != nil {
		fx.t.Fatal(err)
	}
	return ds
}

func (fx *searchFixture) mapOf(owner, title string, shared bool, layers ...int64) *mapcommons.Map {
	m := &mapcommons.Map{OwnerID: fx.user(owner), Title: title, Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
		Tags: []string{"maps"}, Permissions: []mapcommons.Permission{}}
	if shared {
		m.Permissions = []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true, Download: true}}
	}
	for _, id := range layers {
		m.Layers = append(m.Layers, mapcommons.Layer{Source: "finder:" + strconv.FormatInt(id, 10), Visible: true, Opacity: 1,
			Styles: mapcommons.Styles{Type: "POINT"}}) // as the API would store it
	}
	if err := fx.s.Maps.CreateMap(fx.t.Context(), m); err != nil {
		fx.t.Fatal(err)
	}
	return m
}

// searchJSON is the answer as a strict client declares it.
type searchJSON struct {
	TotalResults int64            `json:"totalResults"`
	ItemsPerPage int              `json:"itemsPerPage"`
	Next         *string          `json:"next"`
	Entries      []map[string]any `json:"entries"`
}

func (fx *searchFixture) search(query, user string) searchJSON {
	fx.t.Helper()
	return decode[searchJSON](fx.t, must(fx.t, fx.ts.get("/search.json?"+query, user), 200))
}

func ids(d searchJSON) []string {
	out := []string{}
	for _, e := range d.Entries {
		out = append(out, e["id"].(string))
	}
	return out
}

func sortedIDs(d searchJSON) []string {
	out := ids(d)
	sort.Strings(out)
	return out
}

func TestSearchJSONGolden(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	quilts := fx.dataset("alice", "McMinn County AQT Quilt Trail", "This point data is the location of quilt squares", "county, mcminn, quilts",
		-84.73383, 35.334526, -84.48675, 35.5942)
	quilts.Author = "Randal Hale"
	author := "Randal Hale"
	if _, err := fx.s.Datasets.UpdateDataset(t.Context(), quilts.ID, mapcommons.MetadataUpdate{Author: &author}); err != nil {
		t.Fatal(err)
	}
	fx.mapOf("bob", "Quilt trails of Tennessee", true, quilts.ID)
	fx.dataset("bob", "Unrelated", "", "")
	body := must(t, fx.ts.get("/search.json?query=quilt", ""), 200)
	if ra, ok := fx.s.Search.(storetest.RelevanceApprox); ok && ra.RelevanceApprox() && !*update {
		// A store that ranks its own way (storetest.RelevanceApprox): the
		// golden's entries, every byte of each, in any order.
		want, err := os.ReadFile(filepath.Join("testdata", "golden", "search_quilt.json"))
		if err != nil {
			t.Fatal(err)
		}
		byID := func(b []byte) map[string]any {
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			entries := map[string]any{}
			for _, e := range doc["entries"].([]any) {
				entries[e.(map[string]any)["id"].(string)] = e
			}
			doc["entries"] = entries
			return doc
		}
		if got, w := byID(body), byID(want); !reflect.DeepEqual(got, w) {
			t.Fatalf("search_quilt.json differs from the golden file (in any order):\n%s", body)
		}
		return
	}
	golden(t, "search_quilt.json", body)
}

// TestSearchJSONShape checks every field of an entry and its JSON type, as
// NET's DataContract and PY read them.
func TestSearchJSONShape(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	ds := fx.dataset("alice", "Rivers", "Major rivers", "water, ohio", -84, 38, -80, 42)
	m := fx.mapOf("alice", "River map", true, ds.ID)
	body := must(t, fx.ts.get("/search.json?query=river&sort=title", ""), 200)
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["totalResults"] != float64(2) || raw["itemsPerPage"] != float64(10) {
		t.Fatalf("totals: %v %v", raw["totalResults"], raw["itemsPerPage"])
	}
	if _, ok := raw["next"]; ok {
		t.Fatal("next on the only page")
	}
	entries, ok := raw["entries"].([]any)
	if !ok || len(entries) != 2 {
		t.Fatalf("entries: %v", raw["entries"])
	}
	isString := func(v any) bool { _, ok := v.(string); return ok }
	isInt := func(v any) bool { f, ok := v.(float64); return ok && f == math.Trunc(f) }
	isBool := func(v any) bool { _, ok := v.(bool); return ok }
	isNull := func(v any) bool { return v == nil }
	strOrNull := func(v any) bool { return v == nil || isString(v) }
	isPerson := func(v any) bool {
		p, ok := v.(map[string]any)
		return ok && len(p) == 2 && isString(p["name"]) && strOrNull(p["uri"])
	}
	isTime := func(v any) bool {
		s, ok := v.(string)
		_, err := time.Parse(time.RFC3339, s)
		return ok && err == nil
	}
	checks := map[string]func(any) bool{
		"id": isString, "pk": isInt, "type": isString, "title": isString, "name": isString, "description": strOrNull,
		"tags": isString, "bbox": isString, "author": isPerson, "contributor": isPerson, "link": isString,
		"detail_link": isString, "created": isTime, "published": isTime, "feature_count": isInt,
		"permissions": func(v any) bool {
			p, ok := v.(map[string]any)
			return ok && len(p) == 3 && isBool(p["view"]) && isBool(p["download"]) && isBool(p["edit"])
		},
		"short_classification": isNull, "layer_size": isInt, "source": strOrNull, "icon_path": isNull,
		"analyzable": isBool, "data_type": isString,
	}
	for _, e := range entries {
		entry := e.(map[string]any)
		for k, check := range checks {
			if !check(entry[k]) {
				t.Errorf("%v: %s = %#v", entry["id"], k, entry[k])
			}
		}
		for k := range entry {
			if checks[k] == nil {
				t.Errorf("unexpected key %s", k)
			}
		}
	}
	mp, dp := entries[0].(map[string]any), entries[1].(map[string]any) // "River map" < "Rivers"
	want := map[string]any{
		"id": fmt.Sprintf("Overlay:%d", ds.ID), "pk": float64(ds.ID), "type": "Overlay", "title": "Rivers", "name": "Rivers",
		"description": "Major rivers", "tags": "water, ohio", "bbox": "38,-84,42,-80",
		"link": fmt.Sprintf("%s/datasets/%d.json", base, ds.ID), "detail_link": fmt.Sprintf("%s/datasets/%d", base, ds.ID),
		"created": "2026-11-22T08:00:00Z", "feature_count": float64(2), "data_type": "Dataset",
	}
	for k, v := range want {
		if dp[k] != v {
			t.Errorf("dataset %s = %#v, want %#v", k, dp[k], v)
		}
	}
	if c := dp["contributor"].(map[string]any); c["name"] != "alice" || c["uri"] != base+"/users/alice" {
		t.Errorf("contributor %v", c)
	}
	if p := dp["permissions"].(map[string]any); p["view"] != true || p["download"] != true || p["edit"] != false {
		t.Errorf("anonymous rights on a hosted dataset: %v", p)
	}
	want = map[string]any{
		"id": fmt.Sprintf("Map:%d", m.ID), "pk": float64(m.ID), "type": "Map", "title": "River map", "tags": "maps",
		"bbox": "-84,38,-80,42", "link": fmt.Sprintf("%s/maps/%d.json", base, m.ID), "feature_count": float64(2),
		"description": nil,
	}
	for k, v := range want {
		if mp[k] != v {
			t.Errorf("map %s = %#v, want %#v", k, mp[k], v)
		}
	}
	if a := mp["author"].(map[string]any); a["name"] != "alice" || a["uri"] != base+"/users/alice" {
		t.Errorf("map author %v", a)
	}
	// The links answer.
	for _, e := range []map[string]any{dp, mp} {
		link, _ := url.Parse(e["link"].(string))
		must(t, fx.ts.get(link.Path, ""), 200)
	}
	// Owners see their rights.
	d := fx.search("query=rivers", "alice")
	if p := d.Entries[0]["permissions"].(map[string]any); p["edit"] != true {
		t.Errorf("the owner's rights %v", p)
	}
}

func TestSearchPaging(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	var all []string
	for i := 0; i < 25; i++ {
		ds := fx.dataset("", fmt.Sprintf("Station %02d", i), "weather", "")
		all = append(all, fmt.Sprintf("Overlay:%d", ds.ID))
	}
	t.Run("FollowNext", func(t *testing.T) {
		var got []string
		path := "/search.json?query=station&sort=title&limit=10"
		for n := 0; path != ""; n++ {
			d := decode[searchJSON](t, must(t, fx.ts.get(path, ""), 200))
			if d.TotalResults != 25 || d.ItemsPerPage != 10 {
				t.Fatalf("page %d: total %d per page %d", n, d.TotalResults, d.ItemsPerPage)
			}
			got = append(got, ids(d)...)
			path = ""
			if d.Next != nil {
				u, err := url.Parse(*d.Next)
				if err != nil || u.Scheme+"://"+u.Host != base || u.Path != "/search.json" {
					t.Fatalf("next %q", *d.Next)
				}
				if q := u.Query(); q.Get("query") != "station" || q.Get("sort") != "title" || q.Get("page") != strconv.Itoa(n+2) {
					t.Fatalf("next %q", *d.Next)
				}
				path = u.RequestURI()
			}
		}
		if strings.Join(got, " ") != strings.Join(all, " ") {
			t.Fatalf("pages = %v", got)
		}
	})
	t.Run("Edges", func(t *testing.T) {
		last := fx.search("query=station&sort=title&page=3", "")
		if len(last.Entries) != 5 || last.Next != nil || last.TotalResults != 25 {
			t.Fatalf("last page: %d entries, next %v", len(last.Entries), last.Next)
		}
		past := fx.search("query=station&sort=title&page=4", "")
		if len(past.Entries) != 0 || past.Next != nil || past.TotalResults != 25 || past.ItemsPerPage != 10 {
			t.Fatalf("past the end: %+v", past)
		}
		first := fx.search("query=station&sort=title", "")
		for _, p := range []string{"0", "-2", "1"} {
			if d := fx.search("query=station&sort=title&page="+p, ""); strings.Join(ids(d), " ") != strings.Join(ids(first), " ") ||
				d.Next == nil || !strings.Contains(*d.Next, "page=2") {
				t.Fatalf("page=%s is not the first page: %v next %v", p, ids(d), d.Next)
			}
		}
		// PY's first_and_last: page=<totalResults>&limit=1 is the last item.
		lastOne := fx.search("query=station&sort=title&page=25&limit=1", "")
		if len(lastOne.Entries) != 1 || lastOne.Entries[0]["id"] != all[24] || lastOne.Next != nil {
			t.Fatalf("page=25&limit=1: %v", ids(lastOne))
		}
		if d := fx.search("query=&limit=1000", ""); d.ItemsPerPage != 100 || len(d.Entries) != 25 {
			t.Fatalf("limit=1000: %d per page, %d entries", d.ItemsPerPage, len(d.Entries))
		}
		if d := fx.search("query=*&limit=0", ""); d.ItemsPerPage != 10 || len(d.Entries) != 10 {
			t.Fatalf("limit=0: %d per page", d.ItemsPerPage)
		}
		if d := fx.search("query=nothing", ""); d.TotalResults != 0 || d.ItemsPerPage <= 0 || d.Entries == nil || d.Next != nil {
			t.Fatalf("no results: %+v", d)
		}
	})
}

func TestSearchParams(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	ohio := fx.dataset("alice", "Ohio rivers", "", "water", -84.8, 38.4, -80.5, 42)
	fiji := fx.dataset("alice", "Fiji reefs", "", "water, reefs", 177, -18, 179.9, -16.5)
	m := fx.mapOf("bob", "Water map", true, ohio.ID)
	o, f, mp := fmt.Sprintf("Overlay:%d", ohio.ID), fmt.Sprintf("Overlay:%d", fiji.ID), fmt.Sprintf("Map:%d", m.ID)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"query=", []string{o, f, mp}},
		{"", []string{o, f, mp}},
		{"query=*", []string{o, f, mp}},
		{"query=tag:water", []string{o, f}},
		{"query=tag:reefs", []string{f}},
		{"query=title:water", []string{mp}},
		{"query=user:alice", []string{o, f}},
		{"query=user:bob+water", []string{mp}},
		{"query=%22ohio+rivers%22", []string{o}},
		{"query=%22rivers+ohio%22", []string{}},
		{"query=riv", []string{o}},
		{"bbox=-82,40,-81,41", []string{o, mp}},
		{"bbox=178,-20,-178,-10", []string{f}},
		{"bbox=-182,-20,-178,-10", []string{f}},
		{"bbox[]=-82&bbox[]=40&bbox[]=-81&bbox[]=41", []string{o, mp}},
		{"model=Overlay", []string{o, f}},
		{"model=Map&query=water", []string{mp}},
		{"model=overlay&query=water&bbox=170,-30,180,0", []string{f}},
		{"model=Refinement", []string{}},
	} {
		d := fx.search(tc.query, "")
		sort.Strings(tc.want)
		if got := sortedIDs(d); strings.Join(got, " ") != strings.Join(tc.want, " ") || d.TotalResults != int64(len(tc.want)) {
			t.Errorf("%s: %v (total %d), want %v", tc.query, got, d.TotalResults, tc.want)
		}
	}
	// Orders.
	if d := fx.search("query=water&sort=title&order=descending", ""); strings.Join(ids(d), " ") != strings.Join([]string{mp, o, f}, " ") {
		t.Errorf("title descending: %v", ids(d))
	}
	if d := fx.search("query=water&sort=feature_count&order=desc&model=Overlay", ""); d.Entries[0]["id"] != f && d.Entries[0]["id"] != o {
		t.Errorf("feature_count: %v", ids(d))
	}
	for _, tc := range []struct{ query, param string }{
		{"bbox=1,2,3", "bbox"},
		{"bbox=a,b,c,d", "bbox"},
		{"bbox=0,10,1,5", "bbox"},
		{"bbox=0,-100,1,5", "bbox"},
		{"page=x", "page"},
		{"page=99999999999999999999", "page"},
		{"page=9000000000000000", "page"},
		{"limit=ten", "limit"},
		{"limit=-1", "limit"},
		{"sort=owner", "sort"},
		{"order=sideways", "order"},
		{"model=Layer", "model"},
		{"query=%FF", "query"},
		{"query[]=a", "query"},
		{"query=" + strings.Repeat("a+", 40), "query"},
	} {
		errorOf(t, fx.ts.get("/search.json?"+tc.query, ""), 400, mapcommons.EINVALID, tc.param+":")
	}
	// Query text that is FTS5 syntax is only text.
	for _, q := range []string{`"`, `a" OR "b`, `NEAR(a b)`, `*`, `title:"`, `{title}:x`, `a AND`, `-x`, `^x`, `x:y:z`, `'`, `(`} {
		must(t, fx.ts.get("/search.json?query="+url.QueryEscape(q), ""), 200)
	}
	errorOf(t, fx.ts.do(req{method: "POST", path: "/search.json"}), 405, "method_not_allowed", "POST")
	errorOf(t, fx.ts.get("/search.csv", ""), 404, mapcommons.ENOTFOUND, "json")
}

// TestSearchVisibilityAppliance checks that on an appliance each caller
// finds what they may view, counted alone.
func TestSearchVisibilityAppliance(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	a := fx.dataset("alice", "Secret census", "", "")
	b := fx.dataset("bob", "Bob census", "", "")
	priv := fx.mapOf("alice", "Alice census map", false)
	pub := fx.mapOf("bob", "Public census map", true)
	A, B, P, U := fmt.Sprintf("Overlay:%d", a.ID), fmt.Sprintf("Overlay:%d", b.ID), fmt.Sprintf("Map:%d", priv.ID), fmt.Sprintf("Map:%d", pub.ID)
	for _, tc := range []struct {
		user string
		want []string
	}{
		{"", []string{U}},
		{"alice", []string{A, P, U}},
		{"bob", []string{B, U}},
		{"admin", []string{A, B, P, U}},
	} {
		sort.Strings(tc.want)
		for _, q := range []string{"query=census", "query=census&limit=1"} {
			d := fx.search(q, tc.user)
			if d.TotalResults != int64(len(tc.want)) {
				t.Errorf("%q %s: totalResults %d, want %d", tc.user, q, d.TotalResults, len(tc.want))
			}
			if strings.HasSuffix(q, "census") {
				if got := sortedIDs(d); strings.Join(got, " ") != strings.Join(tc.want, " ") {
					t.Errorf("%q: found %v, want %v", tc.user, got, tc.want)
				}
			}
		}
	}
	d := fx.search("query=census&model=Map", "bob")
	for _, e := range d.Entries {
		p := e["permissions"].(map[string]any)
		if e["id"] == U && (p["edit"] != true || p["view"] != true) {
			t.Errorf("bob on his map: %v", p)
		}
	}
	d = fx.search("query=public", "alice")
	if p := d.Entries[0]["permissions"].(map[string]any); p["edit"] != false || p["view"] != true {
		t.Errorf("alice on bob's public map: %v", p)
	}
}

// TestSearchFollowsWrites checks that changes through the API show in the
// next search.
func TestSearchFollowsWrites(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	ds := fx.dataset("alice", "Bridges", "", "stone", 1, 1)
	id := fmt.Sprintf("Overlay:%d", ds.ID)
	if w := fx.ts.do(req{method: "PUT", path: fmt.Sprintf("/datasets/%d.json?title=Tunnels&tags=rail", ds.ID), user: "alice"}); w.Code/100 != 2 {
		t.Fatalf("update: %d %s", w.Code, w.Body)
	}
	if d := fx.search("query=bridges", ""); d.TotalResults != 0 {
		t.Fatalf("old title still found: %v", ids(d))
	}
	if d := fx.search("query=tunnels+tag:rail", ""); strings.Join(ids(d), "") != id {
		t.Fatalf("new title not found: %v", ids(d))
	}
	must(t, fx.ts.do(req{method: "DELETE", path: fmt.Sprintf("/datasets/%d.json", ds.ID), user: "alice"}), 204)
	if d := fx.search("query=tunnels", ""); d.TotalResults != 0 {
		t.Fatalf("deleted dataset found: %v", ids(d))
	}
}

// Atom as encoding/xml reads it, by namespace.
type atomFeedIn struct {
	XMLName      xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	Title        string   `xml:"http://www.w3.org/2005/Atom title"`
	ID           string   `xml:"http://www.w3.org/2005/Atom id"`
	Updated      string   `xml:"http://www.w3.org/2005/Atom updated"`
	AuthorName   string   `xml:"http://www.w3.org/2005/Atom author>name"`
	TotalResults *int64   `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	StartIndex   *int64   `xml:"http://a9.com/-/spec/opensearch/1.1/ startIndex"`
	ItemsPerPage *int64   `xml:"http://a9.com/-/spec/opensearch/1.1/ itemsPerPage"`
	Query        *struct {
		Role        string `xml:"role,attr"`
		SearchTerms string `xml:"searchTerms,attr"`
		StartPage   int64  `xml:"startPage,attr"`
	} `xml:"http://a9.com/-/spec/opensearch/1.1/ Query"`
	Links   []atomLinkIn `xml:"http://www.w3.org/2005/Atom link"`
	Entries []struct {
		Title   string       `xml:"http://www.w3.org/2005/Atom title"`
		ID      string       `xml:"http://www.w3.org/2005/Atom id"`
		Updated string       `xml:"http://www.w3.org/2005/Atom updated"`
		Author  atomPersonIn `xml:"http://www.w3.org/2005/Atom author"`
		Links   []atomLinkIn `xml:"http://www.w3.org/2005/Atom link"`
		Cats    []struct {
			Scheme string `xml:"scheme,attr"`
			Term   string `xml:"term,attr"`
		} `xml:"http://www.w3.org/2005/Atom category"`
		Box     string `xml:"http://www.georss.org/georss box"`
		Content struct {
			Type string `xml:"type,attr"`
			Text string `xml:",chardata"`
		} `xml:"http://www.w3.org/2005/Atom content"`
	} `xml:"http://www.w3.org/2005/Atom entry"`
}

type atomLinkIn struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr"`
	Href string `xml:"href,attr"`
}

type atomPersonIn struct {
	Name string `xml:"http://www.w3.org/2005/Atom name"`
	URI  string `xml:"http://www.w3.org/2005/Atom uri"`
}

func linkOf(links []atomLinkIn, rel, typ string) string {
	for _, l := range links {
		if l.Rel == rel && (typ == "" || strings.HasPrefix(l.Type, typ)) {
			return l.Href
		}
	}
	return ""
}

func TestSearchAtom(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	for i := 0; i < 3; i++ {
		fx.dataset("alice", fmt.Sprintf("Mexico mines %d", i), "Mines <b>of</b> Mexico & more", "mexico, mines", -106, 28, -104, 30)
	}
	m := fx.mapOf("bob", "New Mexico Mines", true)
	w := fx.ts.get("/search.atom?query=Mexico&limit=2&page=2&sort=title", "")
	body := must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/atom+xml") {
		t.Fatalf("Content-Type %q", ct)
	}
	var feed atomFeedIn
	if err := xml.Unmarshal(body, &feed); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if feed.Title == "" || feed.ID == "" || feed.AuthorName == "" {
		t.Fatalf("feed title %q id %q author %q", feed.Title, feed.ID, feed.AuthorName)
	}
	if _, err := time.Parse(time.RFC3339, feed.Updated); err != nil {
		t.Fatalf("feed updated %q", feed.Updated)
	}
	if feed.TotalResults == nil || *feed.TotalResults != 4 || feed.StartIndex == nil || *feed.StartIndex != 3 ||
		feed.ItemsPerPage == nil || *feed.ItemsPerPage != 2 {
		t.Fatalf("opensearch counts %v %v %v", feed.TotalResults, feed.StartIndex, feed.ItemsPerPage)
	}
	if q := feed.Query; q == nil || q.Role != "request" || q.SearchTerms != "Mexico" || q.StartPage != 2 {
		t.Fatalf("opensearch:Query %+v", feed.Query)
	}
	for _, l := range []struct{ rel, typ, want string }{
		{"self", "application/atom+xml", "/search.atom?"},
		{"search", "application/opensearchdescription+xml", "/search.xml"},
		{"alternate", "application/vnd.google-earth.kml+xml", "/search.kml?"},
		{"alternate", "text/html", "/search.html?"},
		{"previous", "application/atom+xml", "/search.atom?"},
	} {
		if h := linkOf(feed.Links, l.rel, l.typ); !strings.HasPrefix(h, base+l.want) {
			t.Errorf("link %s %s = %q", l.rel, l.typ, h)
		}
	}
	if h := linkOf(feed.Links, "previous", ""); strings.Contains(h, "page=") {
		t.Errorf("previous of page 2 = %q", h)
	}
	if h := linkOf(feed.Links, "next", ""); h != "" {
		t.Errorf("next on the last page: %q", h)
	}
	if len(feed.Entries) != 2 {
		t.Fatalf("%d entries", len(feed.Entries))
	}
	for _, e := range feed.Entries {
		if e.Title == "" || e.ID == "" || e.Author.Name == "" {
			t.Errorf("entry %+v", e)
		}
		if _, err := time.Parse(time.RFC3339, e.Updated); err != nil {
			t.Errorf("entry updated %q", e.Updated)
		}
		for _, typ := range []string{"text/html", "application/vnd.google-earth.kml+xml", "application/json"} {
			if linkOf(e.Links, "alternate", typ) == "" {
				t.Errorf("%s: no %s link", e.ID, typ)
			}
		}
		// The entry's picture: its image, 256 pixels square, after the
		// links the clients read.
		img := linkOf(e.Links, "enclosure", "image/png")
		if img != e.ID+".png?width=256&height=256" || e.Links[len(e.Links)-1].Href != img {
			t.Errorf("%s: enclosure %q in %+v", e.ID, img, e.Links)
			continue
		}
		if got := decodePNG(t, fx.ts.get(strings.TrimPrefix(img, base), "")).Bounds(); got.Dx() != 256 || got.Dy() != 256 {
			t.Errorf("%s: the image is %v", img, got)
		}
	}
	// Page 2 by title: "Mexico mines 2", then "New Mexico Mines".
	e, me := feed.Entries[0], feed.Entries[1]
	if e.Content.Type != "html" || e.Content.Text != "Mines <b>of</b> Mexico & more" || e.Box != "28 -106 30 -104" ||
		len(e.Cats) != 2 || e.Cats[0].Term != "mexico" || e.Cats[0].Scheme != base+"/tags" || e.Author.URI != base+"/users/alice" {
		t.Errorf("dataset entry %+v", e)
	}
	if want := fmt.Sprintf("%s/maps/%d", base, m.ID); me.ID != want || me.Author.Name != "bob" {
		t.Errorf("map entry id %q (DRUPAL reads /maps/(.*)$), author %q", me.ID, me.Author.Name)
	}
	// Page 1 has next, no previous.
	feed = atomFeedIn{}
	if err := xml.Unmarshal(must(t, fx.ts.get("/search.atom?query=Mexico&limit=2&sort=title", ""), 200), &feed); err != nil {
		t.Fatal(err)
	}
	if h := linkOf(feed.Links, "next", "application/atom+xml"); !strings.Contains(h, "page=2") || linkOf(feed.Links, "previous", "") != "" {
		t.Errorf("page 1 links %+v", feed.Links)
	}
}

func TestSearchKML(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	ds := fx.dataset("alice", "Fiji & friends", "reefs", "", 178, -18, -178, -16) // extent -178..178
	w := fx.ts.get("/search.kml?query=fiji", "")
	body := must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.google-earth.kml+xml") {
		t.Fatalf("Content-Type %q", ct)
	}
	var doc struct {
		XMLName    xml.Name `xml:"http://www.opengis.net/kml/2.2 kml"`
		Placemarks []struct {
			Name        string `xml:"name"`
			Description string `xml:"description"`
			Coordinates string `xml:"Point>coordinates"`
			Box         struct {
				North float64 `xml:"north"`
				South float64 `xml:"south"`
				East  float64 `xml:"east"`
				West  float64 `xml:"west"`
			} `xml:"Region>LatLonAltBox"`
		} `xml:"Document>Placemark"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if len(doc.Placemarks) != 1 {
		t.Fatalf("%d placemarks", len(doc.Placemarks))
	}
	p := doc.Placemarks[0]
	if p.Name != "Fiji & friends" || !strings.Contains(p.Description, fmt.Sprintf("/datasets/%d.json", ds.ID)) {
		t.Errorf("placemark %+v", p)
	}
	// The description ends with the picture: the dataset's image.
	if want := fmt.Sprintf(`<p><img src="%s/datasets/%d.png?width=256&amp;height=256" width="256" height="256" alt=""></p>`, base, ds.ID); !strings.HasSuffix(p.Description, want) {
		t.Errorf("description %q, want it to end with %q", p.Description, want)
	}
	if !strings.HasPrefix(p.Description, `<p>reefs</p><p><a href=`) {
		t.Errorf("description %q: the text and links no longer first", p.Description)
	}
	if p.Coordinates != "0,-17" || p.Box.North != -16 || p.Box.South != -18 || p.Box.West != -178 || p.Box.East != 178 {
		t.Errorf("placemark at %q box %+v", p.Coordinates, p.Box)
	}
}

func TestSearchOpenSearchDescription(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	for _, path := range []string{"/search.xml", "/search/opensearch.xml"} {
		w := fx.ts.get(path, "")
		body := must(t, w, 200)
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/opensearchdescription+xml") {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
		var d struct {
			XMLName   xml.Name `xml:"http://a9.com/-/spec/opensearch/1.1/ OpenSearchDescription"`
			ShortName string   `xml:"http://a9.com/-/spec/opensearch/1.1/ ShortName"`
			URLs      []struct {
				Type     string `xml:"type,attr"`
				Template string `xml:"template,attr"`
			} `xml:"http://a9.com/-/spec/opensearch/1.1/ Url"`
		}
		if err := xml.Unmarshal(body, &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		found := map[string]string{}
		for _, u := range d.URLs {
			found[u.Type] = u.Template
		}
		for typ, suffix := range map[string]string{"application/json": ".json", "application/atom+xml": ".atom", "application/vnd.google-earth.kml+xml": ".kml"} {
			tpl := found[typ]
			if !strings.HasPrefix(tpl, base+"/search"+suffix+"?") || !strings.Contains(tpl, "{searchTerms}") || !strings.Contains(tpl, "{geo:box?}") {
				t.Errorf("%s: template for %s = %q", path, typ, tpl)
			}
			// The template, filled in, is a search that answers.
			filled := strings.NewReplacer("{searchTerms}", "x", "{geo:box?}", "", "{startPage?}", "", "{count?}", "").Replace(tpl)
			must(t, fx.ts.get(strings.TrimPrefix(filled, base), ""), 200)
		}
		if d.ShortName == "" {
			t.Errorf("%s: no ShortName", path)
		}
	}
	errorOf(t, fx.ts.get("/search/opensearch.json", ""), 404, mapcommons.ENOTFOUND, "XML")
}

func TestSearchJSONP(t *testing.T) {
	t.Parallel()
	fx := newSearchFixture(t)
	fx.dataset("alice", "Callbacks", "", "")
	w := fx.ts.get("/search.json?query=callbacks&callback=fn", "")
	body := string(must(t, w, 200))
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") || !strings.HasPrefix(body, "fn({") || !strings.HasSuffix(strings.TrimRight(body, "; \n"), ")") {
		t.Fatalf("%s: %s", ct, body)
	}
	// HTML, for people.
	w = fx.ts.get("/search.html?query=callbacks", "")
	if b := string(must(t, w, 200)); !strings.Contains(b, "Callbacks") || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("html: %s", b)
	}
}
