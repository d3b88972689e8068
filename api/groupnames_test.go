package api_test

// Who learns which group names (Policy.CanSeeGroupName, docs/api.md
// "Groups" and "Permissions"): the groups listing gives a user her own
// groups and an administrator every one; a dataset's or a map's sharing
// list names, to whoever may change it, the groups of its entries that
// she may see by name, and no other; a group anyone else asks about
// answers as a missing one does.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/api"
)

// entryNames maps each group entry of a sharing list (as JSON) to the
// name it carries ("" for none), and fails on an entry whose keys are not
// group_id, permissions and, when named, group_name.
func entryNames(t *testing.T, what string, perms any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range perms.([]any) {
		m := e.(map[string]any)
		keys := []string{}
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		name, named := m["group_name"].(string)
		want := []string{"group_id", "permissions"}
		if named {
			want = []string{"group_id", "group_name", "permissions"}
		}
		if !reflect.DeepEqual(keys, want) || (m["group_name"] != nil && !named) {
			t.Errorf("%s: an entry with keys %v: %v", what, keys, m)
		}
		if _, isNumber := m["group_id"].(float64); !isNumber && m["group_id"] != "everyone" {
			t.Errorf("%s: group_id %#v is neither a number nor everyone", what, m["group_id"])
		}
		out[fmt.Sprint(m["group_id"])] = name
	}
	return out
}

// groupListNames are the names GET /groups.json gives user.
func groupListNames(t *testing.T, ts *testServer, user string) []string {
	t.Helper()
	out := []string{}
	for _, g := range decode[[]map[string]any](t, must(t, ts.get("/groups.json", user), 200)) {
		out = append(out, g["name"].(string))
	}
	return out
}

