package mapcommons_test

import (
	"math"
	"testing"

	"mapcommons"
)

func TestPolicy(t *testing.T) {
	admin := &mapcommons.User{ID: 1, Login: "admin", Admin: true}
	owner := &mapcommons.User{ID: 2, Login: "owner"}
	other := &mapcommons.User{ID: 3, Login: "other"}
	ds := &mapcommons.Dataset{ID: 9, OwnerID: owner.ID}
	orphan := &mapcommons.Dataset{ID: 10}
	private := &mapcommons.Map{ID: 11, OwnerID: owner.ID, Permissions: []mapcommons.Permission{}}
	public := &mapcommons.Map{ID: 12, OwnerID: owner.ID, Permissions: []mapcommons.Permission{{Group: "everyone", View: true}}}
	hosted := mapcommons.Policy{Mode: mapcommons.ModeHosted, Signup: true}
	appliance := mapcommons.Policy{Mode: mapcommons.ModeAppliance, Signup: true}
	closed := mapcommons.Policy{Mode: mapcommons.ModeAppliance, Signup: false}

	type rule func(p mapcommons.Policy, u *mapcommons.User) error
	rules := map[string]rule{
		"CreateUser":      func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanCreateUser(u) },
		"GrantAdmin":      func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanGrantAdmin(u) },
		"ModifyOwner":     func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanModifyUser(u, owner) },
		"DeleteOwner":     func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanDeleteUser(u, owner) },
		"CreateDataset":   func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanCreateDataset(u) },
		"ViewDataset":     func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanViewDataset(u, ds) },
		"DownloadDataset": func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanDownloadDataset(u, ds) },
		"EditDataset":     func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanEditDataset(u, ds) },
		"EditOrphan":      func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanEditDataset(u, orphan) },
		"CreateMap":       func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanCreateMap(u) },
		"ViewPrivateMap":  func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanViewMap(u, private) },
		"ViewPublicMap":   func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanViewMap(u, public) },
		"EditPrivateMap":  func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanEditMap(u, private) },
		"EditPublicMap":   func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanEditMap(u, public) },
		"ShareMap":        func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanSetMapPermissions(u, public) },
	}
	const ok, e401, e403, e404 = "", mapcommons.EUNAUTHORIZED, mapcommons.EFORBIDDEN, mapcommons.ENOTFOUND
	// want[rule][policy] = codes for anonymous, admin, owner, other.
	want := map[string]map[string][4]string{
		"CreateUser":      {"hosted": {ok, ok, ok, ok}, "appliance": {ok, ok, ok, ok}, "closed": {e401, ok, e403, e403}},
		"GrantAdmin":      {"hosted": {e401, ok, e403, e403}, "appliance": {e401, ok, e403, e403}, "closed": {e401, ok, e403, e403}},
		"ModifyOwner":     {"hosted": {e401, ok, ok, e403}, "appliance": {e401, ok, ok, e403}, "closed": {e401, ok, ok, e403}},
		"DeleteOwner":     {"hosted": {e401, ok, ok, e403}, "appliance": {e401, ok, ok, e403}, "closed": {e401, ok, ok, e403}},
		"CreateDataset":   {"hosted": {e401, ok, ok, ok}, "appliance": {e401, ok, ok, ok}, "closed": {e401, ok, ok, ok}},
		"ViewDataset":     {"hosted": {ok, ok, ok, ok}, "appliance": {e401, ok, ok, e404}, "closed": {e401, ok, ok, e404}},
		"DownloadDataset": {"hosted": {ok, ok, ok, ok}, "appliance": {e401, ok, ok, e404}, "closed": {e401, ok, ok, e404}},
		"EditDataset":     {"hosted": {e401, ok, ok, e403}, "appliance": {e401, ok, ok, e404}, "closed": {e401, ok, ok, e404}},
		"EditOrphan":      {"hosted": {e401, ok, e403, e403}, "appliance": {e401, ok, e404, e404}, "closed": {e401, ok, e404, e404}},
		"CreateMap":       {"hosted": {e401, ok, ok, ok}, "appliance": {e401, ok, ok, ok}, "closed": {e401, ok, ok, ok}},
		"ViewPrivateMap":  {"hosted": {e401, ok, ok, e404}, "appliance": {e401, ok, ok, e404}, "closed": {e401, ok, ok, e404}},
		"ViewPublicMap":   {"hosted": {ok, ok, ok, ok}, "appliance": {ok, ok, ok, ok}, "closed": {ok, ok, ok, ok}},
		"EditPrivateMap":  {"hosted": {e401, ok, ok, e404}, "appliance": {e401, ok, ok, e404}, "closed": {e401, ok, ok, e404}},
		"EditPublicMap":   {"hosted": {e401, ok, ok, e403}, "appliance": {e401, ok, ok, e403}, "closed": {e401, ok, ok, e403}},
		"ShareMap":        {"hosted": {e401, ok, e403, e403}, "appliance": {e401, ok, ok, e403}, "closed": {e401, ok, ok, e403}},
	}
	policies := map[string]mapcommons.Policy{"hosted": hosted, "appliance": appliance, "closed": closed}
	callers := []*mapcommons.User{nil, admin, owner, other}
	for name, r := range rules {
		for pname, p := range policies {
			for i, u := range callers {
				got := mapcommons.ErrorCode(r(p, u))
				if exp := want[name][pname][i]; got != exp {
					t.Errorf("%s/%s/caller %d: %q, want %q", name, pname, i, got, exp)
				}
			}
		}
	}
	if !hosted.CanSeeUserDetails(owner, owner) || !hosted.CanSeeUserDetails(admin, owner) || hosted.CanSeeUserDetails(other, owner) || hosted.CanSeeUserDetails(nil, owner) {
		t.Error("CanSeeUserDetails")
	}
}

