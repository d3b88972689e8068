package searchdoc

import (
	"testing"

	"mapcommons"
)

func TestOrderBy(t *testing.T) {
	for _, c := range []struct {
		sort    string
		desc    bool
		highest bool
		want    string
	}{
		{mapcommons.SortTitle, false, false, "T, s.docid"},
		{mapcommons.SortCreated, true, false, "s.created_at DESC, s.docid DESC"},
		{"", false, true, "S DESC, I"},
		{"", true, true, "S, I DESC"},
		{"", false, false, "S, I"},
		{"", true, false, "S DESC, I DESC"},
	} {
		f := &mapcommons.SearchFilter{Sort: c.sort, Descending: c.desc}
		if got := OrderBy(f, "T", "S", c.highest, "I"); got != c.want {
			t.Errorf("%q desc %v highest %v: %q, want %q", c.sort, c.desc, c.highest, got, c.want)
		}
	}
	// Relevance without words: the newest first.
	if got := OrderBy(&mapcommons.SearchFilter{}, "T", "", true, "I"); got != "s.created_at DESC, s.docid DESC" {
		t.Errorf("no words: %q", got)
	}
	if got := OrderBy(&mapcommons.SearchFilter{Descending: true}, "T", "", true, "I"); got != "s.created_at, s.docid" {
		t.Errorf("no words, descending: %q", got)
	}
}

func TestResult(t *testing.T) {
	x := 1.0
	desc := "a map"
	row := ResultRow{kind: KindMap, mapDesc: &desc, perms: []byte("null"), minx: &x, miny: &x, maxx: &x}
	r, err := row.Result()
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != mapcommons.ModelMap || r.Description != &desc || r.Permissions == nil || r.Extent != nil {
		t.Errorf("a map's result: %+v", r)
	}
	row = ResultRow{kind: KindDataset, dsDesc: "a dataset", perms: []byte("[]"), minx: &x, miny: &x, maxx: &x, maxy: &x}
	if r, err = row.Result(); err != nil {
		t.Fatal(err)
	}
	if r.Model != mapcommons.ModelOverlay || *r.Description != "a dataset" || r.Extent == nil {
		t.Errorf("a dataset's result: %+v", r)
	}
	byID := map[int64]*mapcommons.SearchResult{2: {ID: 1}, 3: {ID: 1}}
	if out := InOrder(nil, []int64{3, 4, 2}, byID); len(out) != 2 || out[0] != byID[3] || out[1] != byID[2] {
		t.Errorf("InOrder: %v", out)
	}
}
