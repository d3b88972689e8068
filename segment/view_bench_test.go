package segment

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// benchView is a base of viewBenchN points with 1,000 dead positions and a
// delta of 1,000 features (500 updates of dead ones, 500 new), and the
// compacted segment of the same features; built once per process, their
// files removed once mapped.
var benchView struct {
	once      sync.Once
	view      *View
	compacted *Segment
	err       error
}

const viewBenchN = 1000000

func viewBenchSegments(b *testing.B) (*View, *Segment) {
	benchView.once.Do(func() {
		dir, err := os.MkdirTemp("", "viewbench")
		if err != nil {
			benchView.err = err
			return
		}
		defer os.RemoveAll(dir) // the mappings outlive the files
		r := rand.New(rand.NewPCG(9, 9))
		feat := func(id int64) mapcommons.Feature {
			return mapcommons.Feature{ID: id, Values: []any{int64(r.IntN(1000)), r.Float64() * 1000, "c" + string(rune('a'+r.IntN(10))), r.IntN(2) == 0, "2020-01-02"},
				Geometry: wkb.AppendPoint(nil, r.Float64()*360-180, r.Float64()*170-85)}
		}
		write := func(name string, feats func(add func(f *mapcommons.Feature) error) error) *Segment {
			if benchView.err != nil {
				return nil
			}
			w, err := NewWriter(dir, indexAttrs)
			if err == nil {
				err = feats(w.Add)
			}
			path := filepath.Join(dir, name)
			if err == nil {
				_, err = w.Finish(path)
			}
			var s *Segment
			if err == nil {
				s, err = Open(path)
			}
			benchView.err = err
			return s
		}
		deadSet := map[int32]bool{}
		for len(deadSet) < 1000 {
			deadSet[int32(r.IntN(viewBenchN))] = true
		}
		var dead []int32
		for p := range deadSet {
			dead = append(dead, p)
		}
		slices.Sort(dead)
		var delta []mapcommons.Feature
		for i, p := range dead {
			if i%2 == 0 {
				delta = append(delta, feat(int64(p)+1))
			}
		}
		for i := range 500 {
			delta = append(delta, feat(viewBenchN+1+int64(i)))
		}
		base := write("base.seg", func(add func(*mapcommons.Feature) error) error {
			for id := int64(1); id <= viewBenchN; id++ {
				f := feat(id)
				if err := add(&f); err != nil {
					return err
				}
			}
			return nil
		})
		ds := write("delta.seg", func(add func(*mapcommons.Feature) error) error {
			for i := range delta {
				if err := add(&delta[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if benchView.err != nil {
			return
		}
		// The compacted segment: the base's live features and the delta's,
		// by id.
		var f mapcommons.Feature
		benchView.compacted = write("compacted.seg", func(add func(*mapcommons.Feature) error) error {
			k := 0
			for p := 0; p < base.Len(); p++ {
				for ; k < len(delta) && delta[k].ID < base.ID(p); k++ {
					if err := add(&delta[k]); err != nil {
						return err
					}
				}
				if deadSet[int32(p)] {
					continue
				}
				base.Read(p, &f)
				if err := add(&f); err != nil {
					return err
				}
			}
			for ; k < len(delta); k++ {
				if err := add(&delta[k]); err != nil {
					return err
				}
			}
			return nil
		})
		if benchView.err == nil {
			benchView.view, benchView.err = NewView(base, dead, ds)
		}
	})
	if benchView.err != nil {
		b.Fatal(benchView.err)
	}
	return benchView.view, benchView.compacted
}

// BenchmarkViewBBox reads a page of 30 features in a box from a view (a
// base of 1M points, 1,000 of them dead, and a delta of 1,000) and from
// the compacted segment of the same features: go test -run X -bench
// ViewBBox -count 5 ./segment/
func BenchmarkViewBBox(b *testing.B) {
	v, s := viewBenchSegments(b)
	if v.Len() != s.Len() {
		b.Fatalf("view of %d features, compacted %d", v.Len(), s.Len())
	}
	for _, tc := range []struct {
		name string
		q    mapcommons.FeatureQuery
	}{
		{"Page", mapcommons.FeatureQuery{Limit: 30, BBox: &mapcommons.BBox{W: -10, S: -10, E: 10, N: 10}}},
		{"SmallPage", mapcommons.FeatureQuery{Limit: 30, BBox: &mapcommons.BBox{W: 5, S: 40, E: 15, N: 50}}},
		{"Offset", mapcommons.FeatureQuery{Limit: 30, Offset: 3000, BBox: &mapcommons.BBox{W: -10, S: -10, E: 10, N: 10}}},
		{"Sorted", mapcommons.FeatureQuery{Limit: 30, Sort: "x", BBox: &mapcommons.BBox{W: -10, S: -10, E: 10, N: 10}}},
	} {
		for _, run := range []struct {
			name  string
			query queryFunc
		}{{"Compacted", s.Query}, {"View", v.Query}} {
			b.Run(tc.name+"/"+run.name, func(b *testing.B) {
				for b.Loop() {
					n := 0
					if err := run.query(b.Context(), &tc.q, func(*mapcommons.Feature) error { n++; return nil }); err != nil || n != 30 {
						b.Fatal(n, err)
					}
				}
			})
		}
	}
}
