package segment

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

var allTypeAttrs = []mapcommons.Attribute{
	{Name: "i", Type: mapcommons.AttrInteger}, {Name: "f", Type: mapcommons.AttrFloat},
	{Name: "s", Type: mapcommons.AttrString}, {Name: "b", Type: mapcommons.AttrBoolean},
	{Name: "d", Type: mapcommons.AttrDate}, {Name: "i2", Type: mapcommons.AttrInteger},
	{Name: "f2", Type: mapcommons.AttrFloat}, {Name: "s2", Type: mapcommons.AttrString},
}

// mixedFeatures are n features of allTypeAttrs with values of every kind
// (nulls, duplicates, zeros of both signs, NaN, long strings), geometries
// of every kind (none, empty, points, lines, polygons, multis,
// collections), and now and then an id of their own.
func mixedFeatures(r *rand.Rand, n int) []mapcommons.Feature {
	feats := make([]mapcommons.Feature, n)
	id := int64(3) // the next id (writeSpilling sets it to 3)
	for i := range feats {
		x, y := r.Float64()*350-175, r.Float64()*160-80
		d := r.Float64() * 2
		var g []byte
		switch r.IntN(10) {
		case 0:
			g = nil
		case 1:
			g = wkb.AppendMultiPoint(nil, nil)
		case 2, 3:
			g = wkb.AppendPoint(nil, x, y)
		case 4:
			g = wkb.AppendLineString(nil, []float64{x, y, x + d, y - d, x + 2*d, y})
		case 5:
			g = wkb.AppendPolygon(nil, [][]float64{{x, y, x + d, y, x + d, y + d, x, y}})
		case 6:
			g = wkb.AppendMultiPoint(nil, []float64{x, y, x + d, y + d})
		case 7:
			g = wkb.AppendMultiLineString(nil, [][]float64{{x, y, x + d, y}, {x, y + d, x + d, y + d}})
		case 8:
			g = wkb.AppendMultiPolygon(nil, [][][]float64{{{x, y, x + d, y, x, y + d, x, y}}, {{x + 3, y, x + 3 + d, y, x + 3, y + d, x + 3, y}}})
		case 9:
			g = wkb.AppendCollection(nil, [][]byte{wkb.AppendPoint(nil, x, y), wkb.AppendLineString(nil, []float64{x, y, x + d, y + d})})
		}
		str := func() any {
			switch r.IntN(4) {
			case 0:
				return ""
			case 1:
				return fmt.Sprintf("s%d", r.IntN(20))
			case 2:
				return fmt.Sprintf("a long string sharing its first bytes %d", r.IntN(50))
			}
			return string(rune('a' + r.IntN(26)))
		}
		flt := func() any {
			switch r.IntN(6) {
			case 0:
				return math.Copysign(0, -1)
			case 1:
				return 0.0
			case 2:
				return math.NaN()
			case 3:
				return float64(r.IntN(5))
			}
			return r.NormFloat64() * 1e3
		}
		vals := []any{int64(r.IntN(100) - 50), flt(), str(), r.IntN(2) == 0,
			fmt.Sprintf("2020-01-%02d", 1+r.IntN(28)), r.Int64() - math.MaxInt64/2, flt(), str()}
		for j := range vals {
			if r.IntN(8) == 0 || (j == 5 && i < n/2) { // i2: nulls first met late
				vals[j] = nil
			}
		}
		if r.IntN(5) == 0 { // else the writer's next id
			feats[i].ID = id + int64(r.IntN(10))
			id = feats[i].ID
		}
		id++
		feats[i].Values, feats[i].Geometry = vals, g
	}
	return feats
}

// writeSpilling writes feats through a writer holding at most spillAt
// bytes in memory (-1: the default), spilling at Finish if atFinish, and
// returns the file, the summary and whether the writer spilled.
func writeSpilling(t *testing.T, feats []mapcommons.Feature, spillAt int64, atFinish bool) ([]byte, *Summary, bool) {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(dir, allTypeAttrs)
	if err != nil {
		t.Fatal(err)
	}
	if spillAt >= 0 {
		w.spillAt = spillAt
	}
	w.SetNextID(3)
	for i := range feats {
		if err := w.Add(&feats[i]); err != nil {
			t.Fatal(err)
		}
	}
	spilled := w.spilled
	if n, names := countFiles(dir); spilled != (n > 0) {
		t.Fatalf("spilled %v with %d files: %v", spilled, n, names)
	}
	if atFinish {
		if spilled {
			t.Fatal("spilled before Finish")
		}
		w.spillAt = w.memSize / 2 // the sections and what Finish builds take more than twice that
	}
	path := filepath.Join(dir, "x.seg")
	sum, err := w.Finish(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, names := countFiles(dir); n != 1 {
		t.Fatalf("%d files after Finish: %v", n, names)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	return data, sum, w.spilled || spilled
}

// TestSmallWriterSameFile: a writer that keeps its sections in memory
// writes the very bytes the spooling writer writes (spillAt 0: every
// section to a temporary file from the first feature on, as the writer
// always did), and so does one that spills midway through the features,
// or only at Finish.
func TestSmallWriterSameFile(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{0, 1, 7, 9, 300, 700} {
		feats := mixedFeatures(r, n)
		want, wantSum, spilled := writeSpilling(t, feats, 0, false)
		if !spilled {
			t.Fatalf("n %d: spillAt 0 did not spill", n)
		}
		got, sum, spilled := writeSpilling(t, feats, -1, false)
		if spilled {
			t.Fatalf("n %d: the default spilled", n)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("n %d: in memory, %d bytes differ from the spooled %d", n, len(got), len(want))
		}
		if !reflect.DeepEqual(sum, wantSum) {
			t.Fatalf("n %d: summary %+v, spooled %+v", n, sum, wantSum)
		}
		if n < 300 {
			continue
		}
		// Spilling during Add, and at Finish.
		for _, atFinish := range []bool{false, true} {
			at := int64(len(want)) / 3
			if atFinish {
				at = -1
			}
			got, sum, spilled := writeSpilling(t, feats, at, atFinish)
			if !spilled || !bytes.Equal(got, want) || !reflect.DeepEqual(sum, wantSum) {
				t.Fatalf("n %d, spilling at Finish %v: spilled %v, same file %v", n, atFinish, spilled, bytes.Equal(got, want))
			}
		}
	}
}
