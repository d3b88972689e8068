package segment

import (
	"bytes"
	"context"
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
