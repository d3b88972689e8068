package segment

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"mapcommons"
)

// TestFinishBytes: FinishBytes gives the bytes Finish writes, and
// FromBytes reads them; a delta (SetDelta: no attribute indexes, no
// medians) answers every query as the full segment does.
func TestFinishBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 37, 800} {
		feats := randomFeatures(r, n)
		writer := func(delta bool) *Writer {
			w, err := NewWriter(t.TempDir(), testAttrs)
			if err != nil {
				t.Fatal(err)
			}
			if delta {
				w.SetDelta()
			}
			for i := range feats {
				if err := w.Add(&feats[i]); err != nil {
					t.Fatal(err)
				}
			}
			return w
		}
		path := filepath.Join(t.TempDir(), "x.seg")
		want, err := writer(false).Finish(path)
		if err != nil {
			t.Fatal(err)
		}
		file, _ := os.ReadFile(path)
		b, sum, err := writer(false).FinishBytes()
		if err != nil || !bytes.Equal(b, file) || !reflect.DeepEqual(sum, want) {
			t.Fatalf("%d features: FinishBytes gave %d bytes (%v), Finish wrote %d", n, len(b), err, len(file))
		}
		full, err := FromBytes("full", b)
		if err != nil {
			t.Fatal(err)
		}
		db, dsum, err := writer(true).FinishBytes()
		if err != nil {
			t.Fatal(err)
		}
		delta, err := FromBytes("delta", db)
		if err != nil {
			t.Fatal(err)
		}
		for col := range testAttrs {
			if n > 0 && delta.hasAttrIndex(col) {
				t.Fatalf("a delta has an attribute index on %d", col)
			}
		}
		if dsum.Count != sum.Count || !reflect.DeepEqual(dsum.Extent, sum.Extent) {
			t.Fatalf("the delta's summary %+v", dsum)
		}
		ok := 0
		for range 60 {
			q := randomIndexQuery(r, 40)
			if r.IntN(3) == 0 {
				q.Sort = testAttrs[r.IntN(len(testAttrs))].Name
			}
			a, errA := collect(full, q)
			d, errD := collect(delta, q)
			if (errA == nil) != (errD == nil) || !reflect.DeepEqual(a, d) {
				t.Fatalf("query %+v: full %v %v, delta %v %v", q, a, errA, d, errD)
			}
			if errA == nil {
				ok++
			}
		}
		if ok < 30 {
			t.Fatalf("%d of 60 queries answered", ok)
		}
		full.Close()
		delta.Close()
	}
}

func collect(s *Segment, q *mapcommons.FeatureQuery) ([]mapcommons.Feature, error) {
	var out []mapcommons.Feature
	err := s.Query(context.Background(), q, func(f *mapcommons.Feature) error {
		out = append(out, mapcommons.Feature{Position: f.Position, ID: f.ID, Values: append([]any(nil), f.Values...), Geometry: append([]byte(nil), f.Geometry...)})
		return nil
	})
	return out, err
}

// TestAddFrom: a segment written with AddFrom is byte for byte the one
// written by adding what Read gives, whatever the values (nulls, NaN, -0,
// infinities, strings with NUL, integers beyond 2⁵³) and geometries.
func TestAddFrom(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{0, 1, 9, 700} {
		feats := randomFeatures(r, n)
		for i := range feats {
			switch r.IntN(8) {
			case 0:
				feats[i].Values[1] = math.NaN()
			case 1:
				feats[i].Values[1] = math.Copysign(0, -1)
			case 2:
				feats[i].Values[1] = math.Inf(-1)
			case 3:
				feats[i].Values[2] = "a\x00b"
			case 4:
				feats[i].Values[0] = int64(1)<<60 + int64(r.IntN(9))
			}
		}
		w, _ := NewWriter(t.TempDir(), testAttrs)
		for i := range feats {
			if err := w.Add(&feats[i]); err != nil {
				t.Fatal(err)
			}
		}
		b, _, err := w.FinishBytes()
		if err != nil {
			t.Fatal(err)
		}
		src, err := FromBytes("src", b)
		if err != nil {
			t.Fatal(err)
		}
		viaRead, _ := NewWriter(t.TempDir(), testAttrs)
		viaFrom, _ := NewWriter(t.TempDir(), testAttrs)
		f := &mapcommons.Feature{}
		for pos := 0; pos < src.Len(); pos++ {
			if pos%3 == 1 {
				continue // some left out, as a compaction leaves the dead
			}
			src.Read(pos, f)
			if err := viaRead.Add(f); err != nil {
				t.Fatal(err)
			}
			if err := viaFrom.AddFrom(src, pos); err != nil {
				t.Fatal(err)
			}
		}
		a, sa, err1 := viaRead.FinishBytes()
		c, sc, err2 := viaFrom.FinishBytes()
		if err1 != nil || err2 != nil || !bytes.Equal(a, c) || !reflect.DeepEqual(sa, sc) {
			t.Fatalf("%d features: AddFrom wrote %d bytes (%v), Add of Read %d (%v); summaries %+v %+v", n, len(c), err2, len(a), err1, sc, sa)
		}
	}
	w, _ := NewWriter(t.TempDir(), testAttrs[:2])
	w2, _ := NewWriter(t.TempDir(), testAttrs)
	w2.Add(&mapcommons.Feature{Values: []any{int64(1), 2.0, "x", true, "2020-01-01"}})
	b, _, _ := w2.FinishBytes()
	s, _ := FromBytes("s", b)
	if err := w.AddFrom(s, 0); err == nil {
		t.Fatal("AddFrom a segment of other attributes")
	}
}
