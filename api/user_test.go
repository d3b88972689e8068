package api_test

import (
	"net/http"
	"testing"

	"mapcommons"
)

const form = "application/x-www-form-urlencoded"

func TestUserCreate(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	ok := []struct {
		name  string
		ctype string
		body  string
		query string
		login string
	}{
		{"RailsForm", form, "user[login]=carol&user[password]=pass123&user[password_confirmation]=pass123&user[email]=carol@example.com&user[fullname]=Carol+C", "", "carol"},
		{"PythonCapitalU", form, "User[login]=dave&User[password]=pass123&User[password_confirmation]=pass123&User[email]=dave@example.com&User[fullname]=Dave", "", "dave"},
		{"JSONFullName", "application/json", `{"user":{"full_name":"Tim MacSmith","login":"tim","password":"pass123","password_confirmation":"pass123","email":"tim@example.com"}}`, "", "tim"},
		{"QueryOnly", "application/xml; charset=utf-8", "", "?user%5Blogin%5D=erin&user%5Bpassword%5D=pass123&user%5Bpassword_confirmation%5D=pass123&user%5Bemail%5D=erin%40example.com", "erin"},
	}
	for _, c := range ok {
		t.Run("OK"+c.name, func(t *testing.T) {
			w := ts.do(req{method: "POST", path: "/users.json" + c.query, ctype: c.ctype, body: []byte(c.body)})
			body := must(t, w, http.StatusCreated)
			if loc := w.Header().Get("Location"); loc != base+"/users/"+c.login+".json" {
				t.Fatalf("Location %q", loc)
			}
			doc := decode[map[string]map[string]any](t, body)
			u := doc["User"]
			if u["login"] != c.login || u["id"] == nil || u["email"] != c.login+"@example.com" {
				t.Fatalf("body %s", body)
			}
			if _, isFloat := u["id"].(float64); !isFloat {
				t.Fatalf("id is not a number: %s", body)
			}
			// The new user can log in.
			must(t, ts.do(req{method: "GET", path: "/users/" + c.login + ".json", header: map[string]string{"Authorization": basic(c.login, "pass123")}}), 200)
		})
	}
	golden(t, "user_full.json", must(t, ts.get("/users/tim.json", "admin"), 200))
	golden(t, "user_public.json", must(t, ts.get("/users/tim.json", ""), 200))
	if got := decode[map[string]map[string]any](t, must(t, ts.get("/users/tim.json", "admin"), 200))["User"]["fullname"]; got != "Tim MacSmith" {
		t.Fatalf("full_name not stored: %v", got)
	}

	bad := []struct {
		name, body, field, code string
		status                  int
	}{
		{"ErrMismatch", "user[login]=frank&user[password]=pass123&user[password_confirmation]=other12&user[email]=f@example.com", "password", "invalid", 400},
		{"ErrBlankLogin", "user[password]=pass123&user[password_confirmation]=pass123&user[email]=f@example.com", "login", "invalid", 400},
		{"ErrBadEmail", "user[login]=frank&user[password]=pass123&user[password_confirmation]=pass123&user[email]=nope", "email", "invalid", 400},
		{"ErrShortPassword", "user[login]=frank&user[password]=abc&user[password_confirmation]=abc&user[email]=f@example.com", "password", "invalid", 400},
		{"ErrBadLogin", "user[login]=a+b&user[password]=pass123&user[password_confirmation]=pass123&user[email]=f@example.com", "login", "invalid", 400},
		{"ErrDuplicate", "user[login]=ALICE&user[password]=pass123&user[password_confirmation]=pass123&user[email]=f@example.com", "login", "conflict", 409},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			m := errorOf(t, ts.do(req{method: "POST", path: "/users.json", ctype: form, body: []byte(c.body)}), c.status, c.code, c.field)
			if _, ok := m[c.field].([]any); !ok {
				t.Fatalf("no per-field message for %s: %v", c.field, m)
			}
		})
	}
	t.Run("ErrAdminByNonAdmin", func(t *testing.T) {
		body := "user[login]=mallory&user[password]=pass123&user[password_confirmation]=pass123&user[email]=m@example.com&user[admin]=1"
		errorOf(t, ts.do(req{method: "POST", path: "/users.json", user: "alice", ctype: form, body: []byte(body)}), 403, "forbidden", "administrator")
		errorOf(t, ts.do(req{method: "POST", path: "/users.json", ctype: form, body: []byte(body)}), 401, "unauthorized", "")
		must(t, ts.do(req{method: "POST", path: "/users.json", user: "admin", ctype: form, body: []byte(body)}), 201)
	})
}

