package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/internal/sqlitetest"
	"mapcommons/storetest"
)

// searchTitles are titles whose words the two stores must split alike:
// diacritics, case beyond ASCII, punctuation inside words, scripts.
var searchTitles = []string{
	"Café Zürich", "naïve résumé", "e-mail x.y@z.com and www.example.org/path", "ÅNGSTRÖM 2024-06-01",
	"Straße", "ΑΘΗΝΑ Αθήνα", "東京 地図", "C++ & C# 3.14", "U.S.A. counties", "œuvre Ærø", "São Paulo_zona",
	"über-Über", "Ελλάδα", "Москва реки", "it's o'clock", "Dvořák", "under_score", "1st 2nd 3rd", "ǅemal",
	"Jose\u0301 decomposed", "Найти путь", "Ŀlibre ĳssel", "ﬁsh ½ ²", "e\u0301x", "ab\ue000cd", "x\u200dy", "q\u0489r",
}

// searchQueries are queries over searchTitles.
var searchQueries = []string{
	"cafe", "CAFÉ", "zurich", "naive resume", "e", "mail", "x", "z.com", "com", "example", "org/path", "angstrom",
	"2024", "06", "strasse", "straße", "αθηνα", "ΑΘΉΝΑ", "東京", "東", "c", "3.14", "14", "u.s.a", "usa", "usa.",
	"oeuvre", "œuvre", "aero", "ærø", "sao", "paulo_zona", "zona", "paulo", "uber", "ελλαδα", "москва", "моск",
	"it", "it's", "s", "o'clock", "clock", "dvorak", "under", "score", "1st", "st", "ǆemal", "dzemal", `"x y"`,
	`"cafe zurich"`, `"zurich cafe"`, `title:"über über"`, "description:cafe", "tag:cafe", "é", "a", "counties u",
	"tag:wat*", "tag:wat", "tags:new*", "tag:new", `tag:"new york"`, "tag:york", "tag:rio", "tag:río", "tag:été",
	"tag:ete", "tag:a-b", "tag:a", "tag:b", "description:soundings", "soundings c", `description:"soundings c"`, "river",
	"jose", "josé", "jose\u0301", "наити", "найти", "llibre", "ŀlibre", "ijssel", "ĳssel", "fish", "ﬁsh", "½", "1", "2", "²", "ex", "e", "ab", "cd", "ab\ue000cd", "xy", "y", "qr", "q",
}

// TestSearchLikeSQLite searches the same objects on both stores: the same
// results, in the same order for every order but relevance (and there as
// a set: RelevanceApprox).
func TestSearchLikeSQLite(t *testing.T) {
	pg := open(t)
	lite := sqlitetest.Open(t, filepath.Join(t.TempDir(), "mapcommons.db")).Services()
	for _, s := range []mapcommons.Services{pg, lite} {
		for i, title := range searchTitles {
			tags := []string{"water, new york", "Río, ÉTÉ", "a-b, c"}[i%3]
			storetest.MustCreateDataset(t, s, 0, title, "Soundings "+string([]rune(title)[:1]), tags, float64(i), float64(i))
		}
	}
	for _, q := range searchQueries {
		for _, sort := range []string{mapcommons.SortRelevance, mapcommons.SortTitle, mapcommons.SortCreated} {
			opt := func(f *mapcommons.SearchFilter) { f.Sort = sort }
			got, gotTotal := storetest.MustSearch(t, pg, q, opt)
			want, wantTotal := storetest.MustSearch(t, lite, q, opt)
			g, w := titles(got), titles(want)
			if sort == mapcommons.SortRelevance {
				g, w = slices.Sorted(slices.Values(g)), slices.Sorted(slices.Values(w))
			}
			if !reflect.DeepEqual(g, w) || gotTotal != wantTotal {
				t.Errorf("query %q, sort %s: PostgreSQL finds %q (%d), SQLite %q (%d)", q, sort, g, gotTotal, w, wantTotal)
			}
		}
	}
}

func titles(res []*mapcommons.SearchResult) []string {
	out := []string{}
	for _, r := range res {
		out = append(out, r.Title)
	}
	return out
}

