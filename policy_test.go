package mapcommons_test

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
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
		"SecondFactor":    func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanSetUpSecondFactor(u, owner) },
		"SignInLink":      func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanIssueSignInLink(u, owner) },
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
		"SecondFactor":    {"hosted": {e401, e403, ok, e403}, "appliance": {e401, e403, ok, e403}, "closed": {e401, e403, ok, e403}},
		"SignInLink":      {"hosted": {e401, ok, e403, e403}, "appliance": {e401, ok, e403, e403}, "closed": {e401, ok, e403, e403}},
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

// TestPolicyGroups checks the rules with sharing lists: members of a group
// with view, with download and with edit, a user in no group and an
// anonymous caller, on objects shared with the groups only, and with
// everyone too.
func TestPolicyGroups(t *testing.T) {
	owner := &mapcommons.User{ID: 2, Login: "owner"}
	other := &mapcommons.User{ID: 3, Login: "other", GroupIDs: []int64{99}}
	viewer := &mapcommons.User{ID: 4, Login: "viewer", GroupIDs: []int64{1}}
	downloader := &mapcommons.User{ID: 5, Login: "downloader", GroupIDs: []int64{2, 98}}
	editor := &mapcommons.User{ID: 6, Login: "editor", GroupIDs: []int64{3}}
	groups := []mapcommons.Permission{{Group: "1", View: true}, {Group: "2", Download: true}, {Group: "3", Edit: true}}
	withEveryone := func(e mapcommons.Permission) []mapcommons.Permission {
		return append([]mapcommons.Permission{e}, groups...)
	}
	dsG := &mapcommons.Dataset{ID: 9, OwnerID: owner.ID, Permissions: groups}
	dsV := &mapcommons.Dataset{ID: 10, OwnerID: owner.ID, Permissions: withEveryone(mapcommons.Permission{Group: "everyone", View: true})}
	dsE := &mapcommons.Dataset{ID: 11, OwnerID: owner.ID, Permissions: withEveryone(mapcommons.Permission{Group: "everyone", Edit: true})}
	mG := &mapcommons.Map{ID: 12, OwnerID: owner.ID, Permissions: groups}
	mV := &mapcommons.Map{ID: 13, OwnerID: owner.ID, Permissions: withEveryone(mapcommons.Permission{Group: "everyone", View: true})}
	hosted := mapcommons.Policy{Mode: mapcommons.ModeHosted}
	appliance := mapcommons.Policy{Mode: mapcommons.ModeAppliance}

	type rule func(p mapcommons.Policy, u *mapcommons.User) error
	ds := func(f func(mapcommons.Policy, *mapcommons.User, *mapcommons.Dataset) error, d *mapcommons.Dataset) rule {
		return func(p mapcommons.Policy, u *mapcommons.User) error { return f(p, u, d) }
	}
	mp := func(f func(mapcommons.Policy, *mapcommons.User, *mapcommons.Map) error, m *mapcommons.Map) rule {
		return func(p mapcommons.Policy, u *mapcommons.User) error { return f(p, u, m) }
	}
	rules := map[string]rule{
		"ViewG":       ds(mapcommons.Policy.CanViewDataset, dsG),
		"DownloadG":   ds(mapcommons.Policy.CanDownloadDataset, dsG),
		"EditG":       ds(mapcommons.Policy.CanEditDataset, dsG),
		"DeleteG":     ds(mapcommons.Policy.CanDeleteDataset, dsG),
		"ShareG":      ds(mapcommons.Policy.CanSetDatasetPermissions, dsG),
		"ViewV":       ds(mapcommons.Policy.CanViewDataset, dsV),
		"DownloadV":   ds(mapcommons.Policy.CanDownloadDataset, dsV),
		"EditV":       ds(mapcommons.Policy.CanEditDataset, dsV),
		"DownloadE":   ds(mapcommons.Policy.CanDownloadDataset, dsE),
		"EditE":       ds(mapcommons.Policy.CanEditDataset, dsE),
		"DeleteE":     ds(mapcommons.Policy.CanDeleteDataset, dsE),
		"ViewMapG":    mp(mapcommons.Policy.CanViewMap, mG),
		"EditMapG":    mp(mapcommons.Policy.CanEditMap, mG),
		"DeleteMapG":  mp(mapcommons.Policy.CanDeleteMap, mG),
		"ShareMapG":   mp(mapcommons.Policy.CanSetMapPermissions, mG),
		"ViewMapV":    mp(mapcommons.Policy.CanViewMap, mV),
		"EditMapV":    mp(mapcommons.Policy.CanEditMap, mV),
		"DeleteMapV":  mp(mapcommons.Policy.CanDeleteMap, mV),
		"ManageGroup": func(p mapcommons.Policy, u *mapcommons.User) error { return p.CanManageGroups(u) },
	}
	const ok, e401, e403, e404 = "", mapcommons.EUNAUTHORIZED, mapcommons.EFORBIDDEN, mapcommons.ENOTFOUND
	// want[rule][policy] = codes for anonymous, other, viewer, downloader, editor.
	want := map[string]map[string][5]string{
		"ViewG":       {"hosted": {ok, ok, ok, ok, ok}, "appliance": {e401, e404, ok, ok, ok}},
		"DownloadG":   {"hosted": {ok, ok, ok, ok, ok}, "appliance": {e401, e404, e403, ok, ok}},
		"EditG":       {"hosted": {e401, e403, e403, e403, ok}, "appliance": {e401, e404, e403, e403, ok}},
		"DeleteG":     {"hosted": {e401, e403, e403, e403, e403}, "appliance": {e401, e404, e403, e403, e403}},
		"ShareG":      {"hosted": {e401, e403, e403, e403, e403}, "appliance": {e401, e404, e403, e403, ok}},
		"ViewV":       {"hosted": {ok, ok, ok, ok, ok}, "appliance": {ok, ok, ok, ok, ok}},
		"DownloadV":   {"hosted": {ok, ok, ok, ok, ok}, "appliance": {e401, e403, e403, ok, ok}},
		"EditV":       {"hosted": {e401, e403, e403, e403, ok}, "appliance": {e401, e403, e403, e403, ok}},
		"DownloadE":   {"hosted": {ok, ok, ok, ok, ok}, "appliance": {ok, ok, ok, ok, ok}},
		"EditE":       {"hosted": {e401, ok, ok, ok, ok}, "appliance": {e401, ok, ok, ok, ok}},
		"DeleteE":     {"hosted": {e401, e403, e403, e403, e403}, "appliance": {e401, e403, e403, e403, e403}},
		"ViewMapG":    {"hosted": {e401, e404, ok, ok, ok}, "appliance": {e401, e404, ok, ok, ok}},
		"EditMapG":    {"hosted": {e401, e404, e403, e403, ok}, "appliance": {e401, e404, e403, e403, ok}},
		"DeleteMapG":  {"hosted": {e401, e404, e403, e403, e403}, "appliance": {e401, e404, e403, e403, e403}},
		"ShareMapG":   {"hosted": {e401, e404, e403, e403, e403}, "appliance": {e401, e404, e403, e403, ok}},
		"ViewMapV":    {"hosted": {ok, ok, ok, ok, ok}, "appliance": {ok, ok, ok, ok, ok}},
		"EditMapV":    {"hosted": {e401, e403, e403, e403, ok}, "appliance": {e401, e403, e403, e403, ok}},
		"DeleteMapV":  {"hosted": {e401, e403, e403, e403, e403}, "appliance": {e401, e403, e403, e403, e403}},
		"ManageGroup": {"hosted": {e401, e403, e403, e403, e403}, "appliance": {e401, e403, e403, e403, e403}},
	}
	policies := map[string]mapcommons.Policy{"hosted": hosted, "appliance": appliance}
	callers := []*mapcommons.User{nil, other, viewer, downloader, editor}
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
	// The rights the search shows are the same rules.
	for _, p := range policies {
		for _, u := range callers {
			r := p.DatasetRights(u, dsG)
			if r.View != (p.CanViewDataset(u, dsG) == nil) || r.Download != (p.CanDownloadDataset(u, dsG) == nil) || r.Edit != (p.CanEditDataset(u, dsG) == nil) {
				t.Errorf("DatasetRights %+v disagrees with the Can rules", r)
			}
			if r.Edit && !r.Download || r.Download && !r.View {
				t.Errorf("rights %+v: edit implies download implies view", r)
			}
		}
	}
	// Owners and administrators have every right.
	all := mapcommons.Rights{View: true, Download: true, Edit: true}
	for _, u := range []*mapcommons.User{owner, {ID: 77, Admin: true}} {
		if appliance.DatasetRights(u, dsG) != all || appliance.MapRights(u, mG) != all {
			t.Errorf("%+v lacks rights", u)
		}
	}
}

