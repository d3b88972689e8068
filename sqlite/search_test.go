package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/sqlite"
	"mapcommons/storetest"
)

// TestSearchMigrationIndexesExisting checks that migrations 0004, 0005,
// 0006 and 0010 index the datasets and maps that were there before them, maps'
// sharing with groups included, and that a map's entry shows only the
// datasets the policy lets it show (0006).
func TestSearchMigrationIndexesExisting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mapcommons.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s := mapcommons.Services{Users: sqlite.NewUserService(db), Datasets: sqlite.NewDatasetService(db), Maps: sqlite.NewMapService(db)}
	ds := storetest.MustCreateDataset(t, s, 0, "Older rivers", "", "water", 1, 2)
	m := &mapcommons.Map{Title: "Older map", Basemap: "Acetate", Projection: mapcommons.ProjectionMercator,
		Layers:      []mapcommons.Layer{{Source: "finder:" + strconv.FormatInt(ds.ID, 10)}},
		Permissions: []mapcommons.Permission{{Group: "1", View: true}}}
	if err := s.Maps.CreateMap(ctx, m); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Undo migrations 0010, 0006, 0005 and 0004 as if the store predated them.
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"DROP TRIGGER maps_search_ad", "DROP TABLE map_datasets",
		"DROP TABLE search_fts", "DROP TABLE search_rtree", "DROP TABLE search_docs",
		"DROP TABLE search_grants", "DROP TABLE group_members", "DROP TABLE user_groups",
		"ALTER TABLE datasets DROP COLUMN permissions",
		"DELETE FROM schema_migrations WHERE name IN ('migrations/0004_search.sql', 'migrations/0005_groups.sql', " +
			"'migrations/0006_map_search.sql', 'migrations/0010_search_in_go.sql')",
	} {
		if _, err := raw.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	raw.Close()

	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s.Search = sqlite.NewSearchService(db)
	res, total := storetest.MustSearch(t, s, "older")
	if total != 2 || len(res) != 2 {
		t.Fatalf("after the migration: %d results", total)
	}
	// The dataset is private now (no sharing list), the map shared with group 1.
	for _, c := range []struct {
		v    mapcommons.SearchVisibility
		want int64
	}{{mapcommons.SearchVisibility{Shared: true}, 0}, {mapcommons.SearchVisibility{Shared: true, GroupIDs: []int64{1}}, 1}} {
		if _, total := storetest.MustSearch(t, s, "older", func(f *mapcommons.SearchFilter) { f.Visibility = c.v }); total != c.want {
			t.Fatalf("visibility %+v: %d results, want %d", c.v, total, c.want)
		}
	}
	// The map, shared with group 1, does not show the dataset group 1 may
	// not see: its entry is on the world, with no features.
	for _, r := range res {
		want, n := mapcommons.BBox{W: 1, S: 2, E: 1, N: 2}, int64(1)
		if r.Model == mapcommons.ModelMap {
			want, n = mapcommons.BBox{W: -180, S: -85, E: 180, N: 85}, 0
		}
		if r.Extent == nil || *r.Extent != want || r.FeatureCount != n {
			t.Fatalf("%s %d: extent %+v, %d features; want %+v, %d", r.Model, r.ID, r.Extent, r.FeatureCount, want, n)
		}
	}
}

