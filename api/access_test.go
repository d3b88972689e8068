package api_test

// The access matrix: every route × every role × every sharing setting, on
// both kinds of instance. The expected answer of each case is decided here
// from the rules as docs/api.md states them (Permissions; not by calling
// policy.go), and a refused request must leave the dataset, the map, the
// groups and the users as they were.

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/storetest"
)

// Roles of the matrix, by the login that plays them ("" is anonymous).
var matrixRoles = []struct{ name, login string }{
	{"anonymous", ""}, {"other", "other"}, {"viewer", "viewer"}, {"downloader", "downloader"},
	{"editor", "editor"}, {"owner", "owner"}, {"admin", "admin"},
}

// Sharing settings: the entry for everyone, if any; every setting but
// "private" also has the entries for the viewers' (view), downloaders'
// (download) and editors' (edit) groups.
var matrixSettings = []struct {
	name     string
	groups   bool
	everyone *mapcommons.Permission
}{
	{"private", false, nil},
	{"groups", true, nil},
	{"everyone-view", true, &mapcommons.Permission{Group: "everyone", View: true}},
	{"everyone-download", true, &mapcommons.Permission{Group: "everyone", View: true, Download: true}},
	{"everyone-edit", true, &mapcommons.Permission{Group: "everyone", View: true, Download: true, Edit: true}},
}

// rights are what the matrix expects a role to have on an object.
type rights struct{ view, download, edit bool }

// expectedRights follows docs/api.md's rules: owner and administrator have
// everything; everyone else the union of the entries for everyone and
// their group (edit ⊃ download ⊃ view), never edit when anonymous; on a
// hosted instance every dataset is viewed and downloaded by anyone.
func expectedRights(mode mapcommons.Mode, setting int, role string, dataset bool) rights {
	if role == "owner" || role == "admin" {
		return rights{true, true, true}
	}
	st := matrixSettings[setting]
	var r rights
	if st.groups {
		switch role {
		case "viewer":
			r = rights{view: true}
		case "downloader":
			r = rights{view: true, download: true}
		case "editor":
			r = rights{true, true, true}
		}
	}
	if e := st.everyone; e != nil {
		r = rights{r.view || e.View, r.download || e.Download, r.edit || e.Edit}
	}
	if role == "anonymous" {
		r.edit = false
	}
	if dataset && mode == mapcommons.ModeHosted {
		r.view, r.download = true, true
	}
	return r
}

// refused is the status of a refusal: 401 to an anonymous caller, 404 to
// one who may not view the object, 403 otherwise.
func refused(role string, view bool) int {
	switch {
	case role == "anonymous":
		return 401
	case !view:
		return 404
	}
	return 403
}

// matrixFixture is the world of one instance: users, groups, and per
// setting a dataset and a map shared that way.
type matrixFixture struct {
	ts       *testServer
	mode     mapcommons.Mode
	svc      mapcommons.Services
	users    map[string]*mapcommons.User
	groups   [3]int64 // view, download, edit
	scratch  int64    // a group for the group routes
	datasets []*mapcommons.Dataset
	maps     []*mapcommons.Map
	n        int // a counter for unique names
}

func (f *matrixFixture) perms(setting int) []mapcommons.Permission {
	st := matrixSettings[setting]
	out := []mapcommons.Permission{}
	if st.everyone != nil {
		out = append(out, *st.everyone)
	}
	if st.groups {
		out = append(out,
			mapcommons.Permission{Group: itoa(f.groups[0]), View: true},
			mapcommons.Permission{Group: itoa(f.groups[1]), View: true, Download: true},
			mapcommons.Permission{Group: itoa(f.groups[2]), View: true, Download: true, Edit: true})
	}
	return out
}

func (f *matrixFixture) newDataset(t *testing.T, setting int, tags string) *mapcommons.Dataset {
	t.Helper()
	ds := &mapcommons.Dataset{OwnerID: f.users["owner"].ID, Type: "csv", Permissions: f.perms(setting),
		Metadata: mapcommons.Metadata{Title: "Matrix " + matrixSettings[setting].name, Tags: tags}}
	if err := f.svc.Datasets.CreateDataset(context.Background(), ds, storetest.SampleSource(5)); err != nil {
		t.Fatal(err)
	}
	return ds
}

