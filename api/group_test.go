package api_test

import (
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// createGroup creates a group as admin with the body and returns its id.
func (ts *testServer) createGroup(t *testing.T, ctype, body string) int64 {
	t.Helper()
	w := ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: ctype, body: []byte(body)})
	doc := decode[map[string]any](t, must(t, w, http.StatusCreated))
	id := int64(doc["id"].(float64))
	if loc := w.Header().Get("Location"); loc != base+"/groups/"+itoa(id)+".json" {
		t.Fatalf("Location %q", loc)
	}
	if len(doc) != 2 || doc["name"] == nil {
		t.Fatalf("a new group's JSON is {id, name}: %v", doc)
	}
	return id
}

// memberLogins lists the logins of GET /groups/{id}/users.json.
func memberLogins(t *testing.T, ts *testServer, id int64) []string {
	t.Helper()
	list := decode[[]map[string]map[string]any](t, must(t, ts.get("/groups/"+itoa(id)+"/users.json", "admin"), 200))
	out := []string{}
	for _, u := range list {
		out = append(out, u["User"]["login"].(string))
	}
	return out
}

func TestGroups(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	t.Run("Create", func(t *testing.T) {
		for i, c := range []struct{ ctype, body string }{
			{form, "group[name]=staff"},             // DOC
			{form, "name=editors"},                  // PY
			{"application/json", `{"name":"json"}`}, // JSON
			{"application/json", `{"group":{"name":"wrapped"}}`},
		} {
			id := ts.createGroup(t, c.ctype, c.body)
			if id != int64(i+1) {
				t.Fatalf("group %d has id %d", i, id)
			}
		}
		errorOf(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: form, body: []byte("name=STAFF")}), 409, "conflict", "exists already")
		errorOf(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: form, body: []byte("name=+")}), 400, "invalid", "name")
		errorOf(t, ts.do(req{method: "POST", path: "/groups.json", user: "admin", ctype: "application/json", body: []byte(`{"name":`)}), 400, "invalid", "JSON")
	})
	t.Run("Members", func(t *testing.T) {
		// The login as the bare body (DOC curl -d "alice"), and every other form.
		for _, c := range []struct {
			ctype, body, login string
		}{
			{form, "alice", "alice"},
			{"text/plain", "bob\n", "bob"},
			{form, "login=admin", "admin"},
			{form, "username=alice", "alice"},
			{form, "user[login]=bob", "bob"},
			{"application/json", `{"login":"admin"}`, "admin"},
			{"application/json", `{"user":{"login":"alice"}}`, "alice"},
		} {
			w := ts.do(req{method: "POST", path: "/groups/1/users.json", user: "admin", ctype: c.ctype, body: []byte(c.body)})
			doc := decode[map[string]any](t, must(t, w, 200))
			found := false
			for _, u := range doc["users"].([]any) {
				found = found || u.(map[string]any)["User"].(map[string]any)["login"] == c.login
			}
			if !found || doc["name"] != "staff" {
				t.Fatalf("%q: %v", c.body, doc)
			}
		}
		if got := memberLogins(t, ts, 1); !reflect.DeepEqual(got, []string{"admin", "alice", "bob"}) {
			t.Fatalf("members %v", got)
		}
		doc := decode[map[string]any](t, must(t, ts.get("/groups/1.json", "admin"), 200))
		if doc["id"] != 1.0 || doc["name"] != "staff" || len(doc["users"].([]any)) != 3 {
			t.Fatalf("group JSON %v", doc)
		}
		// Groups are listed to administrators, who see e-mail and name.
		u := doc["users"].([]any)[1].(map[string]any)["User"].(map[string]any)
		if u["login"] != "alice" || u["email"] != "alice@example.com" || u["fullname"] != "Full alice" {
			t.Fatalf("member %v", u)
		}
		must(t, ts.do(req{method: "DELETE", path: "/groups/1/users/bob.json", user: "admin"}), 204)
		if got := memberLogins(t, ts, 1); !reflect.DeepEqual(got, []string{"admin", "alice"}) {
			t.Fatalf("members after removing bob %v", got)
		}
		if got := memberLogins(t, ts, 2); len(got) != 0 {
			t.Fatalf("a new group's members %v", got)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		errorOf(t, ts.do(req{method: "POST", path: "/groups/1/users.json", user: "admin", ctype: form, body: []byte("nobody")}), 404, "not_found", "user nobody")
		errorOf(t, ts.do(req{method: "POST", path: "/groups/99/users.json", user: "admin", ctype: form, body: []byte("alice")}), 404, "not_found", "group 99")
		errorOf(t, ts.get("/groups/99.json", "admin"), 404, "not_found", "group 99")
		errorOf(t, ts.get("/groups/99/users.json", "admin"), 404, "not_found", "group 99")
		errorOf(t, ts.get("/groups/$(id)s.json", "admin"), 404, "not_found", "group")
		errorOf(t, ts.do(req{method: "DELETE", path: "/groups/1/users/bob.json", user: "admin"}), 404, "not_found", "not a member")
		errorOf(t, ts.do(req{method: "DELETE", path: "/groups/1/users/nobody.json", user: "admin"}), 404, "not_found", "user nobody")
		errorOf(t, ts.do(req{method: "DELETE", path: "/groups/99.json", user: "admin"}), 404, "not_found", "group 99")
		errorOf(t, ts.do(req{method: "POST", path: "/groups/1/users.json", user: "admin", ctype: form}), 400, "invalid", "login")
	})
	t.Run("ErrNotAdmin", func(t *testing.T) {
		for _, r := range []req{
			{method: "POST", path: "/groups.json", ctype: form, body: []byte("name=x")},
			{method: "GET", path: "/groups/1.json"},
			{method: "GET", path: "/groups/1/users.json"},
			{method: "POST", path: "/groups/1/users.json", ctype: form, body: []byte("bob")},
			{method: "DELETE", path: "/groups/1/users/alice.json"},
			{method: "DELETE", path: "/groups/1.json"},
			{method: "GET", path: "/groups/99.json"},
		} {
			errorOf(t, ts.do(r), 401, "unauthorized", "authentication")
			r.user = "alice" // a member, not an administrator
			errorOf(t, ts.do(r), 403, "forbidden", "administrator")
		}
		if got := memberLogins(t, ts, 1); !reflect.DeepEqual(got, []string{"admin", "alice"}) {
			t.Fatalf("refused requests changed the members: %v", got)
		}
		errorOf(t, ts.do(req{method: "PATCH", path: "/groups/1.json", user: "admin"}), 405, "method_not_allowed", "PATCH")
	})
	t.Run("Delete", func(t *testing.T) {
		must(t, ts.do(req{method: "DELETE", path: "/groups/1.json", user: "admin"}), 204)
		errorOf(t, ts.get("/groups/1.json", "admin"), 404, "not_found", "group 1")
	})
}

