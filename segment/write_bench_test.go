package segment

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// BenchmarkSmallWriter writes segments of 1 to 4,000 points with the
// bench's columns (BenchmarkWriterPoints'): the fixed cost of a writer,
// which a delta segment written on every edit pays, fsyncs included
// (and, as cpu-ns/op, the CPU time it takes):
// go test -run X -bench SmallWriter -benchtime 200x ./segment
func BenchmarkSmallWriter(b *testing.B) {
	attrs := []mapcommons.Attribute{{Name: "id", Type: mapcommons.AttrInteger}, {Name: "lon", Type: mapcommons.AttrFloat},
		{Name: "lat", Type: mapcommons.AttrFloat}, {Name: "n", Type: mapcommons.AttrInteger}, {Name: "x", Type: mapcommons.AttrFloat},
		{Name: "cat", Type: mapcommons.AttrString}, {Name: "label", Type: mapcommons.AttrString}, {Name: "ts", Type: mapcommons.AttrDate}}
	for _, n := range []int{1, 100, 1000, 4000} {
		r := rand.New(rand.NewPCG(1, 1))
		feats := make([]mapcommons.Feature, n)
		for i := range feats {
			x, y := r.Float64()*360-180, r.Float64()*170-85
			feats[i] = mapcommons.Feature{Geometry: wkb.AppendPoint(nil, x, y),
				Values: []any{int64(i + 1), x, y, int64(r.IntN(1000)), r.Float64() * 1000, fmt.Sprintf("c%d", r.IntN(10)), "abcdefgh", "2024-01-01T00:00:00Z"}}
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				w, err := NewWriter(dir, attrs)
				if err != nil {
					b.Fatal(err)
				}
				for k := range feats {
					if err := w.Add(&feats[k]); err != nil {
						b.Fatal(err)
					}
				}
				i++
				if _, err := w.Finish(filepath.Join(dir, fmt.Sprint(i))); err != nil {
					b.Fatal(err)
				}
			}
			// The machine may be shared: the CPU time too (all the
			// process's, the collector's included).
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