func matrixLayer(ds *mapcommons.Dataset) mapcommons.Layer {
	return mapcommons.Layer{Source: "finder:" + itoa(ds.ID), Title: "layer", Opacity: 1, Visible: true,
		Styles: mapcommons.Styles{Type: mapcommons.LayerPoint, Icon: mapcommons.Icon{Size: 1},
			Stroke: mapcommons.Stroke{Alpha: 0.75}, Fill: mapcommons.Fill{Opacity: 0.75}, Click: "n is $[n]"}}
}

func (f *matrixFixture) newMap(t *testing.T, setting int, ds *mapcommons.Dataset, tags []string) *mapcommons.Map {
	t.Helper()
	m := &mapcommons.Map{OwnerID: f.users["owner"].ID, Title: "Matrix map", Basemap: "Acetate", Tags: tags,
		Projection: mapcommons.ProjectionMercator, Permissions: f.perms(setting),
		Layers: []mapcommons.Layer{matrixLayer(ds), matrixLayer(ds)}}
	if err := f.svc.Maps.CreateMap(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

func newMatrixFixture(t *testing.T, mode mapcommons.Mode) *matrixFixture {
	ts := newServer(t, func(c *api.Config) { c.Mode = mode })
	f := &matrixFixture{ts: ts, mode: mode, users: map[string]*mapcommons.User{}, svc: ts.svc}
	ctx := context.Background()
	hash, _ := mapcommons.HashPassword("secret1", bcrypt.MinCost)
	for _, r := range matrixRoles[1:] {
		u, err := f.svc.Users.FindUserByLogin(ctx, r.login)
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			u = &mapcommons.User{Login: r.login, Email: r.login + "@example.com", Fullname: "Secret " + r.login, PasswordHash: hash}
			err = f.svc.Users.CreateUser(ctx, u)
		}
		if err != nil {
			t.Fatal(err)
		}
		f.users[r.name] = u
	}
	for i, role := range []string{"viewer", "downloader", "editor"} {
		g := storetest.MustCreateGroup(t, f.svc, role+"s")
		storetest.MustAddMember(t, f.svc, g, f.users[role])
		f.groups[i] = g.ID
	}
	f.scratch = storetest.MustCreateGroup(t, f.svc, "scratch").ID
	for s := range matrixSettings {
		ds := f.newDataset(t, s, "fx"+strconv.Itoa(s))
		f.datasets = append(f.datasets, ds)
		f.maps = append(f.maps, f.newMap(t, s, ds, []string{"fx" + strconv.Itoa(s)}))
	}
	return f
}

// state is what a refused request must not change.
type state struct {
	ds      mapcommons.Dataset
	m       *mapcommons.Map
	members []string
	owner   mapcommons.User
	counts  [4]int // users, groups, datasets, maps
}

func (f *matrixFixture) state(t *testing.T, setting int) state {
	t.Helper()
	ctx := context.Background()
	var st state
	if setting >= 0 {
		ds, err := f.svc.Datasets.FindDatasetByID(ctx, f.datasets[setting].ID)
		if err != nil {
			t.Fatal(err)
		}
		st.ds = *ds
		if st.m, err = f.svc.Maps.FindMapByID(ctx, f.maps[setting].ID); err != nil {
			t.Fatal(err)
		}
	}
	members, err := f.svc.Groups.FindGroupMembers(ctx, f.scratch)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range members {
		st.members = append(st.members, u.Login)
	}
	owner, err := f.svc.Users.FindUserByID(ctx, f.users["owner"].ID)
	if err != nil {
		t.Fatal(err)
	}
	st.owner = *owner
	c := &st.counts
	if err := f.ts.store.queryRow(t, `SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM user_groups),
		(SELECT count(*) FROM datasets), (SELECT count(*) FROM maps)`, &c[0], &c[1], &c[2], &c[3]); err != nil {
		t.Fatal(err)
	}
	return st
}

// matrixCase is what a route needs for one request.
type matrixCase struct {
	f       *matrixFixture
	setting int
	role    string
	ds      *mapcommons.Dataset // the setting's dataset
	m       *mapcommons.Map     // the setting's map
	n       int                 // unique per case
}

func (c *matrixCase) rights(dataset bool) rights {
	return expectedRights(c.f.mode, c.setting, c.role, dataset)
}

// matrixRoute is one route of the API with the rule that decides it.
type matrixRoute struct {
	name    string
	global  bool // the same for every sharing setting: run once per instance
	request func(t *testing.T, c *matrixCase) req
	// want is the status expected for the case.
	want func(c *matrixCase) int
	// after repairs the fixture after a successful request.
	after func(t *testing.T, c *matrixCase)
	// check, when set, checks the body of a successful answer.
	check func(t *testing.T, c *matrixCase, body []byte)
}

// statsOnlyToDownloaders: a dataset's JSON shows the statistics of its
// numeric columns (they tell a small dataset's values) only to a caller
// who may download it.
func statsOnlyToDownloaders(t *testing.T, c *matrixCase, body []byte) {
	t.Helper()
	doc := decode[map[string]any](t, body)
	stats, _ := doc["stats"].(map[string]any)
	if doc["stats"] == nil || stats == nil {
		t.Fatalf("%s, %s: no stats object: %s", matrixSettings[c.setting].name, c.role, body)
	}
	if got, want := len(stats) > 0, c.rights(true).download; got != want {
		t.Fatalf("%s, %s: stats shown %v, may download %v: %v", matrixSettings[c.setting].name, c.role, got, want, stats)
	}
}

// groupNamesToSharers: the entries of an object's sharing list name their
// groups (group_name) only to a caller who may change the list (a
// dataset's owner and administrators, a map's administrators; on an
// appliance also whoever may edit it), and of those only the groups the
// caller sees by name: an administrator every one, anyone else the
// groups they are in (here each of viewer, downloader and editor is in
// the group of its role; the owner is in none).
func groupNamesToSharers(dataset bool) func(t *testing.T, c *matrixCase, body []byte) {
	return func(t *testing.T, c *matrixCase, body []byte) {
		t.Helper()
		doc := decode[map[string]any](t, body)
		mayShare := c.role == "admin" || dataset && c.role == "owner" ||
			c.f.mode == mapcommons.ModeAppliance && c.rights(dataset).edit
		own := map[string]int{"viewer": 0, "downloader": 1, "editor": 2}
		for _, e := range doc["permissions"].([]any) {
			entry := e.(map[string]any)
			id := fmt.Sprint(entry["group_id"])
			want := ""
			for i, role := range []string{"viewer", "downloader", "editor"} {
				if id == itoa(c.f.groups[i]) && mayShare {
					if i2, in := own[c.role]; c.role == "admin" || in && i2 == i {
						want = role + "s"
					}
				}
			}
			name, named := entry["group_name"]
			if named != (want != "") || named && name != want {
				t.Fatalf("%s, %s: entry %v, want the name %q", matrixSettings[c.setting].name, c.role, entry, want)
			}
		}
	}
}

// Rules of the routes.
func viewDS(ok int) func(*matrixCase) int {
	return func(c *matrixCase) int {
		if r := c.rights(true); r.view {
			return ok
		} else {
			return refused(c.role, r.view)
		}
	}
}

func downloadDS(ok int) func(*matrixCase) int {
	return func(c *matrixCase) int {
		if r := c.rights(true); r.download {
			return ok
		} else {
			return refused(c.role, r.view)
		}
	}
}

func editDS(ok int) func(*matrixCase) int {
	return func(c *matrixCase) int {
		if r := c.rights(true); r.edit {
			return ok
		} else {
			return refused(c.role, r.view)
		}
	}
}

func ownerOr(ok int, view func(*matrixCase) bool) func(*matrixCase) int {
	return func(c *matrixCase) int {
		if c.role == "owner" || c.role == "admin" {
			return ok
		}
		return refused(c.role, view(c))
	}
}

func shareDS(c *matrixCase) int {
	r := c.rights(true)
	if c.role == "owner" || c.role == "admin" || (c.f.mode == mapcommons.ModeAppliance && r.edit) {
		return 200
	}
	return refused(c.role, r.view)
}

func viewMap(ok int) func(*matrixCase) int {
	return func(c *matrixCase) int {
		if r := c.rights(false); r.view {
			return ok
		} else {
			return refused(c.role, r.view)
		}
	}
}

func editMap(ok int) func(*matrixCase) int {
	return func(c *matrixCase) int {
		if r := c.rights(false); r.edit {
			return ok
		} else {
			return refused(c.role, r.view)
		}
	}
}

func shareMap(c *matrixCase) int {
	r := c.rights(false)
	if c.role == "admin" || (c.f.mode == mapcommons.ModeAppliance && r.edit) {
		return 200
	}
	return refused(c.role, r.view)
}

func layerFeatures(c *matrixCase) int {
	m, d := c.rights(false), c.rights(true)
	switch {
	case !m.view:
		return refused(c.role, false)
	case !d.download:
		return refused(c.role, d.view)
	}
	return 200
}

func adminOnly(ok int) func(*matrixCase) int {
	return func(c *matrixCase) int {
		switch c.role {
		case "admin":
			return ok
		case "anonymous":
			return 401
		}
		return 403
	}
}

func loggedIn(ok int) func(*matrixCase) int {
	return func(c *matrixCase) int {
		if c.role == "anonymous" {
			return 401
		}
		return ok
	}
}

func always(ok int) func(*matrixCase) int { return func(*matrixCase) int { return ok } }

const jsonType = "application/json"

func get(path string) func(*testing.T, *matrixCase) req { return send("GET", path, "", "") }

// send is a request with the case's ids in place of {ds}, {map}, {n},
// {scratch} and {group}.
func send(method, path, ctype, body string) func(*testing.T, *matrixCase) req {
	return func(t *testing.T, c *matrixCase) req {
		r := strings.NewReplacer("{ds}", itoa(c.ds.ID), "{map}", itoa(c.m.ID), "{n}", strconv.Itoa(c.n),
			"{scratch}", itoa(c.f.scratch), "{group}", itoa(c.f.groups[0]))
		return req{method: method, path: r.Replace(path), ctype: ctype, body: []byte(r.Replace(body))}
	}
}

func matrixRoutes() []matrixRoute {
	ctx := context.Background()
	restoreDS := func(t *testing.T, c *matrixCase) {
		perms := c.f.perms(c.setting)
		if _, err := c.f.svc.Datasets.UpdateDataset(ctx, c.ds.ID, mapcommons.MetadataUpdate{Permissions: &perms}); err != nil {
			t.Fatal(err)
		}
	}
	topUp := func(t *testing.T, c *matrixCase) {
		ds, err := c.f.svc.Datasets.FindDatasetByID(ctx, c.ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ds.FeatureCount < 3 {
			if _, err := c.f.svc.Features.AddFeatures(ctx, c.ds.ID, storetest.SampleSource(3)); err != nil {
				t.Fatal(err)
			}
		}
	}
	restoreMap := func(t *testing.T, c *matrixCase) {
		_, err := c.f.svc.Maps.UpdateMap(ctx, c.m.ID, func(m *mapcommons.Map) error {
			m.Permissions = c.f.perms(c.setting)
			for len(m.Layers) < 2 {
				m.Layers = append(m.Layers, matrixLayer(c.ds))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Fresh objects for the deletes, shared as the setting says.
	freshDS := func(t *testing.T, c *matrixCase) req {
		ds := c.f.newDataset(t, c.setting, "")
		return req{method: "DELETE", path: "/datasets/" + itoa(ds.ID) + ".json"}
	}
	freshMap := func(t *testing.T, c *matrixCase) req {
		m := c.f.newMap(t, c.setting, c.ds, nil)
		return req{method: "DELETE", path: "/maps/" + itoa(m.ID) + ".json"}
	}
	// PUT a feature: the dataset's first, by its stable id.
	putFeature := func(t *testing.T, c *matrixCase) req {
		var fid int64
		err := c.f.svc.Features.ScanFeatures(ctx, c.ds.ID, &mapcommons.FeatureQuery{Limit: 1}, func(f *mapcommons.Feature) error {
			fid = f.ID
			return nil
		})
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			fid = 1 // a dataset that does not exist: refused before the feature is looked for
		} else if err != nil || fid == 0 {
			t.Fatalf("no feature to PUT: %v", err)
		}
		return req{method: "PUT", path: "/datasets/" + itoa(c.ds.ID) + "/features/" + itoa(fid) + ".json", ctype: jsonType,
			body: []byte(`{"n": 7, "x": 2.5, "label": "put", "flag": false, "geometry": {"type": "Point", "coordinates": [3, 4]}}`)}
	}
	// PATCH a feature: PUT's, with a merge patch of one attribute.
	patchFeature := func(t *testing.T, c *matrixCase) req {
		r := putFeature(t, c)
		r.method, r.ctype, r.body = "PATCH", "application/merge-patch+json", []byte(`{"label": "patched"}`)
		return r
	}
	dsView := func(c *matrixCase) bool { return c.rights(true).view }
	mapView := func(c *matrixCase) bool { return c.rights(false).view }
	feature := `[{"n": 9, "x": 1.5, "label": "new", "flag": true, "geometry": {"type": "Point", "coordinates": [1, 2]}}]`
	sharing := `{"permissions":[{"group_id":"everyone","permissions":{"view":true,"download":true,"edit":true}},{"group_id":{group},"permissions":{"view":true}}]}`

	routes := []matrixRoute{
		{name: "GET dataset", request: get("/datasets/{ds}.json"), want: viewDS(200), check: func(t *testing.T, c *matrixCase, body []byte) {
			statsOnlyToDownloaders(t, c, body)
			groupNamesToSharers(true)(t, c, body)
		}},
		{name: "GET overlay", request: get("/overlays/{ds}.json?include_attributes=1"), want: viewDS(200), check: statsOnlyToDownloaders},
		{name: "GET dataset with features", request: get("/datasets/{ds}.json?include_features=1"), want: downloadDS(200)},
		{name: "GET features", request: get("/datasets/{ds}/features.json"), want: downloadDS(200)},
		{name: "GET features geojson", request: get("/overlays/{ds}/features.geojson?bbox=-10,-10,10,10"), want: downloadDS(200)},
		{name: "GET features grouped", request: get("/datasets/{ds}/features.json?group_by[]=flag"), want: downloadDS(200)},
		{name: "PUT dataset", request: send("PUT", "/datasets/{ds}.json?title=changed{n}", "", ""), want: editDS(201)},
		{name: "PUT overlay JSON", request: send("PUT", "/overlays/{ds}.json", jsonType, `{"description":"d{n}"}`), want: editDS(201)},
		{name: "PUT dataset permissions", request: send("PUT", "/datasets/{ds}.json", jsonType, sharing), want: shareDS, after: restoreDS},
		{name: "PUT overlay permissions form", request: send("PUT", "/overlays/{ds}.json", form,
			"permissions[][group_id]=everyone&permissions[][permissions][edit]=True"), want: shareDS, after: restoreDS},
		{name: "POST features", request: send("POST", "/datasets/{ds}/features.json", jsonType, feature), want: editDS(201)},
		{name: "PUT feature", request: putFeature, want: editDS(200)},
		{name: "PATCH feature", request: patchFeature, want: editDS(200)},
		{name: "POST edits", request: send("POST", "/datasets/{ds}/edits.json", jsonType, `{"adds": `+feature+`}`), want: editDS(200)},
		{name: "DELETE features", request: send("DELETE", "/datasets/{ds}/features.json?ids=0", "", ""), want: editDS(204), after: topUp},
		{name: "DELETE features spec form", request: send("DELETE", "/datasets/{ds}/features/x.json?ids=1", "", ""), want: editDS(204), after: topUp},
		{name: "DELETE maps features", request: send("DELETE", "/maps/{ds}/features/x.json?ids=0", "", ""), want: editDS(204), after: topUp},
		{name: "PUT fetch", request: send("PUT", "/datasets/{ds}/fetch.json", "", ""), want: editDS(400)}, // not a feed: refused after the rights
		{name: "GET fetch", request: get("/datasets/{ds}/fetch.json"), want: editDS(400)},
		{name: "DELETE dataset", request: freshDS, want: ownerOr(204, dsView)},

		{name: "GET map", request: get("/maps/{map}.json"), want: viewMap(200), check: groupNamesToSharers(false)},
		{name: "GET map kml", request: get("/maps/{map}.kml"), want: viewMap(200)},
		{name: "GET layer", request: get("/maps/{map}/layers/0.json"), want: viewMap(200)},
		{name: "GET layer features", request: get("/maps/{map}/layers/0/features.json"), want: layerFeatures},
		{name: "PUT map", request: send("PUT", "/maps/{map}.json", form, "title=changed{n}"), want: editMap(200)},
		{name: "PUT map permissions", request: send("PUT", "/maps/{map}.json", jsonType, sharing), want: shareMap, after: restoreMap},
		{name: "POST layer", request: send("POST", "/maps/{map}/layers.json", form, "source=finder:{ds}&title=added{n}"), want: editMap(201)},
		{name: "PUT layer", request: send("PUT", "/maps/{map}/layers/1.json", form, "title=changed{n}"), want: editMap(200)},
		{name: "DELETE layer", request: send("DELETE", "/maps/{map}/layers/1.json", "", ""), want: editMap(204), after: restoreMap},
		{name: "DELETE map", request: freshMap, want: ownerOr(204, mapView)},

		{name: "POST dataset", global: true, request: send("POST", "/datasets.json?title=new{n}", "text/csv", "lat,lon\n1,2\n"), want: loggedIn(201)},
		{name: "POST map", global: true, request: send("POST", "/maps.json", form, "title=new{n}&basemap=Acetate"), want: loggedIn(201)},
		{name: "GET search", global: true, request: get("/search.json?query=matrix"), want: always(200)},
		{name: "GET search atom", global: true, request: get("/search.atom?query=matrix"), want: always(200)},
		{name: "GET opensearch", global: true, request: get("/search/opensearch.xml"), want: always(200)},
		{name: "GET healthz", global: true, request: get("/healthz"), want: always(200)},
		{name: "POST user", global: true, request: send("POST", "/users.json", form,
			"user[login]=new{n}&user[password]=secret1&user[password_confirmation]=secret1&user[email]=n{n}@example.com"), want: always(201)},
		{name: "GET user", global: true, request: get("/users/owner.json"), want: always(200)},
		{name: "PUT user", global: true, request: send("PUT", "/users/owner.json", form, "user[fullname]=Name {n}"),
			want: func(c *matrixCase) int { return ownerOr(200, func(*matrixCase) bool { return true })(c) }},
		{name: "DELETE user", global: true, request: func(t *testing.T, c *matrixCase) req {
			u := storetest.MustCreateUser(t, c.f.svc, "victim"+strconv.Itoa(c.n), false)
			return req{method: "DELETE", path: "/users/" + u.Login + ".json"}
		}, want: adminOnlyOr(204)},
		{name: "POST group", global: true, request: send("POST", "/groups.json", form, "group[name]=g{n}"), want: adminOnly(201)},
		{name: "GET group", global: true, request: get("/groups/{scratch}.json"), want: adminOnly(200)},
		{name: "GET group users", global: true, request: get("/groups/{scratch}/users.json"), want: adminOnly(200)},
		{name: "POST group user", global: true, request: send("POST", "/groups/{scratch}/users.json", form, "other"), want: adminOnly(200),
			after: func(t *testing.T, c *matrixCase) {
				if err := c.f.svc.Groups.RemoveGroupMember(ctx, c.f.scratch, c.f.users["other"].ID); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "DELETE group user", global: true, request: func(t *testing.T, c *matrixCase) req {
			storetest.MustAddMember(t, c.f.svc, &mapcommons.UserGroup{ID: c.f.scratch}, c.f.users["viewer"])
			return req{method: "DELETE", path: "/groups/" + itoa(c.f.scratch) + "/users/viewer.json"}
		}, want: adminOnly(204), after: func(t *testing.T, c *matrixCase) {}},
		{name: "DELETE group", global: true, request: func(t *testing.T, c *matrixCase) req {
			g := storetest.MustCreateGroup(t, c.f.svc, "victim"+strconv.Itoa(c.n))
			return req{method: "DELETE", path: "/groups/" + itoa(g.ID) + ".json"}
		}, want: adminOnly(204)},
	}
	for _, ext := range []string{"csv", "geojson", "kml", "kmz", "atom", "rss", "zip", "sqlite", "gpkg"} {
		routes = append(routes, matrixRoute{name: "GET dataset ." + ext, request: get("/datasets/{ds}." + ext), want: downloadDS(200)})
	}
	for _, p := range []string{"", "/WebMercatorQuad", "/WebMercatorQuad/tilejson.json", "/WebMercatorQuad/0/0/0"} {
		routes = append(routes, matrixRoute{name: "GET tiles" + p, request: get("/ogc/collections/{ds}/tiles" + p), want: downloadDS(200)})
	}
	return routes
}

// adminOnlyOr: another user's account is deleted by an administrator only
// (the user themself is not among the roles).
func adminOnlyOr(ok int) func(*matrixCase) int { return adminOnly(ok) }

// TestAccessMatrix walks every route × role × sharing setting on a hosted
// instance and on an appliance.
func TestAccessMatrix(t *testing.T) {
	routes := matrixRoutes()
	t.Parallel()
	for _, mode := range []mapcommons.Mode{mapcommons.ModeHosted, mapcommons.ModeAppliance} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel() // each mode has its own store
			f := newMatrixFixture(t, mode)
			cases := 0
			for ri, rt := range routes {
				t.Run(strings.ReplaceAll(rt.name, " ", "_"), func(t *testing.T) {
					k := ri
					for s := range matrixSettings {
						if rt.global && s > 0 {
							break
						}
						for _, role := range matrixRoles {
							// Under the race detector a quarter of the
							// cases, in turn (.ci/run runs them all
							// without it).
							if k++; raceCut(4) < 4 && k%4 != 0 && !rt.global {
								continue
							}
							f.n++
							cases++
							c := &matrixCase{f: f, setting: s, role: role.name, ds: f.datasets[s], m: f.maps[s], n: f.n}
							f.runCase(t, rt, c, role.login)
						}
					}
					if !rt.global {
						for _, role := range matrixRoles {
							cases++
							f.runMissing(t, rt, role.name, role.login)
						}
					}
				})
			}
			t.Logf("%d cases", cases)
			t.Run("Search", func(t *testing.T) { f.checkSearch(t) })
		})
	}
}

func (f *matrixFixture) runCase(t *testing.T, rt matrixRoute, c *matrixCase, login string) {
	t.Helper()
	where := fmt.Sprintf("%s, %s, %s", matrixSettings[c.setting].name, c.role, rt.name)
	r := rt.request(t, c)
	r.user = login
	want := rt.want(c)
	refusal := want >= 400 && want != 400 // 400: the fetch of a dataset that is no feed, after the rights
	var before state
	if refusal {
		before = f.state(t, c.setting)
	}
	w := f.ts.do(r)
	if w.Code != want {
		t.Fatalf("%s: %s %s answered %d, want %d: %s", where, r.method, r.path, w.Code, want, w.Body.String())
	}
	if want == 401 && w.Header().Get("WWW-Authenticate") == "" {
		t.Fatalf("%s: 401 without WWW-Authenticate", where)
	}
	if w.Code < 300 && c.role != "admin" {
		// What only administrators (and the user themself) see never shows elsewhere.
		for _, other := range matrixRoles[1:] {
			if other.name != c.role && (strings.Contains(w.Body.String(), "Secret "+other.login) || strings.Contains(w.Body.String(), other.login+"@example.com")) {
				t.Fatalf("%s: the answer shows %s's e-mail or name: %s", where, other.login, w.Body.String())
			}
		}
	}
	if rt.check != nil && w.Code < 300 {
		rt.check(t, c, w.Body.Bytes())
	}
	if refusal {
		if after := f.state(t, c.setting); !reflect.DeepEqual(before, after) {
			t.Fatalf("%s: refused with %d, but the state changed:\nbefore %+v\nafter  %+v", where, want, before, after)
		}
	} else if rt.after != nil && w.Code < 300 {
		rt.after(t, c)
	}
}

// missingID is an id no dataset or map of the fixture has.
const missingID = 987654

// runMissing sends the route's request for a dataset and a map that do not
// exist: a caller must not tell them from private ones. Anonymous callers
// get what they get for the private setting's objects when that is 401;
// everyone else 404.
func (f *matrixFixture) runMissing(t *testing.T, rt matrixRoute, role string, login string) {
	t.Helper()
	f.n++
	c := &matrixCase{f: f, setting: 0, role: role, n: f.n,
		ds: &mapcommons.Dataset{ID: missingID}, m: &mapcommons.Map{ID: missingID}}
	r := rt.request(t, c)
	if !strings.Contains(r.path, itoa(missingID)) {
		return // a route on objects of its own
	}
	r.user = login
	want := 404
	private := &matrixCase{f: f, setting: 0, role: role, ds: f.datasets[0], m: f.maps[0], n: f.n}
	if role == "anonymous" && rt.want(private) == 401 {
		want = 401
	}
	before := f.state(t, -1)
	w := f.ts.do(r)
	if w.Code != want {
		t.Fatalf("missing id, %s, %s: %s %s answered %d, want %d: %s", role, rt.name, r.method, r.path, w.Code, want, w.Body.String())
	}
	if after := f.state(t, -1); !reflect.DeepEqual(before, after) {
		t.Fatalf("missing id, %s, %s: the state changed", role, rt.name)
	}
}

// checkSearch: each role finds the setting's dataset and map exactly when
// it may view them, with its rights as the entry's permissions.
func (f *matrixFixture) checkSearch(t *testing.T) {
	for s := range matrixSettings {
		for _, role := range matrixRoles {
			w := f.ts.do(req{method: "GET", path: "/search.json?query=tag:fx" + strconv.Itoa(s) + "&limit=100", user: role.login})
			doc := decode[map[string]any](t, must(t, w, 200))
			found := map[string]map[string]any{}
			for _, e := range doc["entries"].([]any) {
				e := e.(map[string]any)
				found[e["id"].(string)] = e["permissions"].(map[string]any)
			}
			for _, o := range []struct {
				key     string
				dataset bool
			}{{"Overlay:" + itoa(f.datasets[s].ID), true}, {"Map:" + itoa(f.maps[s].ID), false}} {
				r := expectedRights(f.mode, s, role.name, o.dataset)
				got, ok := found[o.key]
				if ok != r.view {
					t.Errorf("%s, %s: %s found %v, may view %v", matrixSettings[s].name, role.name, o.key, ok, r.view)
					continue
				}
				want := map[string]any{"view": r.view, "download": r.download, "edit": r.edit}
				if ok && !reflect.DeepEqual(got, want) {
					t.Errorf("%s, %s: %s permissions %v, want %v", matrixSettings[s].name, role.name, o.key, got, want)
				}
			}
			if len(found) != map[bool]int{true: 1, false: 0}[expectedRights(f.mode, s, role.name, true).view]+
				map[bool]int{true: 1, false: 0}[expectedRights(f.mode, s, role.name, false).view] {
				t.Errorf("%s, %s: found %v", matrixSettings[s].name, role.name, found)
			}
		}
	}
}

// TestMalformedJSONEverywhere: on every route, a JSON body that does not
// parse is a 400, never read as a form or ignored, for a caller who may do
// everything.
func TestMalformedJSONEverywhere(t *testing.T) {
	t.Parallel()
	f := newMatrixFixture(t, mapcommons.ModeAppliance)
	for _, rt := range matrixRoutes() {
		for _, body := range []string{`{"title": "x"`, `[1, 2`} {
			f.n++
			c := &matrixCase{f: f, setting: 4, role: "admin", ds: f.datasets[4], m: f.maps[4], n: f.n}
			r := rt.request(t, c)
			r.user, r.ctype, r.body = "admin", "application/json", []byte(body)
			before := f.state(t, c.setting)
			w := f.ts.do(r)
			if w.Code != 400 || !strings.Contains(strings.ToLower(w.Body.String()), "json") {
				t.Errorf("%s %s with %s: %d %s", r.method, r.path, body, w.Code, w.Body.String())
			}
			if after := f.state(t, c.setting); !reflect.DeepEqual(before, after) {
				t.Errorf("%s: a malformed body changed the state", rt.name)
			}
		}
	}
}