func TestStatsAccumulator(t *testing.T) {
	a := mapcommons.NewStatsAccumulator()
	if _, ok := a.Result(); ok {
		t.Fatal("stats of nothing")
	}
	for _, v := range []float64{4, 1, 3, 2, math.NaN(), math.Inf(1)} {
		a.Add(v)
	}
	s, ok := a.Result()
	if !ok || s.Min != 1 || s.Max != 4 || s.Mean != 2.5 || s.Median != 2.5 || s.Variance != 1.25 || s.Stdev != math.Sqrt(1.25) {
		t.Fatalf("stats %+v", s)
	}
	a.Drop()
	if s, _ := a.Result(); !math.IsNaN(s.Median) {
		t.Fatalf("median after Drop %v", s.Median)
	}
	a.SetMedian(7)
	if s, _ := a.Result(); s.Median != 7 || a.Kept() != 0 {
		t.Fatalf("median after SetMedian %v", s.Median)
	}
	if m := mapcommons.Median([]float64{5, 1, 3}); m != 3 {
		t.Fatalf("odd median %v", m)
	}
}

func TestNormalizeAttributes(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "Name"}, {Name: "name"}, {Name: " "}, {Name: "geometry"}, {Name: "NAME_2"}, {Name: "x"}}
	if err := mapcommons.NormalizeAttributes(attrs); err != nil {
		t.Fatal(err)
	}
	want := []string{"Name", "name_2", "column_3", "geometry_2", "NAME_2_2", "x"}
	for i, a := range attrs {
		if a.Name != want[i] || a.ID != int64(i) {
			t.Errorf("attribute %d = %q (id %d), want %q", i, a.Name, a.ID, want[i])
		}
	}
	if attrs[1].OriginalName != "name" || attrs[3].OriginalName != "geometry" {
		t.Errorf("original names lost: %+v", attrs)
	}
	if err := mapcommons.NormalizeAttributes(make([]mapcommons.Attribute, mapcommons.MaxAttributes+1)); mapcommons.ErrorCode(err) != mapcommons.EINVALID {
		t.Errorf("too many attributes: %v", err)
	}
}

func TestNormalizeTags(t *testing.T) {
	for in, want := range map[string]string{
		"a b  c":             "a, b, c",
		"Economics, GDP,gdp": "economics, gdp",
		"":                   "",
		"new york, boston":   "new york, boston",
	} {
		if got := mapcommons.NormalizeTags(in); got != want {
			t.Errorf("NormalizeTags(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateUser(t *testing.T) {
	for _, l := range []string{"alice", "a.b-c_d", "A1"} {
		if err := mapcommons.ValidateLogin(l); err != nil {
			t.Errorf("login %q: %v", l, err)
		}
	}
	for _, l := range []string{"", "123", "-a", "a b", "a/b", "ab\u00e9", "x123456789012345678901234567890123456789012"} {
		if err := mapcommons.ValidateLogin(l); mapcommons.ErrorCode(err) != mapcommons.EINVALID {
			t.Errorf("login %q accepted", l)
		}
	}
	if err := mapcommons.ValidatePassword("secret1", "secret2"); err == nil {
		t.Error("mismatch accepted")
	}
	if err := mapcommons.ValidateEmail("Ann <ann@example.com>"); err == nil {
		t.Error("display-name address accepted")
	}
	h, err := mapcommons.HashPassword("secret1", 4)
	if err != nil || !mapcommons.CheckPassword(h, "secret1") || mapcommons.CheckPassword(h, "secret2") {
		t.Error("bcrypt round trip")
	}
}
