package sqlitebulk

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"mapcommons/format/wkb"
)

// randomBoxes returns n boxes: points and small and large rectangles, some
// outside the extent hint, some sharing a centre.
func randomBoxes(n int, seed uint64) []wkb.Rect {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]wkb.Rect, n)
	for i := range out {
		x, y := rng.Float64()*360-180, rng.Float64()*180-90
		switch i % 5 {
		case 0: // a point
			out[i] = wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}
		case 1: // small
			out[i] = wkb.Rect{MinX: x, MinY: y, MaxX: x + rng.Float64(), MaxY: y + rng.Float64()}
		case 2: // large, crossing the extent
			out[i] = wkb.Rect{MinX: x - 100, MinY: y - 50, MaxX: x + 100, MaxY: y + 50}
		case 3: // far outside the extent hint
			out[i] = wkb.Rect{MinX: x * 1e5, MinY: y * 1e5, MaxX: x*1e5 + 1, MaxY: y*1e5 + 1}
		default: // the same as the previous one
			out[i] = out[i-1]
		}
	}
	return out
}

// build writes boxes into two R*Trees of one new file: "bulk" through
// RTree, "plain" through INSERTs into the virtual table. Box i has id
// stride*i + 1.
func build(t *testing.T, boxes []wkb.Rect, pageSize int, stride int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rtree.db")
	db, err := Create(path, 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(fmt.Sprintf("PRAGMA page_size=%d;", pageSize) + `BEGIN;
CREATE VIRTUAL TABLE bulk USING rtree(id, minx, maxx, miny, maxy);
CREATE VIRTUAL TABLE plain USING rtree(id, minx, maxx, miny, maxy);`); err != nil {
		t.Fatal(err)
	}
	spill := t.TempDir()
	tree := NewRTree(db, "bulk", wkb.Rect{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}, spill)
	plain, err := db.Prepare(`INSERT INTO plain VALUES (?, ?, ?, ?, ?)`, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for i, r := range boxes {
		id := stride*int64(i) + 1
		if err := tree.Add(id, r); err != nil {
			t.Fatal(err)
		}
		plain.Args[0].Value, plain.Args[1].Value, plain.Args[2].Value, plain.Args[3].Value, plain.Args[4].Value = id, r.MinX, r.MaxX, r.MinY, r.MaxY
		if err := plain.Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if tree.Len() != int64(len(boxes)) {
		t.Fatalf("Len %d", tree.Len())
	}
	if err := tree.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(spill); len(left) != 0 {
		t.Errorf("spill files left: %v", left)
	}
	if err := db.Exec(`COMMIT`); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRTree(t *testing.T) {
	defer func(n, c int) { SortRun, rowidChunk = n, c }(SortRun, rowidChunk)
	rowidChunk = 1000 // several statements of the map from row to leaf
	const big = 1 << 18
	for _, c := range []struct {
		n, run, page int
		stride       int64 // box i has id stride*i + 1
	}{
		// 51 cells a node with 4 KiB pages: one leaf, two, a root over
		// leaves, three levels.
		{0, big, 4096, 3}, {1, big, 4096, 3}, {50, big, 4096, 3}, {51, big, 4096, 3}, {52, big, 4096, 3}, {103, big, 4096, 3},
		{51 * 51, big, 4096, 3}, {51*51 + 1, big, 4096, 3},
		// 18 cells a node with 512-byte pages: four levels.
		{6000, big, 512, 3},
		// Spilled and merged runs.
		{3000, 1000, 4096, 3}, {1500, 7, 4096, 3}, {500, 1, 4096, 3}, {2 * 1024, 1024, 4096, 3},
		// Sparse ids (the map from row to leaf as sorted pairs), in one
		// statement and in four.
		{999, big, 4096, 1 << 30}, {3001, big, 4096, 1 << 28},
	} {
		n, stride := c.n, c.stride
		SortRun = c.run
		t.Run(fmt.Sprint(n, "/", c.run, "/", c.page, "/", stride), func(t *testing.T) {
			boxes := randomBoxes(n, uint64(n))
			path := build(t, boxes, c.page, stride)
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()

			// The tree has the height a packed tree of n boxes has.
			var root []byte
			if err := db.QueryRow(`SELECT data FROM bulk_node WHERE nodeno = 1`).Scan(&root); err != nil {
				t.Fatal(err)
			}
			cells := (len(root) - 4) / cellSize
			want := 0
			for m := n; m > cells; m = (m + cells - 1) / cells {
				want++
			}
			if depth := int(root[0])<<8 | int(root[1]); n > 0 && depth != want {
				t.Errorf("depth %d, want %d (%d cells a node)", depth, want, cells)
			}
			if c.page == 512 && want != 3 {
				t.Errorf("the small-page case has depth %d", want)
			}
			// SQLite's own consistency check of the tree.
			var check string
			if err := db.QueryRow(`SELECT rtreecheck('bulk')`).Scan(&check); err != nil || check != "ok" {
				t.Fatalf("rtreecheck: %q, %v", check, err)
			}
			// The same entries, rounded the same way, as SQLite's inserts.
			if got, want := entries(t, db, "bulk"), entries(t, db, "plain"); !reflect.DeepEqual(got, want) {
				t.Fatalf("entries differ: %d vs %d", len(got), len(want))
			}
			// Searches find what a scan finds.
			rng := rand.New(rand.NewPCG(9, 9))
			for q := 0; q < 50; q++ {
				x, y := rng.Float64()*400-200, rng.Float64()*200-100
				w, h := rng.Float64()*60, rng.Float64()*30
				query := `SELECT id FROM %s WHERE maxx >= ? AND minx <= ? AND maxy >= ? AND miny <= ? ORDER BY id`
				got := ids(t, db, fmt.Sprintf(query, "bulk"), x, x+w, y, y+h)
				want := ids(t, db, fmt.Sprintf(query, "plain"), x, x+w, y, y+h)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("search %v: %v, want %v", []float64{x, y, w, h}, got, want)
				}
			}
			// The packed tree takes edits as any other.
			if n > 0 {
				if _, err := db.Exec(`DELETE FROM bulk WHERE id IN (SELECT id FROM bulk ORDER BY id LIMIT 30);
INSERT INTO bulk VALUES (1000000, 1, 2, 3, 4);`); err != nil {
					t.Fatal(err)
				}
				if err := db.QueryRow(`SELECT rtreecheck('bulk')`).Scan(&check); err != nil || check != "ok" {
					t.Fatalf("rtreecheck after edits: %q, %v", check, err)
				}
			}
		})
	}
}

func entries(t *testing.T, db *sql.DB, table string) [][5]float64 {
	t.Helper()
	rows, err := db.Query(`SELECT id, minx, maxx, miny, maxy FROM ` + table + ` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][5]float64
	for rows.Next() {
		var e [5]float64
		if err := rows.Scan(&e[0], &e[1], &e[2], &e[3], &e[4]); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func ids(t *testing.T, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		out = append(out, id)
	}
	return out
}

func TestRounding(t *testing.T) {
	for _, d := range []float64{0, 1, -1, 0.1, -0.1, 179.99999999, -179.99999999, 1e-45, -1e-45, 1e-300, -1e-300, 3.4e38, math.Pi, -math.Pi} {
		lo, hi := down(d), up(d)
		if float64(lo) > d || float64(hi) < d {
			t.Errorf("%v: down %v, up %v", d, lo, hi)
		}
		if float64(float32(d)) == d && (lo != float32(d) || hi != float32(d)) {
			t.Errorf("%v: exact value moved: %v %v", d, lo, hi)
		}
	}
}

func TestBuildCancelled(t *testing.T) {
	db, err := Create(filepath.Join(t.TempDir(), "x.db"), 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(`BEGIN; CREATE VIRTUAL TABLE r USING rtree(id, a, b, c, d)`); err != nil {
		t.Fatal(err)
	}
	tree := NewRTree(db, "r", wkb.Rect{}, "")
	for i, r := range randomBoxes(3*checkEvery, 1) {
		if err := tree.Add(int64(i+1), r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tree.Build(ctx); err != context.Canceled {
		t.Errorf("Build = %v", err)
	}
}

func TestRTreeBadIDs(t *testing.T) {
	db, err := Create(filepath.Join(t.TempDir(), "x.db"), 1024)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Exec(`BEGIN; CREATE VIRTUAL TABLE r USING rtree(id, a, b, c, d)`); err != nil {
		t.Fatal(err)
	}
	r := wkb.Rect{MinX: 1, MinY: 1, MaxX: 2, MaxY: 2}
	tree := NewRTree(db, "r", wkb.Rect{}, "")
	if tree.Add(0, r) == nil || tree.Add(-5, r) == nil || tree.Add(1<<41, r) == nil {
		t.Error("bad ids accepted")
	}
	tree.Add(3, r)
	tree.Add(3, r)
	if err := tree.Build(context.Background()); err == nil {
		t.Error("duplicate id accepted")
	}
	tree = NewRTree(db, "r", wkb.Rect{}, "")
	tree.Add(1<<39, r)
	tree.Add(7, r)
	tree.Add(1<<39, r)
	if err := tree.Build(context.Background()); err == nil {
		t.Error("duplicate sparse id accepted")
	}
}

func TestColumnNames(t *testing.T) {
	got := ColumnNames([]string{"a", "A", "fid", "Geom", "", "a_2", " ", "x\x00", "Ä", "ä"}, "fid", "geom")
	want := []string{"a", "A_2", "fid_2", "Geom_2", "column_5", "a_2_2", "column_7", "x_", "Ä", "ä"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestQuote(t *testing.T) {
	if got := Quote(`a "b"`); got != `"a ""b"""` {
		t.Errorf("Quote: %s", got)
	}
	if got := Literal(`it's`); got != `'it''s'` {
		t.Errorf("Literal: %s", got)
	}
}

func TestValue(t *testing.T) {
	for _, c := range []struct{ in, out any }{
		{nil, nil}, {int64(3), int64(3)}, {"s", "s"}, {1.5, 1.5}, {math.NaN(), nil},
		{true, int64(1)}, {false, int64(0)}, {7, int64(7)}, {[]byte("b"), "b"}, {uint8(9), "9"},
	} {
		if got := Value(c.in); !reflect.DeepEqual(got, c.out) {
			t.Errorf("Value(%#v) = %#v, want %#v", c.in, got, c.out)
		}
	}
}

func TestCreateAwkwardPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a ?b#c%20d.db")
	db, err := Create(path, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(`CREATE TABLE x (a)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), "SQLite format 3\x00") {
		t.Errorf("%q: %v, %.16q", path, err, b)
	}
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("files %v", files)
	}
}