// TestPermissions sets sharing lists on datasets and maps in every
// encoding and reads them back.
func TestPermissions(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	staff := ts.createGroup(t, form, "name=staff")
	must(t, ts.do(req{method: "POST", path: "/groups/" + itoa(staff) + "/users.json", user: "admin", ctype: form, body: []byte("bob")}), 200)
	path := ts.createCSV("?title=Wells", "lat,lon,name\n35.1,-80.2,a\n35.3,-80,b\n")
	perms := func(p string, user string) []any {
		t.Helper()
		return decode[map[string]any](t, must(t, ts.get(p+".json", user), 200))["permissions"].([]any)
	}
	if got := perms(path, "alice"); len(got) != 0 {
		t.Fatalf("a new dataset on an appliance is private: %v", got)
	}
	errorOf(t, ts.get(path+".json", "bob"), 404, "not_found", "dataset")
	errorOf(t, ts.get(path+".json", ""), 401, "unauthorized", "authentication")

	t.Run("JSON", func(t *testing.T) {
		body := `{"permissions":[{"group_id":` + itoa(staff) + `,"permissions":{"view":true,"download":true,"edit":false}},{"group_id":"everyone","permissions":{"view":true}}]}`
		w := ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json", body: []byte(body)})
		if must(t, w, 200); w.Body.Len() != 0 || w.Header().Get("Status") != "200 OK" {
			t.Fatalf("body %q, Status %q", w.Body.String(), w.Header().Get("Status"))
		}
		want := []any{
			map[string]any{"group_id": float64(staff), "permissions": map[string]any{"view": true, "download": true, "edit": false}},
			map[string]any{"group_id": "everyone", "permissions": map[string]any{"view": true, "download": false, "edit": false}},
		}
		if got := perms(path, "alice"); !reflect.DeepEqual(got, want) {
			t.Fatalf("permissions %v, want %v", got, want)
		}
		// bob (staff) downloads; anyone views, nobody else downloads.
		must(t, ts.get(path+".csv", "bob"), 200)
		must(t, ts.get(path+".json", ""), 200)
		errorOf(t, ts.get(path+"/features.json", ""), 401, "unauthorized", "download")
		errorOf(t, ts.get(path+".csv", "admin2"), 401, "unauthorized", "invalid")
	})
	t.Run("Form", func(t *testing.T) {
		// PY's encoding: booleans as True/False, the repeated first key opens each entry.
		body := "permissions[][group_id]=" + itoa(staff) + "&permissions[][permissions][edit]=True&permissions[][group_id]=everyone&permissions[][permissions][view]=False"
		must(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: form, body: []byte(body)}), 200)
		want := []any{
			map[string]any{"group_id": float64(staff), "permissions": map[string]any{"view": true, "download": true, "edit": true}},
			map[string]any{"group_id": "everyone", "permissions": map[string]any{"view": false, "download": false, "edit": false}},
		}
		if got := perms(path, "alice"); !reflect.DeepEqual(got, want) {
			t.Fatalf("edit implies download implies view: %v", got)
		}
		// bob edits now: metadata (201) and, on an appliance, permissions (200).
		must(t, ts.do(req{method: "PUT", path: path + ".json?title=Bob's", user: "bob"}), 201)
		must(t, ts.do(req{method: "PUT", path: path + ".json", user: "bob", ctype: "application/json",
			body: []byte(`{"permissions":[{"group_id":"` + itoa(staff) + `","permissions":{"edit":true}}]}`)}), 200)
		if got := perms(path, "bob"); len(got) != 1 {
			t.Fatalf("bob's change: %v", got)
		}
		// but may not delete.
		errorOf(t, ts.do(req{method: "DELETE", path: path + ".json", user: "bob"}), 403, "forbidden", "delete")
	})
	t.Run("Remove", func(t *testing.T) {
		// An empty list removes every entry (Rails sends permissions[]= for []).
		must(t, ts.do(req{method: "PUT", path: path + ".json?permissions[]=", user: "alice"}), 200)
		if got := perms(path, "alice"); len(got) != 0 {
			t.Fatalf("after removal %v", got)
		}
		errorOf(t, ts.get(path+".json", "bob"), 404, "not_found", "dataset")
	})
	t.Run("Errors", func(t *testing.T) {
		for _, c := range []struct {
			user, ctype, body string
			status            int
			code, msg         string
		}{
			{"alice", "application/json", `{"permissions":[{"group_id":999,"permissions":{"view":true}}]}`, 400, "invalid", "group 999 does not exist"},
			{"alice", "application/json", `{"permissions":[{"group_id":"staff","permissions":{"view":true}}]}`, 400, "invalid", "permissions[0].group_id"},
			{"alice", "application/json", `{"permissions":[{"permissions":{"view":true}}]}`, 400, "invalid", "group_id: missing"},
			{"alice", "application/json", `{"permissions":[{"group_id":"everyone","permissions":{"view":"maybe"}}]}`, 400, "invalid", "view"},
			{"alice", "application/json", `{"permissions":[{"group_id":"everyone"`, 400, "invalid", "malformed JSON"},
			{"", "application/json", `{"permissions":[]}`, 401, "unauthorized", "authentication"},
			{"bob", "application/json", `{"permissions":[{"group_id":"everyone","permissions":{"view":true}}]}`, 404, "not_found", "dataset"},
		} {
			errorOf(t, ts.do(req{method: "PUT", path: path + ".json", user: c.user, ctype: c.ctype, body: []byte(c.body)}), c.status, c.code, c.msg)
		}
		errorOf(t, ts.do(req{method: "PUT", path: "/datasets/999.json", user: "alice", ctype: "application/json", body: []byte(`{"permissions":[]}`)}), 404, "not_found", "999")
		if got := perms(path, "alice"); len(got) != 0 {
			t.Fatalf("refused requests changed the permissions: %v", got)
		}
	})
	t.Run("AtCreate", func(t *testing.T) {
		w := ts.do(req{method: "POST", path: "/datasets.json?title=Shared&permissions[][group_id]=everyone&permissions[][permissions][download]=1",
			user: "alice", ctype: "text/csv", body: []byte("lat,lon\n1,2\n")})
		doc := decode[map[string]any](t, must(t, w, 201))
		want := []any{map[string]any{"group_id": "everyone", "permissions": map[string]any{"view": true, "download": true, "edit": false}}}
		if !reflect.DeepEqual(doc["permissions"], want) {
			t.Fatalf("created with %v", doc["permissions"])
		}
		must(t, ts.get("/datasets/"+strconv.Itoa(int(doc["id"].(float64)))+".csv", ""), 200)
		errorOf(t, ts.do(req{method: "POST", path: "/datasets.json?permissions[][group_id]=999&permissions[][permissions][view]=1",
			user: "alice", ctype: "text/csv", body: []byte("lat,lon\n1,2\n")}), 400, "invalid", "group 999")
		// Maps: on an appliance the owner shares.
		w = ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/json",
			body: []byte(`{"title":"m","basemap":"Acetate","permissions":[{"group_id":` + itoa(staff) + `,"permissions":{"view":true}}]}`)})
		doc = decode[map[string]any](t, must(t, w, 201))
		mapPath := "/maps/" + strconv.Itoa(int(doc["id"].(float64)))
		want = []any{map[string]any{"group_id": float64(staff), "permissions": map[string]any{"view": true, "download": false, "edit": false}}}
		if !reflect.DeepEqual(doc["permissions"], want) {
			t.Fatalf("map created with %v", doc["permissions"])
		}
		must(t, ts.get(mapPath+".json", "bob"), 200)
		errorOf(t, ts.do(req{method: "PUT", path: mapPath + ".json", user: "alice", ctype: "application/json",
			body: []byte(`{"permissions":[{"group_id":999,"permissions":{"view":true}}]}`)}), 400, "invalid", "group 999")
	})
	t.Run("GroupDeleted", func(t *testing.T) {
		must(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json",
			body: []byte(`{"permissions":[{"group_id":` + itoa(staff) + `,"permissions":{"view":true}}]}`)}), 200)
		must(t, ts.get(path+".json", "bob"), 200)
		must(t, ts.do(req{method: "DELETE", path: "/groups/" + itoa(staff) + ".json", user: "admin"}), 204)
		if got := perms(path, "alice"); len(got) != 0 {
			t.Fatalf("the entry of a deleted group stays: %v", got)
		}
		errorOf(t, ts.get(path+".json", "bob"), 404, "not_found", "dataset")
	})
}