// TestSearchRanking checks the relevance order the contract checks only
// as a set on PostgreSQL: a match in the title first, then in the tags,
// then in the description, and the reverse.
func TestSearchRanking(t *testing.T) {
	s := open(t)
	if ra, ok := s.Search.(storetest.RelevanceApprox); !ok || !ra.RelevanceApprox() {
		t.Fatal("the store does not say its relevance order is its own")
	}
	inDesc := storetest.MustCreateDataset(t, s, 0, "Parcels", "Land parcels along the river basin", "land")
	inTitle := storetest.MustCreateDataset(t, s, 0, "River basin", "Outlines", "hydrology")
	inTags := storetest.MustCreateDataset(t, s, 0, "Outlines", "Shapes", "river, basin")
	m := &mapcommons.Map{Title: "Basins", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator, Tags: []string{"river"}}
	if err := s.Maps.CreateMap(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	key := func(model string, id int64) string { return fmt.Sprintf("%s:%d", model, id) }
	want := []string{key("Overlay", inTitle.ID), key("Overlay", inTags.ID), key("Map", m.ID), key("Overlay", inDesc.ID)}
	for _, desc := range []bool{false, true} {
		res, total := storetest.MustSearch(t, s, "river basin", func(f *mapcommons.SearchFilter) { f.Descending = desc })
		var got []string
		for _, r := range res {
			got = append(got, key(r.Model, r.ID))
		}
		if desc {
			want = []string{want[3], want[2], want[1], want[0]}
		}
		if !reflect.DeepEqual(got, want) || total != 4 {
			t.Errorf("descending %v: %v (total %d), want %v", desc, got, total, want)
		}
	}
}

// TestSearchExistingData: a database whose datasets and maps predate
// migration 0005 (or were written by a server without search) gets their
// entries when a store opens it, the same as those written with them.
func TestSearchExistingData(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := pgtest.OpenURL(t, url).Services()
	owner := storetest.MustCreateUser(t, s, "olga", false)
	g := storetest.MustCreateGroup(t, s, "survey")
	ds := storetest.MustCreateDataset(t, s, owner.ID, "Wells", "Drilled wells", "water, wells", 7, 8, 9, 10)
	perms := []mapcommons.Permission{{Group: fmt.Sprint(g.ID), View: true}}
	if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &perms}); err != nil {
		t.Fatal(err)
	}
	m := &mapcommons.Map{OwnerID: owner.ID, Title: "Well map", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
		Layers:      []mapcommons.Layer{{Source: fmt.Sprintf("finder:%d", ds.ID)}},
		Permissions: []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}}}
	if err := s.Maps.CreateMap(ctx, m); err != nil {
		t.Fatal(err)
	}
	before, total := storetest.MustSearch(t, s, "")
	if total != 2 {
		t.Fatalf("%d entries", total)
	}

	// The database as it was before migration 0005.
	conn := rawConn(t, url)
	if _, err := conn.Exec(ctx, `DROP TABLE search_docs, search_map_datasets;
		DELETE FROM schema_migrations WHERE name = 'migrations/0005_search.sql'`); err != nil {
		t.Fatal(err)
	}
	db := pgtest.OpenURL(t, url)
	if !reflect.DeepEqual(db.Applied, []string{"0005_search.sql"}) {
		t.Fatalf("applied %v", db.Applied)
	}
	after, _ := storetest.MustSearch(t, db.Services(), "")
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("entries after the migration:\n%+v\n%+v\nwant\n%+v\n%+v", after[0], after[1], before[0], before[1])
	}
	// The map's list of datasets is back too: a change of the dataset
	// reaches the map's entry.
	if err := db.Services().Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	res, _ := storetest.MustSearch(t, db.Services(), "well map")
	if len(res) != 1 || res[0].FeatureCount != 0 {
		t.Fatalf("the map's entry after its dataset went: %+v", res)
	}

	// An entry missing (a server without search wrote the object) comes
	// back at the next open; an entry whose object is gone goes.
	if _, err := conn.Exec(ctx, `DELETE FROM search_docs WHERE kind = 1;
		INSERT INTO search_docs (docid, kind, obj_id, title, description, tags, words, shared, feature_count, created_at, updated_at)
		VALUES (2 * 999999, 0, 999999, 'Ghost', '', '', '', true, 0, now(), now())`); err != nil {
		t.Fatal(err)
	}
	storetest.MustSearch(t, db.Services(), "") // no error on the broken state
	s2 := pgtest.OpenURL(t, url).Services()
	res, total = storetest.MustSearch(t, s2, "")
	if total != 1 || res[0].Model != mapcommons.ModelMap || res[0].ID != m.ID {
		t.Fatalf("after an open: %+v", res)
	}
}

// TestSearchLongText: a description longer than a tsvector holds is
// stored whole, and its first words are found.
func TestSearchLongText(t *testing.T) {
	s := open(t)
	var b strings.Builder
	for i := range 400000 {
		fmt.Fprintf(&b, "w%d ", i) // 400000 distinct words, 3 MB
	}
	ds := storetest.MustCreateDataset(t, s, 0, "Long", b.String(), "")
	for _, q := range []string{"w0", "w1000", "long"} {
		res, _ := storetest.MustSearch(t, s, q)
		if len(res) != 1 || res[0].ID != ds.ID || *res[0].Description != b.String() {
			t.Fatalf("search %q: %d results", q, len(res))
		}
	}
	long := strings.Repeat("x", 3000)
	ds2 := storetest.MustCreateDataset(t, s, 0, "Longest word "+long, "", "")
	res, _ := storetest.MustSearch(t, s, "longest")
	if len(res) != 1 || res[0].ID != ds2.ID {
		t.Fatalf("a title with a word too long for the index: %+v", res)
	}
	// Searching for such a word finds nothing (a tsquery cannot hold it:
	// it was an error). The API's queries are shorter (1,000 bytes at
	// most), the store's terms are not.
	for _, terms := range [][]mapcommons.SearchTerm{{{Text: long}}, {{Text: "longest"}, {Text: long, Prefix: true}}, {{Text: "longest " + long}}} {
		res, total := storetest.MustSearch(t, s, "", func(f *mapcommons.SearchFilter) { f.Terms = terms })
		if len(res) != 0 || total != 0 {
			t.Fatalf("search for a %d-byte word: %d results", len(long), total)
		}
	}
}