// benchWords is the vocabulary of the benchmark's titles and descriptions,
// drawn with a Zipf distribution (a few words are common, most are rare).
func benchWords(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		b := make([]byte, 3+r.IntN(7))
		for i := range b {
			b[i] = letters[r.IntN(len(letters))]
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

var (
	benchOnce sync.Once
	benchDB   *sqlite.DB
	benchErr  error
	benchVoc  []string
)

// benchStore returns a store of 100,000 datasets created through
// CreateDataset (each with one point feature): titles of 3-6 words,
// descriptions of 8-20 words, 2-4 tags, spread over the world, and 100 users
// owning them. Building it takes minutes, so it is kept in the system's
// temporary directory (mapcommons-searchbench-100k) for later runs.
func benchStore(b *testing.B) (*sqlite.DB, []string) {
	benchOnce.Do(func() {
		const n = 100_000
		dir := filepath.Join(os.TempDir(), "mapcommons-searchbench-100k")
		done := filepath.Join(dir, "complete")
		_, err := os.Stat(done)
		built := err == nil
		if !built {
			if benchErr = os.RemoveAll(dir); benchErr != nil {
				return
			}
		}
		db, err := sqlite.Open(filepath.Join(dir, "mapcommons.db"))
		if err != nil {
			benchErr = err
			return
		}
		benchDB, benchVoc = db, benchWords(5000)
		if built {
			return
		}
		ctx := context.Background()
		users := sqlite.NewUserService(db)
		var owners []int64
		for i := 0; i < 100; i++ {
			u := &mapcommons.User{Login: fmt.Sprintf("user%d", i), Email: fmt.Sprintf("u%d@example.com", i), PasswordHash: "x"}
			if benchErr = users.CreateUser(ctx, u); benchErr != nil {
				return
			}
			owners = append(owners, u.ID)
		}
		r := rand.New(rand.NewPCG(3, 4))
		zipf := rand.NewZipf(rand.New(rand.NewPCG(5, 6)), 1.1, 2, uint64(len(benchVoc)-1))
		words := func(k int) string {
			ws := make([]string, k)
			for i := range ws {
				ws[i] = benchVoc[zipf.Uint64()]
			}
			return strings.Join(ws, " ")
		}
		svc := sqlite.NewDatasetService(db)
		start := time.Now()
		for i := 0; i < n; i++ {
			ds := &mapcommons.Dataset{OwnerID: owners[r.IntN(len(owners))], Type: "csv", Metadata: mapcommons.Metadata{
				Title: words(3 + r.IntN(4)), Description: words(8 + r.IntN(13)),
				Tags: mapcommons.NormalizeTags(strings.ReplaceAll(words(2+r.IntN(3)), " ", ", ")),
			}}
			src := storetest.PointsSource(r.Float64()*360-180, r.Float64()*170-85)
			if benchErr = svc.CreateDataset(ctx, ds, src); benchErr != nil {
				return
			}
		}
		fmt.Fprintf(os.Stderr, "search benchmark: created %d datasets in %s\n", n, time.Since(start).Round(time.Second))
		benchErr = os.WriteFile(done, nil, 0o644)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDB, benchVoc
}

// BenchmarkSearch measures searches over 100,000 datasets and reports the
// median (p50) and 95th percentile latency of one search (count and page).
// Its store takes minutes to build; run it with -benchtime=200x or so:
//
//	go test ./sqlite -run '^$' -bench BenchmarkSearch -benchtime 200x
func BenchmarkSearch(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a store of 100,000 datasets")
	}
	db, voc := benchStore(b)
	svc := sqlite.NewSearchService(db)
	parse := func(q string) []mapcommons.SearchTerm {
		terms, _, err := mapcommons.ParseSearchQuery(q)
		if err != nil {
			b.Fatal(err)
		}
		return terms
	}
	// Pairs of words drawn like the words of the documents themselves.
	zipf := rand.NewZipf(rand.New(rand.NewPCG(7, 8)), 1.1, 2, uint64(len(voc)-1))
	var zipfPairs []string
	for i := 0; i < 1000; i++ {
		zipfPairs = append(zipfPairs, voc[zipf.Uint64()]+" "+voc[zipf.Uint64()])
	}
	hosted := mapcommons.Policy{Mode: mapcommons.ModeHosted}.SearchVisibility(nil)
	appliance := mapcommons.Policy{Mode: mapcommons.ModeAppliance}.SearchVisibility(&mapcommons.User{ID: 7})
	for _, bc := range []struct {
		name string
		f    func(i int) mapcommons.SearchFilter
	}{
		// Two words of the common tail (ranks 20-199 of the vocabulary), ranked by relevance.
		{"TwoWords", func(i int) mapcommons.SearchFilter {
			return mapcommons.SearchFilter{Terms: parse(voc[20+i%180] + " " + voc[20+(i*7+3)%180]), Limit: 10, Visibility: hosted}
		}},
		// Two words drawn as the documents' words are (often the most common).
		{"TwoZipfWords", func(i int) mapcommons.SearchFilter {
			return mapcommons.SearchFilter{Terms: parse(zipfPairs[i%len(zipfPairs)]), Limit: 10, Visibility: hosted}
		}},
		// Two of the most common words (ranks 2-11): thousands of matches to rank.
		{"TwoCommonWords", func(i int) mapcommons.SearchFilter {
			return mapcommons.SearchFilter{Terms: parse(voc[2+i%10] + " " + voc[2+(i+3)%10]), Limit: 10, Visibility: hosted}
		}},
		{"TwoWordsBBox", func(i int) mapcommons.SearchFilter {
			return mapcommons.SearchFilter{Terms: parse(voc[20+i%180] + " " + voc[20+(i*7+3)%180]), Limit: 10, Visibility: hosted,
				BBox: &mapcommons.BBox{W: -30, S: -20, E: 60, N: 50}}
		}},
		{"TwoWordsAppliance", func(i int) mapcommons.SearchFilter {
			return mapcommons.SearchFilter{Terms: parse(voc[20+i%180] + " " + voc[20+(i*7+3)%180]), Limit: 10, Visibility: appliance}
		}},
		{"EverythingNewest", func(i int) mapcommons.SearchFilter {
			return mapcommons.SearchFilter{Limit: 10, Offset: int64(i%10) * 10, Visibility: hosted}
		}},
		{"BBoxOnly", func(i int) mapcommons.SearchFilter {
			return mapcommons.SearchFilter{Limit: 10, Visibility: hosted, BBox: &mapcommons.BBox{W: float64(i%300) - 150, S: -10, E: float64(i%300) - 140, N: 10}}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			var times []time.Duration
			var found int64
			i := 0
			for b.Loop() {
				f := bc.f(i)
				i++
				t0 := time.Now()
				_, total, err := svc.Search(ctx, f)
				times = append(times, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				found += total
			}
			slices.Sort(times)
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
			b.ReportMetric(ms(times[len(times)/2]), "p50-ms")
			b.ReportMetric(ms(times[len(times)*95/100]), "p95-ms")
			b.ReportMetric(float64(found)/float64(len(times)), "matches/op")
		})
	}
}

// grantRows are the groups each dataset and map is shared with, by the
// docid of its search entry, as its sharing list says (any right).
const grantRows = `SELECT DISTINCT 2 * d.id, CAST(json_extract(p.value, '$.group_id') AS INTEGER)
FROM datasets d, json_each(d.permissions) p
WHERE json_extract(p.value, '$.group_id') != 'everyone'
	AND (json_extract(p.value, '$.view') OR json_extract(p.value, '$.download') OR json_extract(p.value, '$.edit'))
UNION
SELECT DISTINCT 2 * m.id + 1, CAST(json_extract(p.value, '$.group_id') AS INTEGER)
FROM maps m, json_each(m.permissions) p
WHERE json_extract(p.value, '$.group_id') != 'everyone'
	AND (json_extract(p.value, '$.view') OR json_extract(p.value, '$.download') OR json_extract(p.value, '$.edit'))`

// TestSearchGrantsFollowWrites checks that the index of which groups may
// find what (search_grants, kept by triggers) always equals what the
// sharing lists say, through creates, updates, group and object deletes.
// What they say is read here in SQL (grantRows), apart from the Go that
// writes the grants.
func TestSearchGrantsFollowWrites(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mapcommons.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := mapcommons.Services{Users: sqlite.NewUserService(db), Datasets: sqlite.NewDatasetService(db),
		Maps: sqlite.NewMapService(db), Groups: sqlite.NewGroupService(db)}
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	check := func(step string, wantRows int) {
		t.Helper()
		var n, diff int
		if err := raw.QueryRow(`SELECT count(*) FROM search_grants`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := raw.QueryRow(`WITH lists (docid, group_id) AS (` + grantRows + `) SELECT count(*) FROM (
			SELECT group_id, docid FROM search_grants EXCEPT SELECT group_id, docid FROM lists
			UNION ALL SELECT group_id, docid FROM lists EXCEPT SELECT group_id, docid FROM search_grants)`).Scan(&diff); err != nil {
			t.Fatal(err)
		}
		if diff != 0 || n != wantRows {
			t.Fatalf("%s: %d grants (want %d), %d differ from the sharing lists", step, n, wantRows, diff)
		}
	}
	g1, g2 := storetest.MustCreateGroup(t, s, "one"), storetest.MustCreateGroup(t, s, "two")
	one, two := strconv.FormatInt(g1.ID, 10), strconv.FormatInt(g2.ID, 10)
	ds := &mapcommons.Dataset{Type: "csv", Permissions: []mapcommons.Permission{{Group: one, View: true}, {Group: two}}}
	if err := s.Datasets.CreateDataset(ctx, ds, storetest.PointsSource(1, 2)); err != nil {
		t.Fatal(err)
	}
	check("dataset created", 1)
	m := &mapcommons.Map{Title: "m", Basemap: "b", Projection: mapcommons.ProjectionMercator,
		Layers:      []mapcommons.Layer{{Source: "finder:" + strconv.FormatInt(ds.ID, 10)}},
		Permissions: []mapcommons.Permission{{Group: one, Edit: true}, {Group: two, Download: true}}}
	if err := s.Maps.CreateMap(ctx, m); err != nil {
		t.Fatal(err)
	}
	check("map created", 3)
	both := []mapcommons.Permission{{Group: one, View: true}, {Group: two, View: true}, {Group: mapcommons.GroupEveryone, View: true}}
	if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &both}); err != nil {
		t.Fatal(err)
	}
	check("dataset shared with both", 4)
	title := "renamed"
	if _, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title}); err != nil {
		t.Fatal(err) // the map showing it is reindexed too
	}
	check("dataset renamed", 4)
	if _, err := s.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error { m.Permissions = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	check("map unshared", 2)
	if err := s.Groups.DeleteGroup(ctx, g2.ID); err != nil {
		t.Fatal(err)
	}
	check("group two deleted", 1)
	if err := s.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	check("dataset deleted", 0)
}

// TestMigrationNormalURLs checks that migration 0008 brings the URLs of
// datasets registered before it to their normal form, so that they are
// found under any spelling, and that a URL whose normal form another
// dataset has already keeps its spelling.
func TestMigrationNormalURLs(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "mapcommons.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	datasets := sqlite.NewDatasetService(db)
	var ids []int64
	for _, u := range []string{"HTTP://Example.com:80/data//a.csv?", "http://example.com/b.csv", "http://example.com/./data/a.csv#x"} {
		ds := &mapcommons.Dataset{Type: "csv", URL: u, Metadata: mapcommons.Metadata{Title: u}}
		if err := datasets.CreateDataset(ctx, ds, storetest.PointsSource(1, 1)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ds.ID)
	}
	db.Close()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`DELETE FROM schema_migrations WHERE name = 'migrations/0008_normal_urls.sql'`); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	db, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	datasets = sqlite.NewDatasetService(db)
	for u, want := range map[string]int64{"http://example.com/data/a.csv": ids[0], "http://example.com/b.csv": ids[1],
		"http://example.com/./data/a.csv#x": ids[2]} {
		ds, err := datasets.FindDatasetByURL(ctx, u)
		if err != nil {
			t.Errorf("%s: %v", u, err)
		} else if ds.ID != want {
			t.Errorf("%s: dataset %d, want %d", u, ds.ID, want)
		}
	}
}
