package segment

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// writeWith writes feats with the index built runItems items at a time,
// merging fanIn runs at a time, and returns the file's bytes and the
// opened segment.
func writeWith(t *testing.T, feats []mapcommons.Feature, runItems, fanIn int) ([]byte, *Segment) {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(dir, testAttrs)
	if err != nil {
		t.Fatal(err)
	}
	if runItems > 0 {
		w.runItems, w.fanIn = runItems, fanIn
	}
	for i := range feats {
		if err := w.Add(&feats[i]); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "x.seg")
	if _, err := w.Finish(path); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.part")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return data, s
}

// referenceTree builds the index of feats in memory, as the writer did
// before it built out of core.
func referenceTree(t *testing.T, feats []mapcommons.Feature) tree {
	var items []item
	extent := wkb.EmptyRect
	for i, f := range feats {
		if len(f.Geometry) == 0 {
			continue
		}
		var box wkb.Rect
		if x, y, ok := wkb.StoredPoint(f.Geometry); ok {
			box = wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}
		} else {
			g, err := wkb.Decode(f.Geometry)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := g.Bounds(); !ok {
				continue
			}
			box, _ = spatial.IndexBounds(g)
		}
		items = append(items, item{box: box, pos: uint32(i)})
		extent = extent.Extend(box)
	}
	return buildTree(items, extent)
}

// TestIndexOutOfCore: the index built in runs spilled to disk and merged
// (in one pass or several) is the in-memory build's, array for array, and
// the file is the same byte for byte whatever the run size.
func TestIndexOutOfCore(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 1, 2, 15, 16, 17, 255, 256, 257, 3000} {
		feats := randomFeatures(r, n)
		if n > 100 { // many points on one spot: equal Hilbert values
			for i := 0; i < n; i += 3 {
				feats[i].Geometry = wkb.AppendPoint(nil, 1, 1)
			}
		}
		want := referenceTree(t, feats)
		whole, _ := writeWith(t, feats, 0, 0)
		for _, rf := range [][2]int{{0, 0}, {1, 2}, {7, 2}, {7, 3}, {100, 64}} {
			data, s := writeWith(t, feats, rf[0], rf[1])
			got := s.tree
			if len(got.ids) != len(want.ids) || !slices.Equal(got.boxes, want.boxes) || !slices.Equal(got.ids, want.ids) ||
				!slices.Equal(got.minPos, want.minPos) || !slices.Equal(got.maxPos, want.maxPos) || !slices.Equal(got.levels, want.levels) {
				t.Fatalf("n %d, runs of %d merged %d at a time: the tree differs from the in-memory build (levels %v, want %v)",
					n, rf[0], rf[1], got.levels, want.levels)
			}
			if !slices.Equal(data, whole) {
				t.Fatalf("n %d, runs of %d merged %d at a time: the file differs", n, rf[0], rf[1])
			}
		}
	}
}

// TestIndexCleanup: the files of the index build are removed when Finish
// fails, at whatever stage, and when it succeeds (writeWith checks that).
func TestIndexCleanup(t *testing.T) {
	feats := randomFeatures(rand.New(rand.NewPCG(23, 24)), 500)
	for _, stage := range []string{"runs", "dir"} {
		t.Run("Err_"+stage, func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewWriter(dir, testAttrs)
			if err != nil {
				t.Fatal(err)
			}
			w.runItems, w.fanIn = 10, 4
			spilled := 0
			w.hook = func(s string) error {
				spilled, _ = countFiles(dir)
				if s == stage {
					return errors.New("injected")
				}
				return nil
			}
			for i := range feats {
				if err := w.Add(&feats[i]); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, "x.seg")
			if stage == "dir" {
				path = filepath.Join(dir, "missing", "x.seg")
			}
			if _, err := w.Finish(path); err == nil {
				t.Fatal("Finish succeeded")
			}
			if stage == "runs" && spilled < 40 {
				t.Fatalf("only %d files at the stage of the runs: the build did not spill", spilled)
			}
			if n, names := countFiles(dir); n != 0 {
				t.Fatalf("%d files left after a failed Finish: %v", n, names)
			}
		})
	}
}

func countFiles(dir string) (int, []string) {
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, filepath.Base(p))
		}
		return nil
	})
	return len(names), names
}