func TestUserSignupClosed(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *apiConfig) { c.Mode = mapcommons.ModeAppliance; c.Signup = false })
	body := []byte("user[login]=zed&user[password]=pass123&user[password_confirmation]=pass123&user[email]=z@example.com")
	errorOf(t, ts.do(req{method: "POST", path: "/users.json", ctype: form, body: body}), 401, "unauthorized", "authentication")
	errorOf(t, ts.do(req{method: "POST", path: "/users.json", user: "alice", ctype: form, body: body}), 403, "forbidden", "sign-up")
	must(t, ts.do(req{method: "POST", path: "/users.json", user: "admin", ctype: form, body: body}), 201)
}

func TestUserGetUpdateDelete(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	t.Run("GetPublicAndFull", func(t *testing.T) {
		pub := decode[map[string]map[string]any](t, must(t, ts.get("/users/alice.json", ""), 200))["User"]
		if pub["login"] != "alice" || pub["email"] != nil || pub["fullname"] != nil {
			t.Fatalf("public view %v", pub)
		}
		id := int64(pub["id"].(float64))
		for _, who := range []string{"alice", "admin"} {
			full := decode[map[string]map[string]any](t, must(t, ts.get("/users/alice.json", who), 200))["User"]
			if full["email"] != "alice@example.com" || full["fullname"] != "Full alice" {
				t.Fatalf("%s sees %v", who, full)
			}
		}
		if other := decode[map[string]map[string]any](t, must(t, ts.get("/users/alice.json", "bob"), 200))["User"]; other["email"] != nil {
			t.Fatalf("bob sees alice's e-mail")
		}
		// By numeric id, as the Python client addresses users.
		byID := decode[map[string]map[string]any](t, must(t, ts.get("/users/"+itoa(id)+".json", ""), 200))["User"]
		if byID["login"] != "alice" {
			t.Fatalf("by id: %v", byID)
		}
		errorOf(t, ts.get("/users/nobody.json", ""), 404, "not_found", "nobody")
	})
	t.Run("UpdateSelfByID", func(t *testing.T) {
		id := userID(t, ts, "alice")
		// What the Python client sends: User[login], User[id] and the fields.
		w := ts.do(req{method: "PUT", path: "/users/" + itoa(id) + ".json", user: "alice", ctype: form,
			body: []byte("User[login]=alice&User[id]=" + itoa(id) + "&User[email]=new@example.com&User[fullname]=Alice+New")})
		u := decode[map[string]map[string]any](t, must(t, w, 200))["User"]
		if u["email"] != "new@example.com" || u["fullname"] != "Alice New" {
			t.Fatalf("updated %v", u)
		}
	})
	t.Run("ErrUpdateOther", func(t *testing.T) {
		errorOf(t, ts.do(req{method: "PUT", path: "/users/alice.json", user: "bob", ctype: form, body: []byte("user[email]=x@example.com")}), 403, "forbidden", "alice")
		errorOf(t, ts.do(req{method: "PUT", path: "/users/alice.json", ctype: form, body: []byte("user[email]=x@example.com")}), 401, "unauthorized", "")
		errorOf(t, ts.do(req{method: "PUT", path: "/users/alice.json", user: "alice", ctype: form, body: []byte("user[password]=abcdefg&user[password_confirmation]=abcdefh")}), 400, "invalid", "confirmation")
		errorOf(t, ts.do(req{method: "PUT", path: "/users/alice.json", user: "alice", ctype: form, body: []byte("user[admin]=true")}), 403, "forbidden", "administrator")
	})
	t.Run("Delete", func(t *testing.T) {
		errorOf(t, ts.do(req{method: "DELETE", path: "/users/bob.json", user: "alice"}), 403, "forbidden", "bob")
		w := ts.do(req{method: "DELETE", path: "/users/bob.json", user: "bob"})
		if body := must(t, w, 204); len(body) != 0 || w.Header().Get("Status") != "204 No Content" {
			t.Fatalf("delete answered %q with Status %q", body, w.Header().Get("Status"))
		}
		errorOf(t, ts.get("/users/bob.json", ""), 404, "not_found", "bob")
		must(t, ts.do(req{method: "DELETE", path: "/users/alice.json", user: "admin"}), 204)
	})
}