// TestPermissionsHosted: on a hosted instance datasets are read by anyone,
// their owner shares them, and maps are shared by administrators only.
func TestPermissionsHosted(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells", "lat,lon\n1,2\n")
	body := []byte(`{"permissions":[{"group_id":"everyone","permissions":{"edit":true}}]}`)
	errorOf(t, ts.do(req{method: "PUT", path: path + ".json", user: "bob", ctype: "application/json", body: body}), 403, "forbidden", "")
	must(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json", body: body}), 200)
	// everyone:edit lets any logged-in user edit, but not share or delete.
	must(t, ts.do(req{method: "PUT", path: path + ".json?title=Bob", user: "bob"}), 201)
	errorOf(t, ts.do(req{method: "PUT", path: path + ".json", user: "bob", ctype: "application/json", body: []byte(`{"permissions":[]}`)}), 403, "forbidden", "permissions")
	errorOf(t, ts.do(req{method: "DELETE", path: path + ".json", user: "bob"}), 403, "forbidden", "delete")
	errorOf(t, ts.do(req{method: "PUT", path: path + ".json?title=Anon"}), 401, "unauthorized", "authentication")
	// Echoing the dataset's own permissions back needs no right to share.
	must(t, ts.do(req{method: "PUT", path: path + ".json?title=Again&permissions[][group_id]=everyone&permissions[][permissions][edit]=1", user: "bob"}), 200)

	w := ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: form, body: []byte("title=m&basemap=Acetate")})
	doc := decode[map[string]any](t, must(t, w, 201))
	mapPath := "/maps/" + strconv.Itoa(int(doc["id"].(float64)))
	share := []byte(`{"permissions":[]}`)
	errorOf(t, ts.do(req{method: "PUT", path: mapPath + ".json", user: "alice", ctype: "application/json", body: share}), 403, "forbidden", "administrator")
	must(t, ts.do(req{method: "PUT", path: mapPath + ".json", user: "admin", ctype: "application/json", body: share}), 200)
	errorOf(t, ts.get(mapPath+".json", ""), 401, "unauthorized", "")
	errorOf(t, ts.get(mapPath+".json", "bob"), 404, "not_found", "map")
}

