package sqlitebulk

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

func TestGeometryCode(t *testing.T) {
	for mask, want := range map[uint32]int{0: 0, 1: 0, 1 << 1: 1, 1<<1 | 1: 1, 1 << 6: 6, 1 << 7: 7, 1<<1 | 1<<4: 0, 1 << 8: 0} {
		if got := GeometryCode(mask); got != want {
			t.Errorf("GeometryCode(%b) = %d, want %d", mask, got, want)
		}
	}
}

func TestLoaded(t *testing.T) {
	l := Loaded{Mask: 1 << 1, Extent: wkb.EmptyRect}
	if l.TypeCode(1) != 1 || l.TypeCode(0) != 0 || l.TypeCode(3) != 0 {
		t.Errorf("TypeCode of %b", l.Mask)
	}
	if a, b, c, d := l.Bounds(); a != nil || b != nil || c != nil || d != nil {
		t.Errorf("Bounds of no extent: %v %v %v %v", a, b, c, d)
	}
	l.Extent = wkb.Rect{MinX: 1, MinY: 2, MaxX: 3, MaxY: 4}
	if a, b, c, d := l.Bounds(); a != 1.0 || b != 2.0 || c != 3.0 || d != 4.0 {
		t.Errorf("Bounds: %v %v %v %v", a, b, c, d)
	}
}

func TestAttributeColumns(t *testing.T) {
	got := AttributeColumns([]mapcommons.Attribute{{Name: "a"}, {Name: "ID"}, {Name: ""}}, "id")
	if want := []string{"a", "ID_2", "column_3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLoadFeatures loads features with the geometry between two
// attributes; a geometry Encode leaves out of the index, and one it stores
// as NULL.
func TestLoadFeatures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	feats := []mapcommons.Feature{
		{Values: []any{"a", int64(1)}, Geometry: wkb.AppendPoint(nil, 1, 2)},
		{Values: []any{"b"}, Geometry: wkb.AppendLineString(nil, []float64{0, 0, 3, 4})},
		{Values: []any{nil, true}},
		{Values: []any{"d", 2.5}, Geometry: wkb.AppendPoint(nil, -1, -1)},
	}
	var loaded Loaded
	err := WriteFile(context.Background(), path, "test", func(db *File) error {
		if err := db.Exec(`BEGIN; CREATE TABLE t (id INTEGER PRIMARY KEY, s, g, n); CREATE VIRTUAL TABLE idx USING rtree(id, minx, maxx, miny, maxy);`); err != nil {
			return err
		}
		var err error
		loaded, err = db.LoadFeatures(context.Background(), FeatureTable{
			Table: "t", Columns: []string{"s", "n"}, Geometry: "g", GeometryAt: 1, Index: "idx",
			Encode: func(buf, g []byte) ([]byte, uint32, wkb.Rect, bool, error) {
				if len(g) == 0 {
					return nil, 0, wkb.Rect{}, false, nil
				}
				r, _, err := wkb.BoundsOf(g)
				return append(buf, g...), uint32(g[1]), r, r.MinX >= 0, err
			},
		}, func(fn func(*mapcommons.Feature) error) error {
			for i := range feats {
				if err := fn(&feats[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		return db.Exec("COMMIT")
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Loaded{Count: 4, Mask: 1<<1 | 1<<2, Extent: wkb.Rect{MinX: 0, MinY: 0, MaxX: 3, MaxY: 4}}); loaded != want {
		t.Errorf("loaded %+v, want %+v", loaded, want)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, ids string
	if err := db.QueryRow(`SELECT group_concat(id || ' ' || coalesce(s, '-') || ' ' || coalesce(length(g), '-') || ' ' || coalesce(n, '-'), ', ') FROM t`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if want := "1 a 21 1, 2 b 41 -, 3 - - 1, 4 d 21 2.5"; rows != want {
		t.Errorf("rows %q, want %q", rows, want)
	}
	if err := db.QueryRow(`SELECT group_concat(id, ' ') FROM (SELECT id FROM idx ORDER BY id)`).Scan(&ids); err != nil || ids != "1 2" {
		t.Errorf("index %q, %v", ids, err)
	}
}

func TestWriteFileErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.db")
	boom := errors.New("boom")
	if err := WriteFile(context.Background(), path, "pfx", func(*File) error { return boom }); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "pfx: ") {
		t.Errorf("error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := WriteFile(ctx, path, "pfx", func(*File) error { cancel(); return boom }); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
	if err := WriteFile(ctx, path, "pfx", func(*File) error { t.Error("called"); return nil }); err != context.Canceled {
		t.Errorf("cancelled before: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
}
