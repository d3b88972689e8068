package mapcommons_test

import (
	"reflect"
	"strings"
	"testing"

	"mapcommons"
)

func TestParseSearchQuery(t *testing.T) {
	type T = mapcommons.SearchTerm
	for _, tc := range []struct {
		q     string
		terms []T
		users []string
	}{
		{"", nil, nil},
		{"  *  ", nil, nil},
		{"water", []T{{Text: "water", Prefix: true}}, nil},
		{"ohio rivers", []T{{Text: "ohio"}, {Text: "rivers", Prefix: true}}, nil},
		{`"new york" counties`, []T{{Text: "new york", Phrase: true}, {Text: "counties", Prefix: true}}, nil},
		{`counties "new york"`, []T{{Text: "counties"}, {Text: "new york", Phrase: true}}, nil},
		{"title:water Description:Lakes", []T{{Field: "title", Text: "water"}, {Field: "description", Text: "Lakes", Prefix: true}}, nil},
		{"tag:economics", []T{{Field: "tags", Text: "economics"}}, nil},
		{"tags:a tag:b*", []T{{Field: "tags", Text: "a"}, {Field: "tags", Text: "b", Prefix: true}}, nil},
		{`tag:"new york"`, []T{{Field: "tags", Text: "new york", Phrase: true}}, nil},
		{"tag:a and tag:b and user:u", []T{{Field: "tags", Text: "a"}, {Field: "tags", Text: "b"}}, []string{"u"}},
		{"user:bob user:\"al ice\"", nil, []string{"bob", "al ice"}},
		{"user: title:", nil, nil},
		{"shore*", []T{{Text: "shore", Prefix: true}}, nil},
		{"http://example.com/x", []T{{Text: "http://example.com/x", Prefix: true}}, nil},
		{"foo:bar", []T{{Text: "foo:bar", Prefix: true}}, nil},
		{`"unclosed phrase`, []T{{Text: "unclosed phrase", Phrase: true}}, nil},
		{`- "" ** !! and AND`, nil, nil},
		{`a"b`, []T{{Text: `a"b`, Prefix: true}}, nil},
		{"\tcafé\u00a0crème ", []T{{Text: "café"}, {Text: "crème", Prefix: true}}, nil},
	} {
		terms, users, err := mapcommons.ParseSearchQuery(tc.q)
		if err != nil {
			t.Errorf("%q: %v", tc.q, err)
			continue
		}
		if !reflect.DeepEqual(terms, tc.terms) || !reflect.DeepEqual(users, tc.users) {
			t.Errorf("%q = %+v %q, want %+v %q", tc.q, terms, users, tc.terms, tc.users)
		}
	}
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, q := range []string{strings.Repeat("a", mapcommons.MaxSearchQueryLen+1), strings.Repeat("a ", mapcommons.MaxSearchTerms+1), "\xff"} {
			if _, _, err := mapcommons.ParseSearchQuery(q); mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.HasPrefix(mapcommons.ErrorMessage(err), "query:") {
				t.Errorf("%.20q: %v", q, err)
			}
		}
	})
}

func TestSearchFilterValidate(t *testing.T) {
	ok := mapcommons.SearchFilter{Limit: 10}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		param string
		mut   func(*mapcommons.SearchFilter)
	}{
		{"model", func(f *mapcommons.SearchFilter) { f.Model = "Refinement" }},
		{"sort", func(f *mapcommons.SearchFilter) { f.Sort = "owner" }},
		{"limit", func(f *mapcommons.SearchFilter) { f.Limit = 0 }},
		{"limit", func(f *mapcommons.SearchFilter) { f.Limit = 101 }},
		{"page", func(f *mapcommons.SearchFilter) { f.Offset = -1 }},
		{"bbox", func(f *mapcommons.SearchFilter) { f.BBox = &mapcommons.BBox{W: 0, S: 10, E: 1, N: 5} }},
		{"bbox", func(f *mapcommons.SearchFilter) { f.BBox = &mapcommons.BBox{W: 0, S: -91, E: 1, N: 5} }},
		{"query", func(f *mapcommons.SearchFilter) { f.Terms = []mapcommons.SearchTerm{{Field: "owner", Text: "x"}} }},
	} {
		f := ok
		tc.mut(&f)
		err := f.Validate()
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.HasPrefix(mapcommons.ErrorMessage(err), tc.param+":") {
			t.Errorf("%s: %v", tc.param, err)
		}
	}
}

// TestSearchVisibility checks that the search form of the view rules agrees
// with CanViewDataset and CanViewMap on every kind of instance, caller and
// object.
func TestSearchVisibility(t *testing.T) {
	admin := &mapcommons.User{ID: 1, Admin: true}
	owner := &mapcommons.User{ID: 2}
	other := &mapcommons.User{ID: 3}
	member := &mapcommons.User{ID: 4, GroupIDs: []int64{7}}
	both := &mapcommons.User{ID: 5, GroupIDs: []int64{7, 8}}
	perms := [][]mapcommons.Permission{
		{}, {{Group: "everyone", View: true}}, {{Group: "everyone", Download: true}}, {{Group: "everyone", Edit: true}},
		{{Group: "everyone"}}, {{Group: "7", View: true}}, {{Group: "7"}, {Group: "8", Edit: true}}, {{Group: "8", Download: true}},
	}
	for _, mode := range []mapcommons.Mode{mapcommons.ModeHosted, mapcommons.ModeAppliance} {
		p := mapcommons.Policy{Mode: mode}
		for _, c := range []*mapcommons.User{nil, admin, owner, other, member, both} {
			v := p.SearchVisibility(c)
			for _, ownerID := range []int64{0, owner.ID} {
				for _, pm := range perms {
					ds := &mapcommons.Dataset{ID: 1, OwnerID: ownerID, Permissions: pm}
					if got, want := v.Allows(mapcommons.ModelOverlay, ownerID, pm), p.CanViewDataset(c, ds) == nil; got != want {
						t.Errorf("%s caller %+v dataset owner %d perms %+v: search %v, view %v", mode, c, ownerID, pm, got, want)
					}
					r := &mapcommons.SearchResult{Model: mapcommons.ModelOverlay, ID: 1, OwnerID: ownerID, Permissions: pm}
					if got := p.SearchRights(c, r); got.View != (p.CanViewDataset(c, ds) == nil) || got.Edit != (p.CanEditDataset(c, ds) == nil) ||
						got.Download != (p.CanDownloadDataset(c, ds) == nil) {
						t.Errorf("%s caller %+v dataset rights %+v", mode, c, got)
					}
					m := &mapcommons.Map{ID: 1, OwnerID: ownerID, Permissions: pm}
					if got, want := v.Allows(mapcommons.ModelMap, ownerID, pm), p.CanViewMap(c, m) == nil; got != want {
						t.Errorf("%s caller %+v map owner %d perms %+v: search %v, view %v", mode, c, ownerID, pm, got, want)
					}
					r = &mapcommons.SearchResult{Model: mapcommons.ModelMap, ID: 1, OwnerID: ownerID, Permissions: pm}
					if got := p.SearchRights(c, r); got.View != (p.CanViewMap(c, m) == nil) || got.Edit != (p.CanEditMap(c, m) == nil) {
						t.Errorf("%s caller %+v map rights %+v", mode, c, got)
					}
				}
			}
		}
	}
}
