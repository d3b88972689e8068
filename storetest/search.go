package storetest

// The search contract: what a query matches and in which order, boxes,
// kinds, paging, the visibility filter (checked object by object against
// the policy's CanViewDataset and CanViewMap), that every write is visible
// to the next search, and that no query text is ever syntax.

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// PointsSource returns a source of one point feature at each lon,lat pair.
func PointsSource(xy ...float64) *SliceSource {
	src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}}}
	for i := 0; i+1 < len(xy); i += 2 {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(i / 2)}, Geometry: wkb.AppendPoint(nil, xy[i], xy[i+1])})
	}
	return src
}

// MustCreateDataset creates a dataset with the given metadata over the
// points xy (lon, lat pairs).
func MustCreateDataset(tb testing.TB, s mapcommons.Services, ownerID int64, title, description, tags string, xy ...float64) *mapcommons.Dataset {
	tb.Helper()
	ds := &mapcommons.Dataset{OwnerID: ownerID, Type: "csv",
		Metadata: mapcommons.Metadata{Title: title, Description: description, Tags: tags}}
	if err := s.Datasets.CreateDataset(context.Background(), ds, PointsSource(xy...)); err != nil {
		tb.Fatal(err)
	}
	return ds
}

// MustSearch runs a search of the query text (as the query parameter) with
// everything visible, changed by the options, and fails on an error.
func MustSearch(tb testing.TB, s mapcommons.Services, query string, opts ...func(*mapcommons.SearchFilter)) ([]*mapcommons.SearchResult, int64) {
	tb.Helper()
	res, total, err := Search(s, query, opts...)
	if err != nil {
		tb.Fatalf("search %q: %v", query, err)
	}
	return res, total
}

// Search runs a search like MustSearch and returns its error.
func Search(s mapcommons.Services, query string, opts ...func(*mapcommons.SearchFilter)) ([]*mapcommons.SearchResult, int64, error) {
	terms, users, err := mapcommons.ParseSearchQuery(query)
	if err != nil {
		return nil, 0, err
	}
	f := mapcommons.SearchFilter{Terms: terms, Users: users, Limit: mapcommons.MaxSearchLimit,
		Visibility: mapcommons.SearchVisibility{All: true}}
	for _, o := range opts {
		o(&f)
	}
	return s.Search.Search(context.Background(), f)
}

// keys names results as "Overlay:<id>" / "Map:<id>", in order.
func keys(res []*mapcommons.SearchResult) []string {
	out := []string{}
	for _, r := range res {
		out = append(out, fmt.Sprintf("%s:%d", r.Model, r.ID))
	}
	return out
}

func dsKey(ds *mapcommons.Dataset) string { return fmt.Sprintf("Overlay:%d", ds.ID) }
func mapKey(m *mapcommons.Map) string     { return fmt.Sprintf("Map:%d", m.ID) }

// sameSet reports whether a and b hold the same keys, in any order.
func sameSet(a, b []string) bool {
	a, b = append([]string{}, a...), append([]string{}, b...)
	sort.Strings(a)
	sort.Strings(b)
	return reflect.DeepEqual(a, b)
}

func wantKeys(t *testing.T, s mapcommons.Services, query string, want []string, opts ...func(*mapcommons.SearchFilter)) {
	t.Helper()
	res, total := MustSearch(t, s, query, opts...)
	if got := keys(res); !sameSet(got, want) || total != int64(len(want)) {
		t.Fatalf("search %q = %v (total %d), want %v", query, got, total, want)
	}
}

// RelevanceApprox is implemented by a SearchService whose relevance order
// (a relevance sort of a query with words) is not SQLite's bm25, the
// embedded store's, when RelevanceApprox returns true: the PostgreSQL
// store ranks with ts_rank_cd, the same field weights but another formula.
// For such a store the contract checks a relevance order as a set (the
// same results, any order); every other order, the results and the totals
// must be exactly the embedded store's.
type RelevanceApprox interface {
	RelevanceApprox() bool
}