// TestGroupList checks GET /groups: every group with its member count for
// an administrator, only one's own groups (no counts) for another user, a
// 401 for an anonymous caller.
func TestGroupList(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	empty := decode[[]map[string]any](t, must(t, ts.get("/groups.json", "admin"), 200))
	if empty == nil || len(empty) != 0 {
		t.Fatalf("no group yet: %v", empty)
	}
	staff := ts.createGroup(t, form, "name=staff")
	editors := ts.createGroup(t, form, "name=Editors")
	for _, login := range []string{"alice", "bob"} {
		must(t, ts.do(req{method: "POST", path: "/groups/" + itoa(staff) + "/users.json", user: "admin", ctype: form, body: []byte("login=" + login)}), 200)
	}
	type entry struct {
		ID        int64  `json:"id"`
		Name      string `json:"name"`
		CreatedAt string `json:"created_at"`
		Members   *int64 `json:"member_count"`
	}
	all := decode[[]entry](t, must(t, ts.get("/groups.json", "admin"), 200))
	if len(all) != 2 || all[0].ID != editors || all[1].ID != staff || all[0].CreatedAt == "" ||
		all[0].Members == nil || *all[0].Members != 0 || all[1].Members == nil || *all[1].Members != 2 {
		t.Fatalf("an administrator's list: %+v", all)
	}
	mine := decode[[]entry](t, must(t, ts.get("/groups.json", "alice"), 200))
	if len(mine) != 1 || mine[0].ID != staff || mine[0].Name != "staff" || mine[0].Members != nil {
		t.Fatalf("alice's groups: %+v", mine)
	}
	must(t, ts.do(req{method: "DELETE", path: "/groups/" + itoa(staff) + "/users/bob.json", user: "admin"}), 204)
	if none := decode[[]entry](t, must(t, ts.get("/groups.json", "bob"), 200)); len(none) != 0 {
		t.Fatalf("bob left staff: %+v", none)
	}
	errorOf(t, ts.get("/groups.json", ""), 401, "unauthorized", "authentication")
	errorOf(t, ts.get("/groups.csv", "admin"), 404, "not_found", "csv")
	errorOf(t, ts.do(req{method: "PATCH", path: "/groups.json", user: "admin"}), 405, "method_not_allowed", "PATCH")
}