// TestWriterMemoryBounded: the heap a writer allocates does not grow with
// the features it is given: nothing per feature while adding them (no index
// items, no null bitmaps), and, with a small run size, nothing per feature
// while finishing (no tree in memory, no copy of a column for the median).
func TestWriterMemoryBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what allocates")
	}
	const n = 200000
	attrs := []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}, {Name: "x", Type: mapcommons.AttrFloat}}
	dir := t.TempDir()
	w, err := NewWriter(dir, attrs)
	if err != nil {
		t.Fatal(err)
	}
	w.runItems = 4096
	f := &mapcommons.Feature{Values: make([]any, 2)}
	geom := make([]byte, 0, 64)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		f.Geometry = wkb.AppendPoint(geom[:0], float64(i%360)-180, float64(i%170)-85)
		f.Values[0], f.Values[1] = nil, nil // nulls throughout
		if i%2 == 0 {
			f.Values[0], f.Values[1] = int64(i), float64(i)/7
		}
		if err := w.Add(f); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Boxing the values costs 16 bytes a feature; the old writer kept 48
	// bytes of index item and grew two bitmaps on top.
	if per := float64(after.TotalAlloc-before.TotalAlloc) / n; per > 24 {
		t.Errorf("Add allocated %.1f bytes a feature", per)
	}
	runtime.ReadMemStats(&before)
	sum, err := w.Finish(filepath.Join(dir, "x.seg"))
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// The attribute indexes sort one column at a time in memory: 24 bytes
	// a feature (keys and positions, and their radix buffers), up to
	// maxIndexFeatures; the rest of Finish does not grow with n.
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20+24*n+n/2 {
		t.Errorf("Finish allocated %d bytes for %d features", got, n)
	}
	if sum.Count != n || sum.Stats["n"].Median != float64(n/2-1) {
		t.Fatalf("summary %+v", sum)
	}
}

// TestColumnMedian: the median selected from the spooled column is
// mapcommons.Median of the values, for odd and even counts, negative
// values and zeros, duplicates, nulls, large integers and extreme floats.
func TestColumnMedian(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	attrs := []mapcommons.Attribute{{Name: "i", Type: mapcommons.AttrInteger}, {Name: "f", Type: mapcommons.AttrFloat}}
	gens := map[string]func(i int) (any, any){
		"normal":  func(int) (any, any) { return int64(r.IntN(2000) - 1000), r.NormFloat64() },
		"dups":    func(int) (any, any) { return int64(r.IntN(3)), float64(r.IntN(3)) - 1 },
		"zeros":   func(i int) (any, any) { return int64(0), []float64{0, math.Copysign(0, -1), -1e-300, 1e-300}[i%4] },
		"large":   func(int) (any, any) { return r.Int64() - math.MaxInt64/2, (r.Float64() - 0.5) * math.MaxFloat64 },
		"tiny":    func(int) (any, any) { return int64(r.IntN(5)), (r.Float64() - 0.5) * 5e-324 * float64(r.IntN(9)) },
		"nulls":   func(i int) (any, any) { return nilOr(i%3 == 0, int64(i)), nilOr(i%5 != 0, float64(-i)) },
		"nonfin":  func(i int) (any, any) { return int64(i), []float64{math.Inf(1), math.NaN(), 2, math.Inf(-1), -3}[i%5] },
		"allnull": func(i int) (any, any) { return nilOr(true, int64(0)), nilOr(i != 77, 1.5) },
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 8, 9, 100, 1001, 4096} {
			feats := make([]mapcommons.Feature, n)
			var is, fs []float64
			for i := range feats {
				a, b := gen(i)
				feats[i].Values = []any{a, b}
				if v, ok := a.(int64); ok {
					is = append(is, float64(v))
				}
				if v, ok := b.(float64); ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
					fs = append(fs, v)
				}
			}
			_, sum := write(t, attrs, feats)
			for col, vals := range map[string][]float64{"i": is, "f": fs} {
				st, ok := sum.Stats[col]
				if len(vals) == 0 {
					if ok {
						t.Fatalf("%s n=%d %s: stats of no values", name, n, col)
					}
					continue
				}
				want := mapcommons.Median(vals)
				if math.IsInf(want, 0) || math.IsNaN(want) {
					want = 0
				}
				if st.Median != want {
					t.Fatalf("%s n=%d %s: median %v, want %v", name, n, col, st.Median, want)
				}
			}
		}
	}
}

func nilOr(null bool, v any) any {
	if null {
		return nil
	}
	return v
}

// TestNullBitmapSpooled: nulls first met late, and in a last group of fewer
// than eight rows, read back where they were.
func TestNullBitmapSpooled(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 1003, 1005} {
		feats := make([]mapcommons.Feature, n)
		for i := range feats {
			feats[i].Values = []any{int64(i), 1.5, "s", true, "2020-01-01"}
			if i >= n-3 && i%2 == 0 {
				feats[i].Values = []any{nil, nil, nil, nil, nil}
			}
		}
		s, _ := write(t, testAttrs, feats)
		var f mapcommons.Feature
		for i, want := range feats {
			s.Read(i, &f)
			if !reflect.DeepEqual(f.Values, want.Values) {
				t.Fatalf("n %d, feature %d: %v, want %v", n, i, f.Values, want.Values)
			}
		}
	}
}
