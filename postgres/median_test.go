package postgres_test

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"mapcommons"
	"mapcommons/internal/sqlitetest"
	"mapcommons/storetest"
)

// TestMediansSameAsSQLite checks the medians PostgreSQL selects (one
// percentile_disc per column, the sign of a zero counted apart) bit for
// bit against the segment writer's radix selection, over columns of few
// distinct values: ties, -0 beside 0, NaN and infinities left out, nulls,
// odd and even counts.
func TestMediansSameAsSQLite(t *testing.T) {
	ctx := context.Background()
	pg := open(t)
	lite := sqlitetest.Open(t, filepath.Join(t.TempDir(), "store.db")).Services()
	attrs := []mapcommons.Attribute{{Name: "x", Type: mapcommons.AttrFloat}, {Name: "n", Type: mapcommons.AttrInteger}}
	xs := []any{math.Copysign(0, -1), 0.0, math.NaN(), math.Inf(1), math.Inf(-1), nil, -1.5, 2.5, 1e308}
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 40 {
		src := &storetest.SliceSource{Attrs: attrs}
		pick := xs[:2+r.IntN(len(xs)-1)]
		for range 1 + r.IntN(30) {
			src.Features = append(src.Features, mapcommons.Feature{Values: []any{pick[r.IntN(len(pick))], int64(r.IntN(5) - 2)}})
		}
		var stats [2]map[string]mapcommons.Stats
		for k, s := range []mapcommons.Services{pg, lite} {
			ds := &mapcommons.Dataset{Type: "csv"}
			s2 := *src
			if err := s.Datasets.CreateDataset(ctx, ds, &s2); err != nil {
				t.Fatal(err)
			}
			stats[k] = ds.Stats
		}
		for _, a := range attrs {
			p, l := stats[0][a.Name], stats[1][a.Name]
			if math.Float64bits(p.Median) != math.Float64bits(l.Median) {
				t.Errorf("round %d, %s over %v: median %v on postgres, %v on sqlite", round, a.Name, src.Features, p.Median, l.Median)
			}
		}
	}
}