func TestDefaultPermissions(t *testing.T) {
	everyone := []mapcommons.Permission{{Group: "everyone", View: true, Download: true}}
	hosted := mapcommons.Policy{Mode: mapcommons.ModeHosted, DefaultShare: []mapcommons.Permission{{Group: "5", Edit: true}}}
	if got := hosted.DefaultDatasetPermissions(); !reflect.DeepEqual(got, everyone) {
		t.Errorf("hosted datasets: %+v", got)
	}
	if got := hosted.DefaultMapPermissions(); !reflect.DeepEqual(got, everyone) {
		t.Errorf("hosted maps: %+v", got)
	}
	private := mapcommons.Policy{Mode: mapcommons.ModeAppliance}
	if got := private.DefaultDatasetPermissions(); got == nil || len(got) != 0 {
		t.Errorf("appliance datasets: %+v", got)
	}
	share := []mapcommons.Permission{{Group: "everyone", View: true}}
	shared := mapcommons.Policy{Mode: mapcommons.ModeAppliance, DefaultShare: share}
	got := shared.DefaultMapPermissions()
	if !reflect.DeepEqual(got, share) {
		t.Errorf("appliance maps with a default share: %+v", got)
	}
	got[0].Edit = true // a copy: the policy's list stays
	if shared.DefaultDatasetPermissions()[0].Edit {
		t.Error("the default share was changed through a copy")
	}
}

