package api

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"mapcommons"
)

// TestDatasetETagParts: a dataset's validator changes with each thing the
// answer depends on (the caller and their groups, the sharing list, the
// dataset's version and time, the format, path, query and base URL) and
// only with those.
func TestDatasetETagParts(t *testing.T) {
	s := &Server{policy: mapcommons.Policy{Mode: mapcommons.ModeAppliance}}
	base := mapcommons.Dataset{ID: 7, Version: 3, OwnerID: 1, UpdatedAt: time.Unix(1700000000, 5),
		Permissions: []mapcommons.Permission{{Group: "everyone", View: true}}}
	tag := func(path string, user *mapcommons.User, ds mapcommons.Dataset, f string) string {
		r := httptest.NewRequest("GET", "http://example.org"+path, nil)
		if user != nil {
			r = r.WithContext(context.WithValue(r.Context(), requestKey{}, &request{user: user}))
		}
		return s.datasetETag(r, &ds, f)
	}
	bob := &mapcommons.User{ID: 2, Login: "bob", GroupIDs: []int64{4}}
	want := tag("/datasets/7/features.json?limit=5", bob, base, "features.json")
	if want != tag("/datasets/7/features.json?limit=5", bob, base, "features.json") {
		t.Fatal("the same answer has two tags")
	}
	if want[:len(`W/"d7-3-`)] != `W/"d7-3-` {
		t.Fatalf("tag %s: want the id and version first", want)
	}
	with := func(edit func(*mapcommons.Dataset)) mapcommons.Dataset {
		ds := base
		ds.Permissions = append([]mapcommons.Permission(nil), base.Permissions...)
		edit(&ds)
		return ds
	}
	seen := map[string]string{want: "the first"}
	for name, got := range map[string]string{
		"another query":    tag("/datasets/7/features.json?limit=6", bob, base, "features.json"),
		"another path":     tag("/datasets/7/features.geojson?limit=5", bob, base, "features.json"),
		"another format":   tag("/datasets/7/features.json?limit=5", bob, base, "features.geojson"),
		"anonymous":        tag("/datasets/7/features.json?limit=5", nil, base, "features.json"),
		"another group":    tag("/datasets/7/features.json?limit=5", &mapcommons.User{ID: 2, Login: "bob", GroupIDs: []int64{5}}, base, "features.json"),
		"the owner":        tag("/datasets/7/features.json?limit=5", &mapcommons.User{ID: 1, Login: "bob", GroupIDs: []int64{4}}, base, "features.json"),
		"an administrator": tag("/datasets/7/features.json?limit=5", &mapcommons.User{ID: 2, Login: "bob", Admin: true, GroupIDs: []int64{4}}, base, "features.json"),
		"download shared":  tag("/datasets/7/features.json?limit=5", bob, with(func(d *mapcommons.Dataset) { d.Permissions[0].Download = true }), "features.json"),
		"another group shared": tag("/datasets/7/features.json?limit=5", bob,
			with(func(d *mapcommons.Dataset) {
				d.Permissions = append(d.Permissions, mapcommons.Permission{Group: "9", View: true})
			}), "features.json"),
		"a new version": tag("/datasets/7/features.json?limit=5", bob, with(func(d *mapcommons.Dataset) { d.Version++ }), "features.json"),
		"a new time":    tag("/datasets/7/features.json?limit=5", bob, with(func(d *mapcommons.Dataset) { d.UpdatedAt = d.UpdatedAt.Add(time.Nanosecond) }), "features.json"),
	} {
		if other, ok := seen[got]; ok {
			t.Errorf("%s: the tag of %s (%s)", name, other, got)
		}
		seen[got] = name
	}
	// Another host is another base URL of the answer's links.
	r := httptest.NewRequest("GET", "http://other.example.org/datasets/7/features.json?limit=5", nil)
	r = r.WithContext(context.WithValue(r.Context(), requestKey{}, &request{user: bob}))
	if s.datasetETag(r, &base, "features.json") == want {
		t.Error("another base URL: the same tag")
	}
	// A request with a body has no tag.
	r = httptest.NewRequest("GET", "http://example.org/datasets/7/features.json", nil)
	r.ContentLength = 5
	if got := s.datasetETag(r, &base, "features.json"); got != "" {
		t.Errorf("a request with a body: tag %s", got)
	}
}