// approxRelevance reports whether the search of query with opts is a
// relevance sort with words that s's store orders its own way.
func approxRelevance(s mapcommons.Services, query string, opts ...func(*mapcommons.SearchFilter)) bool {
	ra, ok := s.Search.(RelevanceApprox)
	if !ok || !ra.RelevanceApprox() {
		return false
	}
	terms, _, err := mapcommons.ParseSearchQuery(query)
	if err != nil || len(terms) == 0 {
		return false
	}
	var f mapcommons.SearchFilter
	for _, o := range opts {
		o(&f)
	}
	return f.Sort == "" || f.Sort == mapcommons.SortRelevance
}

// wantOrder checks that the search of query finds want in this order (as
// a set for a relevance order the store says is its own: RelevanceApprox).
func wantOrder(t *testing.T, s mapcommons.Services, query string, want []string, opts ...func(*mapcommons.SearchFilter)) {
	t.Helper()
	res, _ := MustSearch(t, s, query, opts...)
	got := keys(res)
	if approxRelevance(s, query, opts...) {
		if !sameSet(got, want) {
			t.Fatalf("search %q = %v, want %v (in any order: the store ranks its own way)", query, got, want)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("search %q = %v, want %v in this order", query, got, want)
	}
}

func testSearch(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("Words", func(t *testing.T) {
		s := open(t)
		alice := MustCreateUser(t, s, "alice", false)
		bob := MustCreateUser(t, s, "bob", false)
		rivers := MustCreateDataset(t, s, alice.ID, "Rivers of Ohio", "Major rivers and streams", "water, ohio", -84, 39)
		lakes := MustCreateDataset(t, s, bob.ID, "Great Lakes shoreline", "Shorelines of the lakes near Ohio", "water, lakes", -83, 42)
		york := MustCreateDataset(t, s, alice.ID, "New York counties", "Counties of the state", "counties, new york", -75, 43)
		rev := MustCreateDataset(t, s, bob.ID, "York: old and new", "Café quarters", "history", -1, 54)
		all := []string{dsKey(rivers), dsKey(lakes), dsKey(york), dsKey(rev)}

		wantKeys(t, s, "", all)
		wantKeys(t, s, "*", all)
		wantKeys(t, s, "ohio", []string{dsKey(rivers), dsKey(lakes)})
		wantKeys(t, s, "OHIO Rivers", []string{dsKey(rivers)})              // words ANDed, any case
		wantKeys(t, s, "ohio and rivers", []string{dsKey(rivers)})          // "and" connects
		wantKeys(t, s, "riv", []string{dsKey(rivers)})                      // the last word is a prefix
		wantKeys(t, s, "riv ohio", []string{})                              // only the last
		wantKeys(t, s, "shore*", []string{dsKey(lakes)})                    // an explicit prefix
		wantKeys(t, s, "cafe", []string{dsKey(rev)})                        // no diacritics
		wantKeys(t, s, `"new york"`, []string{dsKey(york)})                 // a phrase
		wantKeys(t, s, `"york new"`, []string{})                            // in that order
		wantKeys(t, s, "york new", []string{dsKey(york), dsKey(rev)})       // words in any order
		wantKeys(t, s, "title:ohio", []string{dsKey(rivers)})               // field prefixes
		wantKeys(t, s, "description:ohio", []string{dsKey(lakes)})          //
		wantKeys(t, s, "tag:ohio", []string{dsKey(rivers)})                 //
		wantKeys(t, s, "tags:water", []string{dsKey(rivers), dsKey(lakes)}) //
		wantKeys(t, s, "tag:wat", []string{})                               // a tag is whole
		wantKeys(t, s, "tag:york", []string{})                              // even within a tag of words
		wantKeys(t, s, `tag:"new york"`, []string{dsKey(york)})             //
		wantKeys(t, s, `TITLE:"new york" counties`, []string{dsKey(york)})  // prefixed and plain mix
		wantKeys(t, s, "user:alice", []string{dsKey(rivers), dsKey(york)})  //
		wantKeys(t, s, "user:ALICE ohio", []string{dsKey(rivers)})          //
		wantKeys(t, s, "user:alice user:bob", []string{})                   //
		wantKeys(t, s, "user:nobody", []string{})                           //
		wantKeys(t, s, "tag:water and tag:lakes and user:bob", []string{dsKey(lakes)})
	})
	t.Run("Ranking", func(t *testing.T) {
		s := open(t)
		inDesc := MustCreateDataset(t, s, 0, "Parcels", "Land parcels along the river basin", "land")
		inTitle := MustCreateDataset(t, s, 0, "River basin", "Outlines", "hydrology")
		inTags := MustCreateDataset(t, s, 0, "Outlines", "Shapes", "river, basin")
		wantOrder(t, s, "river basin", []string{dsKey(inTitle), dsKey(inTags), dsKey(inDesc)})
		wantOrder(t, s, "river basin", []string{dsKey(inDesc), dsKey(inTags), dsKey(inTitle)},
			func(f *mapcommons.SearchFilter) { f.Descending = true })
		// Other orders, ties broken by creation.
		wantOrder(t, s, "", []string{dsKey(inTags), dsKey(inDesc), dsKey(inTitle)},
			func(f *mapcommons.SearchFilter) { f.Sort = mapcommons.SortTitle })
		wantOrder(t, s, "", []string{dsKey(inDesc), dsKey(inTitle), dsKey(inTags)},
			func(f *mapcommons.SearchFilter) { f.Sort = mapcommons.SortCreated })
		wantOrder(t, s, "", []string{dsKey(inTags), dsKey(inTitle), dsKey(inDesc)},
			func(f *mapcommons.SearchFilter) { f.Sort = mapcommons.SortCreated; f.Descending = true })
		wantOrder(t, s, "", []string{dsKey(inTags), dsKey(inTitle), dsKey(inDesc)}) // newest first
		many := MustCreateDataset(t, s, 0, "Many", "", "", 1, 1, 2, 2, 3, 3)
		wantOrder(t, s, "", []string{dsKey(many), dsKey(inTags), dsKey(inTitle), dsKey(inDesc)},
			func(f *mapcommons.SearchFilter) { f.Sort = mapcommons.SortFeatureCount; f.Descending = true })
	})
	t.Run("BBoxAndModel", func(t *testing.T) {
		s := open(t)
		ohio := MustCreateDataset(t, s, 0, "Ohio", "", "", -84.8, 38.4, -80.5, 42)
		fiji := MustCreateDataset(t, s, 0, "Fiji", "", "", 177, -18, 179.9, -16.5)
		none := MustCreateDataset(t, s, 0, "Nowhere", "", "")
		world := &mapcommons.Map{Title: "Nothing on it", Basemap: "Acetate", Projection: mapcommons.ProjectionLonLat}
		pacific := &mapcommons.Map{Title: "Pacific", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
			Extent: &[4]float64{170, -30, -170, 10}} // crosses the antimeridian
		withLayer := &mapcommons.Map{Title: "Ohio map", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
			Layers: []mapcommons.Layer{{Source: fmt.Sprintf("finder:%d", ohio.ID)}, {Source: "url:http://example.com/x"}}}
		for _, m := range []*mapcommons.Map{world, pacific, withLayer} {
			if err := s.Maps.CreateMap(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		box := func(w, s, e, n float64) func(*mapcommons.SearchFilter) {
			return func(f *mapcommons.SearchFilter) { f.BBox = &mapcommons.BBox{W: w, S: s, E: e, N: n} }
		}
		wantKeys(t, s, "", []string{dsKey(ohio), mapKey(world), mapKey(withLayer)}, box(-82, 40, -81, 41))
		wantKeys(t, s, "ohio", []string{dsKey(ohio), mapKey(withLayer)}, box(-82, 40, -81, 41))
		wantKeys(t, s, "", []string{mapKey(world)}, box(0, 0, 1, 1))
		wantKeys(t, s, "", []string{dsKey(fiji), mapKey(world), mapKey(pacific)}, box(178, -20, -178, -10))
		wantKeys(t, s, "", []string{dsKey(fiji), mapKey(world), mapKey(pacific)}, box(175, -20, 178, -10))
		wantKeys(t, s, "", []string{mapKey(world), mapKey(pacific)}, box(-175, -20, -172, -10))
		wantKeys(t, s, "", []string{dsKey(ohio), dsKey(fiji), mapKey(world), mapKey(pacific), mapKey(withLayer)}, box(-180, -90, 180, 90))
		wantKeys(t, s, "", []string{dsKey(ohio), dsKey(fiji), dsKey(none)}, func(f *mapcommons.SearchFilter) { f.Model = mapcommons.ModelOverlay })
		wantKeys(t, s, "ohio", []string{mapKey(withLayer)}, func(f *mapcommons.SearchFilter) { f.Model = mapcommons.ModelMap })

		res, _ := MustSearch(t, s, "ohio map")
		if len(res) != 1 || res[0].Extent == nil || *res[0].Extent != (mapcommons.BBox{W: -84.8, S: 38.4, E: -80.5, N: 42}) ||
			res[0].FeatureCount != 2 || res[0].Model != mapcommons.ModelMap {
			t.Fatalf("a map takes its layers' extent and count: %+v", res)
		}
		res, _ = MustSearch(t, s, "nothing")
		if len(res) != 1 || *res[0].Extent != (mapcommons.BBox{W: -180, S: -90, E: 180, N: 90}) {
			t.Fatalf("a map with nothing shows the world: %+v", res[0].Extent)
		}
		// Refetching the dataset moves it and the map that shows it.
		if _, err := s.Datasets.ReplaceFeatures(ctx, ohio.ID, PointsSource(10, 10, 11, 11, 12, 12)); err != nil {
			t.Fatal(err)
		}
		wantKeys(t, s, "ohio", []string{}, box(-82, 40, -81, 41))
		wantKeys(t, s, "ohio", []string{dsKey(ohio), mapKey(withLayer)}, box(10.5, 10.5, 11.5, 11.5))
		res, _ = MustSearch(t, s, "ohio", func(f *mapcommons.SearchFilter) { f.Sort = mapcommons.SortFeatureCount })
		if len(res) != 2 || res[0].FeatureCount != 3 || res[1].FeatureCount != 3 {
			t.Fatalf("feature counts after a refetch: %+v %+v", res[0], res[1])
		}
		// Adding a feature far away stretches them there (an edit updates
		// the search entry's count and extent, and its spatial index).
		if _, err := s.Features.AddFeatures(ctx, ohio.ID, PointsSource(50, 60)); err != nil {
			t.Fatal(err)
		}
		wantKeys(t, s, "ohio", []string{dsKey(ohio), mapKey(withLayer)}, box(49.5, 59.5, 50.5, 60.5))
		wantKeys(t, s, "", []string{dsKey(ohio), mapKey(world), mapKey(withLayer)}, box(49.5, 59.5, 50.5, 60.5)) // through the spatial index
		res, _ = MustSearch(t, s, "ohio", func(f *mapcommons.SearchFilter) { f.Sort = mapcommons.SortFeatureCount })
		if len(res) != 2 || res[0].FeatureCount != 4 || res[1].FeatureCount != 4 || res[0].Extent.N != 60 {
			t.Fatalf("feature counts after an append: %+v %+v", res[0], res[1])
		}
		// Deleting the dataset leaves the map on the world.
		if err := s.Datasets.DeleteDataset(ctx, ohio.ID); err != nil {
			t.Fatal(err)
		}
		res, _ = MustSearch(t, s, "ohio")
		if len(res) != 1 || res[0].ID != withLayer.ID || res[0].FeatureCount != 0 || res[0].Extent.N != 85 {
			t.Fatalf("after its dataset is gone the map is %+v", res)
		}
	})
	t.Run("Paging", func(t *testing.T) {
		s := open(t)
		var all []string
		for i := 0; i < 25; i++ {
			ds := MustCreateDataset(t, s, 0, fmt.Sprintf("Item %02d", i), "paged", "")
			all = append(all, dsKey(ds))
		}
		page := func(offset int64, limit int) func(*mapcommons.SearchFilter) {
			return func(f *mapcommons.SearchFilter) { f.Offset, f.Limit, f.Sort = offset, limit, mapcommons.SortTitle }
		}
		var got []string
		for off := int64(0); off < 25; off += 10 {
			res, total := MustSearch(t, s, "paged", page(off, 10))
			if total != 25 {
				t.Fatalf("total %d", total)
			}
			got = append(got, keys(res)...)
		}
		if !reflect.DeepEqual(got, all) {
			t.Fatalf("pages = %v, want %v", got, all)
		}
		res, total := MustSearch(t, s, "paged", page(20, 10))
		if len(res) != 5 || total != 25 {
			t.Fatalf("last page: %d results, total %d", len(res), total)
		}
		res, total = MustSearch(t, s, "paged", page(1000, 10))
		if len(res) != 0 || res == nil || total != 25 {
			t.Fatalf("past the end: %v, total %d", res, total)
		}
		_, _, err := Search(s, "paged", page(0, 0))
		code(t, err, mapcommons.EINVALID)
		_, _, err = Search(s, "paged", page(-1, 10))
		code(t, err, mapcommons.EINVALID)
		_, _, err = Search(s, "", func(f *mapcommons.SearchFilter) { f.Sort = "owner" })
		code(t, err, mapcommons.EINVALID)
	})
	t.Run("Visibility", func(t *testing.T) { testSearchVisibility(t, open) })
	t.Run("MapEntries", func(t *testing.T) { testMapSearchEntries(t, open) })
	t.Run("IndexFollowsWrites", func(t *testing.T) {
		s := open(t)
		owner := MustCreateUser(t, s, "keeper", false)
		ds := MustCreateDataset(t, s, owner.ID, "Bridges", "Old bridges", "stone, arch", 5, 5)
		title, tags := "Tunnels", "rail"
		if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title, Tags: &tags}); err != nil {
			t.Fatal(err)
		}
		wantKeys(t, s, "title:bridges", []string{})
		wantKeys(t, s, "tunnels", []string{dsKey(ds)})
		wantKeys(t, s, "tag:stone", []string{})
		wantKeys(t, s, "tag:rail", []string{dsKey(ds)})
		wantKeys(t, s, "old", []string{dsKey(ds)})
		res, _ := MustSearch(t, s, "tunnels")
		if r := res[0]; r.Title != "Tunnels" || r.Tags != "rail" || r.Owner != "keeper" || r.OwnerID != owner.ID ||
			r.Description == nil || *r.Description != "Old bridges" || r.FeatureCount != 1 || r.CreatedAt.IsZero() ||
			r.Extent == nil || *r.Extent != (mapcommons.BBox{W: 5, S: 5, E: 5, N: 5}) || r.DataType != mapcommons.DataTypeDataset {
			t.Fatalf("result = %+v", r)
		}

		// Features added and deleted: the entry's count and extent follow.
		if _, err := s.Features.AddFeatures(ctx, ds.ID, PointsSource(-3, 8)); err != nil {
			t.Fatal(err)
		}
		res, _ = MustSearch(t, s, "tunnels")
		if r := res[0]; r.FeatureCount != 2 || *r.Extent != (mapcommons.BBox{W: -3, S: 5, E: 5, N: 8}) {
			t.Fatalf("after an append: %d features, extent %+v", r.FeatureCount, *r.Extent)
		}
		if err := s.Features.DeleteFeatures(ctx, ds.ID, []int64{1}); err != nil {
			t.Fatal(err)
		}
		res, _ = MustSearch(t, s, "tunnels", func(f *mapcommons.SearchFilter) { f.BBox = &mapcommons.BBox{W: -4, S: 7, E: -2, N: 9} })
		if len(res) != 0 {
			t.Fatalf("the entry keeps the extent of a deleted feature: %+v", res[0].Extent)
		}
		res, _ = MustSearch(t, s, "tunnels")
		if r := res[0]; r.FeatureCount != 1 || *r.Extent != (mapcommons.BBox{W: 5, S: 5, E: 5, N: 5}) {
			t.Fatalf("after a delete: %d features, extent %+v", r.FeatureCount, *r.Extent)
		}

		desc := "A map of canals"
		m := &mapcommons.Map{OwnerID: owner.ID, Title: "Waterways", Basemap: "Acetate", Description: &desc,
			Tags: []string{"canals", "Locks"}, Projection: mapcommons.ProjectionMercator, Extent: &[4]float64{1, 2, 3, 4},
			Permissions: []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}}}
		if err := s.Maps.CreateMap(ctx, m); err != nil {
			t.Fatal(err)
		}
		res, _ = MustSearch(t, s, "tag:locks")
		if len(res) != 1 || res[0].Model != mapcommons.ModelMap || res[0].Tags != "canals, Locks" || *res[0].Description != desc ||
			!reflect.DeepEqual(res[0].Permissions, m.Permissions) || *res[0].Extent != (mapcommons.BBox{W: 1, S: 2, E: 3, N: 4}) {
			t.Fatalf("map result = %+v", res)
		}
		if _, err := s.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
			m.Title, m.Tags, m.Description = "Roads", []string{"asphalt"}, nil
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		wantKeys(t, s, "waterways", []string{})
		wantKeys(t, s, "canals", []string{})
		wantKeys(t, s, "roads tag:asphalt", []string{mapKey(m)})
		res, _ = MustSearch(t, s, "roads")
		if res[0].Description != nil {
			t.Fatalf("a map without a description: %q", *res[0].Description)
		}
		// A failed update changes nothing.
		_, err := s.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
			m.Title = "Never"
			return mapcommons.Errorf(mapcommons.EINVALID, "no")
		})
		code(t, err, mapcommons.EINVALID)
		wantKeys(t, s, "never", []string{})
		wantKeys(t, s, "roads", []string{mapKey(m)})

		if err := s.Users.DeleteUser(ctx, owner.ID); err != nil {
			t.Fatal(err)
		}
		wantKeys(t, s, "user:keeper", []string{})
		res, _ = MustSearch(t, s, "tunnels")
		if res[0].OwnerID != 0 || res[0].Owner != "" {
			t.Fatalf("owner after the account is gone: %+v", res[0])
		}

		if err := s.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Maps.DeleteMap(ctx, m.ID); err != nil {
			t.Fatal(err)
		}
		wantKeys(t, s, "", []string{})
	})
	t.Run("QueryTextIsNeverSyntax", func(t *testing.T) {
		s := open(t)
		odd := MustCreateDataset(t, s, 0, `Quotes "and" stars * NEAR(a b) col:on OR NOT ^caret {title} -minus`, "x", "a-b, c\"d")
		for _, q := range []string{
			`"`, `""`, `"""`, `a"b`, `"unclosed`, `*`, `**`, `a*b`, `NEAR(a b)`, `NEAR`, `OR`, `NOT`, `AND`, `a OR b`,
			`a NOT b`, `-a`, `+a`, `^a`, `{title}: a`, `{title description}:x`, `title:`, `title:"`, `tag:*`, `user:`,
			`col:on`, `(a)`, `a)`, `:`, `::`, `\`, `'`, `a'b`, `%`, `_`, `;`, `--`, `/*`, `\x00`, "\u00a0", `ǅ`, `🎉`,
			`title:"a" OR "b"`, `description:* *`, `"a" * "b"`, `tag:"c""d"`, `a AND`, `AND a`, `* *`, `a:b:c`,
		} {
			if _, _, err := Search(s, q); err != nil {
				t.Errorf("query %q: %v", q, err)
			}
		}
		wantKeys(t, s, `"and" stars`, []string{dsKey(odd)})
		wantKeys(t, s, `NEAR(a b)`, []string{dsKey(odd)})
		wantKeys(t, s, `{title}`, []string{dsKey(odd)})
		wantKeys(t, s, `a OR nothing`, []string{})
		wantKeys(t, s, `tag:a-b`, []string{dsKey(odd)})
	})
}

// testSearchVisibility checks, for each kind of instance and caller, that
// a search finds exactly the objects CanViewDataset and CanViewMap let the
// caller see, and counts only those.
func testSearchVisibility(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	admin := MustCreateUser(t, s, "root", true)
	owner := MustCreateUser(t, s, "owner", false)
	other := MustCreateUser(t, s, "other", false)
	gone := MustCreateUser(t, s, "gone", false)
	member := MustCreateUser(t, s, "member", false)
	both := MustCreateUser(t, s, "both", false)
	ga, gb := MustCreateGroup(t, s, "a"), MustCreateGroup(t, s, "b")
	MustAddMember(t, s, ga, member)
	MustAddMember(t, s, ga, both)
	MustAddMember(t, s, gb, both)
	a, b := strconv.FormatInt(ga.ID, 10), strconv.FormatInt(gb.ID, 10)

	type object struct {
		key string
		ds  *mapcommons.Dataset
		m   *mapcommons.Map
	}
	perms := [][]mapcommons.Permission{
		{},
		{{Group: mapcommons.GroupEveryone, View: true}},
		{{Group: mapcommons.GroupEveryone, Download: true}},
		{{Group: mapcommons.GroupEveryone, Edit: true}},
		{{Group: mapcommons.GroupEveryone}},
		{{Group: a, View: true, Download: true, Edit: true}},
		{{Group: a}, {Group: b, View: true}},
		{{Group: b, Edit: true}},
		{{Group: a, Download: true}, {Group: mapcommons.GroupEveryone, View: true}},
	}
	var objects []object
	for _, o := range []int64{owner.ID, other.ID, gone.ID} {
		for _, p := range perms {
			ds := &mapcommons.Dataset{OwnerID: o, Type: "csv", Metadata: mapcommons.Metadata{Title: "Shared secret"}, Permissions: p}
			if err := s.Datasets.CreateDataset(ctx, ds, PointsSource(1, 1)); err != nil {
				t.Fatal(err)
			}
			objects = append(objects, object{key: dsKey(ds), ds: ds})
		}
	}
	for _, o := range []int64{owner.ID, gone.ID} {
		for _, p := range perms {
			m := &mapcommons.Map{OwnerID: o, Title: "Shared secret", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator, Permissions: p}
			if err := s.Maps.CreateMap(ctx, m); err != nil {
				t.Fatal(err)
			}
			objects = append(objects, object{key: mapKey(m), m: m})
		}
	}
	// A sharing list changed after the fact counts as it is now.
	last := objects[len(perms)-1].ds
	changed := []mapcommons.Permission{{Group: b, View: true}}
	if _, err := s.Datasets.UpdateDataset(ctx, last.ID, mapcommons.MetadataUpdate{Permissions: &changed}); err != nil {
		t.Fatal(err)
	}
	last.Permissions = changed
	if err := s.Users.DeleteUser(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	for i := range objects {
		if o := &objects[i]; o.ds != nil && o.ds.OwnerID == gone.ID {
			o.ds.OwnerID = 0
		} else if o.m != nil && o.m.OwnerID == gone.ID {
			o.m.OwnerID = 0
		}
	}
	for _, mode := range []mapcommons.Mode{mapcommons.ModeHosted, mapcommons.ModeAppliance} {
		p := mapcommons.Policy{Mode: mode}
		for _, c := range []*mapcommons.User{nil, admin, owner, other, member, both} {
			name := "anonymous"
			if c != nil {
				name = c.Login
				// As the caller of a request is: read with their groups.
				var err error
				if c, err = s.Users.FindUserByID(ctx, c.ID); err != nil {
					t.Fatal(err)
				}
			}
			var want []string
			for _, o := range objects {
				var err error
				if o.ds != nil {
					err = p.CanViewDataset(c, o.ds)
				} else {
					err = p.CanViewMap(c, o.m)
				}
				if err == nil {
					want = append(want, o.key)
				}
			}
			// Each query plan: no words, words alone, words and a column order.
			for _, q := range []string{"", "shared secret", "sort:title shared secret"} {
				sortBy := ""
				if rest, ok := strings.CutPrefix(q, "sort:title "); ok {
					q, sortBy = rest, mapcommons.SortTitle
				}
				vis := func(f *mapcommons.SearchFilter) { f.Visibility, f.Sort = p.SearchVisibility(c), sortBy }
				res, total := MustSearch(t, s, q, vis)
				if got := keys(res); !sameSet(got, want) || total != int64(len(want)) {
					t.Errorf("%s, %s, query %q: found %v (total %d), the policy lets it see %v", mode, name, q, got, total, want)
				}
				// Each result carries its object's sharing list (the rights shown are decided from it).
				for _, r := range res {
					for _, o := range objects {
						if o.key != r.Model+":"+strconv.FormatInt(r.ID, 10) {
							continue
						}
						var want []mapcommons.Permission
						if o.ds != nil {
							want = o.ds.Permissions
						} else {
							want = o.m.Permissions
						}
						if !reflect.DeepEqual(r.Permissions, want) {
							t.Errorf("%s: permissions %+v, want %+v", o.key, r.Permissions, want)
						}
					}
				}
				// Paged one at a time, the count stays that of the visible.
				res, total = MustSearch(t, s, q, vis, func(f *mapcommons.SearchFilter) { f.Limit = 1 })
				if total != int64(len(want)) || len(res) != min(1, len(want)) {
					t.Errorf("%s, %s, limit 1: %d results, total %d, want total %d", mode, name, len(res), total, len(want))
				}
			}
		}
	}
	if t.Failed() {
		t.Logf("objects: %s", strings.Join(func() []string {
			var k []string
			for _, o := range objects {
				k = append(k, o.key)
			}
			return k
		}(), " "))
	}
}