func TestParseShare(t *testing.T) {
	for in, want := range map[string][]mapcommons.Permission{
		"":                         {},
		"everyone:view,download":   {{Group: "everyone", View: true, Download: true}},
		"Everyone:edit; 12:view":   {{Group: "everyone", View: true, Download: true, Edit: true}, {Group: "12", View: true}},
		"12:download 13:VIEW,edit": {{Group: "12", View: true, Download: true}, {Group: "13", View: true, Download: true, Edit: true}},
	} {
		got, err := mapcommons.ParseShare(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseShare(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"everyone", "everyone:", "staff:view", "0:view", "everyone:read", "12:view;12:edit", "-1:view"} {
		if _, err := mapcommons.ParseShare(in); mapcommons.ErrorCode(err) != mapcommons.EINVALID {
			t.Errorf("ParseShare(%q) accepted", in)
		}
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
	for _, c := range []struct {
		login, password string
		ok              bool
	}{
		{"ann", "secret1", true},
		{"ann", "ééé", true}, // 6 bytes, 3 characters
		{"ann", "éé", false}, // 4 bytes
		{"ann", strings.Repeat("é", 36), true},
		{"ann", strings.Repeat("é", 36) + "x", false}, // 73 bytes
		{"ann", "      ", false},
		{"ann", " \t\n\r  \u00a0", false},
		{"annabel", "annabel", false},
		{"annabel", "AnnaBel", false},
		{"annabel", "annabel1", true},
	} {
		err := mapcommons.ValidatePassword(c.login, c.password, c.password)
		if (err == nil) != c.ok {
			t.Errorf("ValidatePassword(%q, %q) = %v, want ok %v", c.login, c.password, err, c.ok)
		}
	}
	if err := mapcommons.ValidatePassword("ann", "secret1", "secret2"); err == nil {
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

// TestShareUnchanged: sending an object's own sharing list back needs no
// right to share; a change needs it.
func TestShareUnchanged(t *testing.T) {
	owner := &mapcommons.User{ID: 2, Login: "owner"}
	other := &mapcommons.User{ID: 3, Login: "other"}
	list := []mapcommons.Permission{{Group: "everyone", View: true, Download: true}}
	changed := []mapcommons.Permission{{Group: "everyone", View: true, Download: true, Edit: true}}
	ds := &mapcommons.Dataset{ID: 9, OwnerID: owner.ID, Permissions: list}
	m := &mapcommons.Map{ID: 12, OwnerID: owner.ID, Permissions: list}
	for _, p := range []mapcommons.Policy{{Mode: mapcommons.ModeHosted}, {Mode: mapcommons.ModeAppliance}} {
		if err := p.CanShareDataset(other, ds, list); err != nil {
			t.Errorf("%s: the same dataset list: %v", p.Mode, err)
		}
		if err := p.CanShareMap(other, m, list); err != nil {
			t.Errorf("%s: the same map list: %v", p.Mode, err)
		}
		if mapcommons.ErrorCode(p.CanShareDataset(other, ds, changed)) != mapcommons.EFORBIDDEN {
			t.Errorf("%s: another user changed a dataset's list", p.Mode)
		}
		if mapcommons.ErrorCode(p.CanShareMap(other, m, changed)) != mapcommons.EFORBIDDEN {
			t.Errorf("%s: another user changed a map's list", p.Mode)
		}
		if err, want := p.CanShareDataset(owner, ds, changed), p.CanSetDatasetPermissions(owner, ds); (err == nil) != (want == nil) {
			t.Errorf("%s: the owner's change: %v, CanSetDatasetPermissions %v", p.Mode, err, want)
		}
	}
}

// TestNotFound: a missing dataset or map is refused as a private one is:
// 401 to anonymous callers wherever objects of the kind may be private to
// them, 404 to everyone else.
func TestNotFound(t *testing.T) {
	missing := mapcommons.Errorf(mapcommons.ENOTFOUND, "gone")
	user := &mapcommons.User{ID: 2, Login: "u"}
	for _, c := range []struct {
		mode   mapcommons.Mode
		model  string
		caller *mapcommons.User
		want   string
	}{
		{mapcommons.ModeAppliance, mapcommons.ModelOverlay, nil, mapcommons.EUNAUTHORIZED},
		{mapcommons.ModeAppliance, mapcommons.ModelMap, nil, mapcommons.EUNAUTHORIZED},
		{mapcommons.ModeAppliance, mapcommons.ModelOverlay, user, mapcommons.ENOTFOUND},
		{mapcommons.ModeAppliance, mapcommons.ModelMap, user, mapcommons.ENOTFOUND},
		{mapcommons.ModeHosted, mapcommons.ModelOverlay, nil, mapcommons.ENOTFOUND}, // every dataset is public there
		{mapcommons.ModeHosted, mapcommons.ModelMap, nil, mapcommons.EUNAUTHORIZED},
		{mapcommons.ModeHosted, mapcommons.ModelMap, user, mapcommons.ENOTFOUND},
	} {
		p := mapcommons.Policy{Mode: c.mode}
		if got := mapcommons.ErrorCode(p.NotFound(c.caller, c.model, missing)); got != c.want {
			t.Errorf("%s %s caller %v: %s, want %s", c.mode, c.model, c.caller, got, c.want)
		}
	}
	// Other errors pass unchanged.
	other := mapcommons.Errorf(mapcommons.EINTERNAL, "disk")
	if got := (mapcommons.Policy{Mode: mapcommons.ModeAppliance}).NotFound(nil, mapcommons.ModelMap, other); got != other {
		t.Errorf("NotFound changed %v into %v", other, got)
	}
}

// TestStatsNeedDownload: column statistics follow download, not view.
func TestStatsNeedDownload(t *testing.T) {
	owner := &mapcommons.User{ID: 2}
	member := &mapcommons.User{ID: 3, GroupIDs: []int64{7}}
	viewOnly := &mapcommons.Dataset{ID: 1, OwnerID: 2, Permissions: []mapcommons.Permission{{Group: "everyone", View: true}, {Group: "7", View: true}}}
	download := &mapcommons.Dataset{ID: 2, OwnerID: 2, Permissions: []mapcommons.Permission{{Group: "7", Download: true}}}
	app := mapcommons.Policy{Mode: mapcommons.ModeAppliance}
	hosted := mapcommons.Policy{Mode: mapcommons.ModeHosted}
	for _, c := range []struct {
		p    mapcommons.Policy
		u    *mapcommons.User
		ds   *mapcommons.Dataset
		want bool
	}{
		{app, owner, viewOnly, true},
		{app, member, viewOnly, false},
		{app, nil, viewOnly, false},
		{app, member, download, true},
		{app, nil, download, false},
		{hosted, nil, viewOnly, true}, // everyone downloads every dataset there
	} {
		if got := c.p.CanSeeDatasetStats(c.u, c.ds); got != c.want {
			t.Errorf("%s, caller %v, dataset %d: %v, want %v", c.p.Mode, c.u, c.ds.ID, got, c.want)
		}
	}
}

// TestMapSearchShows: a map's search entry shows a dataset only when
// everyone who may see the map may see the dataset.
func TestMapSearchShows(t *testing.T) {
	owner := &mapcommons.User{ID: 2, Login: "owner"}
	member := &mapcommons.User{ID: 3, Login: "member", GroupIDs: []int64{7}}
	admin := &mapcommons.User{ID: 4, Login: "admin", Admin: true}
	everyone := mapcommons.Permission{Group: "everyone", View: true}
	g7 := mapcommons.Permission{Group: "7", View: true}
	g8 := mapcommons.Permission{Group: "8", Edit: true} // edit implies view
	perms := func(p ...mapcommons.Permission) []mapcommons.Permission { return p }
	for _, c := range []struct {
		name   string
		owner  *mapcommons.User // the map's owner
		mapP   []mapcommons.Permission
		dsOwn  int64
		dsP    []mapcommons.Permission
		want   bool
		noOwnr bool // the map has no owner
	}{
		{name: "private map, owner's private dataset", owner: owner, dsOwn: owner.ID, want: true},
		{name: "private map, another's private dataset", owner: owner, dsOwn: 9, want: false},
		{name: "private map, dataset shared with everyone", owner: owner, dsOwn: 9, dsP: perms(everyone), want: true},
		{name: "private map, dataset shared with the owner's group", owner: member, dsOwn: 9, dsP: perms(g7), want: true},
		{name: "private map, dataset shared with another group", owner: member, dsOwn: 9, dsP: perms(g8), want: false},
		{name: "private map of an administrator", owner: admin, dsOwn: 9, want: true},
		{name: "map for everyone, owner's private dataset", owner: owner, mapP: perms(everyone), dsOwn: owner.ID, want: false},
		{name: "map for everyone, dataset for everyone", owner: owner, mapP: perms(everyone), dsOwn: owner.ID, dsP: perms(everyone), want: true},
		{name: "map for everyone, dataset for a group", owner: owner, mapP: perms(everyone), dsOwn: owner.ID, dsP: perms(g7), want: false},
		{name: "map for a group, dataset for that group", owner: owner, mapP: perms(g7), dsOwn: owner.ID, dsP: perms(g7), want: true},
		{name: "map for a group, dataset for everyone", owner: owner, mapP: perms(g7), dsOwn: owner.ID, dsP: perms(everyone), want: true},
		{name: "map for a group, dataset for another", owner: owner, mapP: perms(g7), dsOwn: owner.ID, dsP: perms(g8), want: false},
		{name: "map for two groups, dataset for one", owner: owner, mapP: perms(g7, g8), dsOwn: owner.ID, dsP: perms(g7), want: false},
		{name: "map for two groups, dataset for both", owner: owner, mapP: perms(g7, g8), dsOwn: owner.ID, dsP: perms(g8, g7), want: true},
		{name: "map edit entry counts as view", owner: owner, mapP: perms(g8), dsOwn: owner.ID, want: false},
		{name: "map entry without rights counts for nothing", owner: owner, mapP: perms(mapcommons.Permission{Group: "everyone"}), dsOwn: owner.ID, want: true},
		{name: "dataset entry without view", owner: owner, mapP: perms(g7), dsOwn: owner.ID, dsP: perms(mapcommons.Permission{Group: "7"}), want: false},
		{name: "ownerless private map", noOwnr: true, dsOwn: 9, want: true}, // only administrators see it
		{name: "owner's account unknown", owner: nil, dsOwn: 9, dsP: perms(everyone), want: false},
	} {
		m := &mapcommons.Map{ID: 1, Permissions: c.mapP}
		if c.owner != nil {
			m.OwnerID = c.owner.ID
		} else if !c.noOwnr {
			m.OwnerID = 5 // an owner the caller could not load
		}
		ds := &mapcommons.Dataset{ID: 1, OwnerID: c.dsOwn, Permissions: c.dsP}
		if got := mapcommons.MapSearchShows(c.owner, m, ds); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if mapcommons.MapSearchShows(admin, &mapcommons.Map{OwnerID: admin.ID}, nil) {
		t.Error("a missing dataset shows")
	}
}

// TestMapSearchDocument: the entry sums and joins what it may show, and a
// private dataset and a missing one give the same entry.
func TestMapSearchDocument(t *testing.T) {
	owner := &mapcommons.User{ID: 2}
	pub := &mapcommons.Dataset{ID: 1, OwnerID: 9, FeatureCount: 2, Extent: &wkb.Rect{MinX: 1, MinY: 2, MaxX: 3, MaxY: 4},
		Permissions: []mapcommons.Permission{{Group: "everyone", View: true}}}
	secret := &mapcommons.Dataset{ID: 2, OwnerID: 9, FeatureCount: 5, Extent: &wkb.Rect{MinX: 50, MinY: 50, MaxX: 60, MaxY: 60}}
	lookup := func(id int64) *mapcommons.Dataset { return map[int64]*mapcommons.Dataset{1: pub, 2: secret}[id] }
	layers := func(ids ...int64) []mapcommons.Layer {
		var out []mapcommons.Layer
		for _, id := range ids {
			out = append(out, mapcommons.Layer{Source: "finder:" + strconv.FormatInt(id, 10)})
		}
		return append(out, mapcommons.Layer{Source: "url:http://example.com/x"})
	}
	shared := []mapcommons.Permission{{Group: "everyone", Download: true}}
	m := &mapcommons.Map{OwnerID: owner.ID, Permissions: shared, Projection: mapcommons.ProjectionMercator, Layers: layers(1, 2, 1)}
	got := mapcommons.MapSearchDocument(m, owner, lookup)
	if want := (mapcommons.MapSearchDoc{Shared: true, FeatureCount: 4, Extent: mapcommons.BBox{W: 1, S: 2, E: 3, N: 4}}); got != want {
		t.Errorf("with a private layer: %+v, want %+v", got, want)
	}
	m.Layers = layers(1, 99, 1)
	if missing := mapcommons.MapSearchDocument(m, owner, lookup); missing != got {
		t.Errorf("a missing dataset gives %+v, a private one %+v", missing, got)
	}
	m.Layers = layers(2)
	if got := mapcommons.MapSearchDocument(m, owner, lookup); got.FeatureCount != 0 || got.Extent != (mapcommons.BBox{W: -180, S: -85, E: 180, N: 85}) {
		t.Errorf("only a private layer: %+v", got)
	}
	m.Projection, m.Permissions = mapcommons.ProjectionLonLat, nil
	if got := mapcommons.MapSearchDocument(m, owner, lookup); got.Shared || got.Extent != (mapcommons.BBox{W: -180, S: -90, E: 180, N: 90}) {
		t.Errorf("lon/lat world: %+v", got)
	}
	m.Extent = &[4]float64{5, 6, 7, 8}
	if got := mapcommons.MapSearchDocument(m, owner, lookup); got.Extent != (mapcommons.BBox{W: 5, S: 6, E: 7, N: 8}) {
		t.Errorf("its own extent: %+v", got)
	}
}
