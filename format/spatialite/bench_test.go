package spatialite

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// pointScan streams n synthetic points with 5 attributes (string, integer,
// float, boolean, date), deterministically from a seed, through one reused
// Feature. The values come from pools boxed beforehand, so that the scan
// itself does not allocate and the allocations measured are the writer's.
func pointScan(n int) (format.Meta, format.Scan) {
	m := format.Meta{Name: "bench", Title: "bench", Attributes: testAttrs, GeometryMask: 1 << wkb.Point, Count: int64(n)}
	const pool = 4093
	rng := rand.New(rand.NewPCG(3, 4))
	var names, ints, floats []any
	for i := 0; i < pool; i++ {
		names = append(names, "place "+strconv.Itoa(i))
		ints = append(ints, int64(rng.IntN(1<<30)))
		floats = append(floats, rng.Float64())
	}
	days := []any{"2024-01-01", "2024-02-29", "2023-12-31"}
	return m, func(fn func(*mapcommons.Feature) error) error {
		rng := rand.New(rand.NewPCG(1, 2))
		f := mapcommons.Feature{Values: make([]any, 5)}
		for i := 0; i < n; i++ {
			f.Position = int64(i)
			f.Geometry = wkb.AppendPoint(f.Geometry[:0], rng.Float64()*360-180, rng.Float64()*180-90)
			f.Values[0] = names[i%pool]
			f.Values[1] = ints[(i*7)%pool]
			f.Values[2] = floats[(i*13)%pool]
			f.Values[3] = i%3 == 0
			f.Values[4] = days[i%len(days)]
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
}

var benchN = 1_000_000

// BenchmarkWritePoints writes a million points with 5 attributes per op.
func BenchmarkWritePoints(b *testing.B) {
	n := benchN
	m, scan := pointScan(n)
	dir := b.TempDir()
	b.ReportAllocs()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := WriteFile(context.Background(), filepath.Join(dir, "bench.sqlite"), m, scan); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "features/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(n*b.N), "allocs/feature")
}

func BenchmarkWritePoints100k(b *testing.B) {
	benchN = 100_000
	defer func() { benchN = 1_000_000 }()
	BenchmarkWritePoints(b)
}