func TestGroupNamesSeen(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	createUserAPI(t, ts, "carol") // in Auditors only
	createUserAPI(t, ts, "erin")  // in no group
	field := ts.createGroup(t, form, "name=Field team")
	auditors := ts.createGroup(t, form, "name=Auditors")
	for _, m := range [][2]any{{field, "alice"}, {field, "bob"}, {auditors, "carol"}} {
		must(t, ts.do(req{method: "POST", path: "/groups/" + itoa(m[0].(int64)) + "/users.json", user: "admin", ctype: form, body: []byte("login=" + m[1].(string))}), 200)
	}
	f, a := itoa(field), itoa(auditors)

	// The listing: one's own groups; an administrator every one.
	for user, want := range map[string][]string{"alice": {"Field team"}, "bob": {"Field team"}, "carol": {"Auditors"}, "erin": {}, "admin": {"Auditors", "Field team"}} {
		if got := groupListNames(t, ts, user); !reflect.DeepEqual(got, want) {
			t.Errorf("GET /groups.json as %s: %v, want %v", user, got, want)
		}
	}
	errorOf(t, ts.get("/groups.json", ""), 401, "unauthorized", "")

	// A group one may not read answers as a missing one, to its members
	// as to outsiders (only administrators read a group and its members).
	for _, user := range []string{"alice", "carol", "erin"} {
		missing := ts.get("/groups/999.json", user)
		for _, path := range []string{"/groups/" + f + ".json", "/groups/" + a + ".json", "/groups/" + f + "/users.json"} {
			w := ts.get(path, user)
			if w.Code != missing.Code || w.Body.String() != missing.Body.String() {
				t.Errorf("%s as %s: %d %s; a missing group: %d %s", path, user, w.Code, w.Body, missing.Code, missing.Body)
			}
		}
	}
	if g := decode[map[string]any](t, must(t, ts.get("/groups/"+a+".json", "admin"), 200)); g["name"] != "Auditors" {
		t.Errorf("the administrator reads %v", g)
	}

	// alice shares her dataset with her group and, by number, with one she
	// is not in (as before: a number is enough).
	ds := uploadCSV(t, ts, "Field notes", "name,lat,lon\nA,10,20\n")
	dsPath := "/datasets/" + ds + ".json"
	share := fmt.Sprintf(`{"permissions":[{"group_id":%s,"permissions":{"view":true,"download":true}},{"group_id":%s,"permissions":{"view":true}},{"group_id":"everyone","permissions":{}}]}`, f, a)
	must(t, ts.do(req{method: "PUT", path: dsPath, user: "alice", ctype: "application/json", body: []byte(share)}), 200)

	m := decode[map[string]any](t, must(t, ts.do(req{method: "POST", path: "/maps.json", user: "alice", ctype: "application/json",
		body: []byte(`{"title":"Field map","basemap":"Acetate","layers":[{"source":"finder:` + ds + `"}]}`)}), 201))
	mapPath := "/maps/" + fmt.Sprint(m["id"]) + ".json"
	must(t, ts.do(req{method: "PUT", path: mapPath, user: "alice", ctype: "application/json", body: []byte(share)}), 200)

	// Who sees which names beside the entries: the owner her group's
	// (not the other's: she would learn any group's name by sharing with
	// its number); the administrator every one; members who may not
	// change the list none at all.
	for _, path := range []string{dsPath, mapPath} {
		for user, want := range map[string]map[string]string{
			"alice": {f: "Field team", a: "", "everyone": ""},
			"admin": {f: "Field team", a: "Auditors", "everyone": ""},
			"bob":   {f: "", a: "", "everyone": ""},
			"carol": {f: "", a: "", "everyone": ""},
		} {
			doc := decode[map[string]any](t, must(t, ts.get(path, user), 200))
			if got := entryNames(t, path+" as "+user, doc["permissions"]); !reflect.DeepEqual(got, want) {
				t.Errorf("%s as %s: names %v, want %v", path, user, got, want)
			}
		}
		errorOf(t, ts.get(path, "erin"), 404, "not_found", "")
	}

	// Given edit, bob may change the list (an appliance): he sees his
	// group's name, not the one he is not in.
	edit := fmt.Sprintf(`{"permissions":[{"group_id":%s,"permissions":{"edit":true}},{"group_id":%s,"permissions":{"view":true}}]}`, f, a)
	must(t, ts.do(req{method: "PUT", path: dsPath, user: "alice", ctype: "application/json", body: []byte(edit)}), 200)
	doc := decode[map[string]any](t, must(t, ts.get(dsPath, "bob"), 200))
	if got := entryNames(t, "bob the editor", doc["permissions"]); !reflect.DeepEqual(got, map[string]string{f: "Field team", a: ""}) {
		t.Errorf("bob, who may change the list: %v", got)
	}

	// The list echoed back with its names is the same list: no change,
	// and a name sent is ignored (the number decides).
	doc = decode[map[string]any](t, must(t, ts.get(dsPath, "alice"), 200))
	perms := doc["permissions"].([]any)
	perms[0].(map[string]any)["group_name"] = "Auditors"
	echo, err := json.Marshal(map[string]any{"permissions": perms})
	if err != nil {
		t.Fatal(err)
	}
	must(t, ts.do(req{method: "PUT", path: dsPath, user: "alice", ctype: "application/json", body: echo}), 200)
	doc = decode[map[string]any](t, must(t, ts.get(dsPath, "admin"), 200))
	if got := entryNames(t, "after the echo", doc["permissions"]); !reflect.DeepEqual(got, map[string]string{f: "Field team", a: "Auditors"}) {
		t.Errorf("after the echo: %v", got)
	}

	// A group deleted leaves the lists; the names go with it.
	must(t, ts.do(req{method: "DELETE", path: "/groups/" + f + ".json", user: "admin"}), 204)
	doc = decode[map[string]any](t, must(t, ts.get(dsPath, "admin"), 200))
	if got := entryNames(t, "after the deletion", doc["permissions"]); !reflect.DeepEqual(got, map[string]string{a: "Auditors"}) {
		t.Errorf("after deleting the group: %v", got)
	}
}
