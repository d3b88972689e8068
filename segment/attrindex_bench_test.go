package segment

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
)

// BenchmarkWriterPoints writes the bench's points (cmd/mapcommons
// writePoints' columns) to a segment.
func BenchmarkWriterPoints(b *testing.B) {
	attrs := []mapcommons.Attribute{{Name: "id", Type: mapcommons.AttrInteger}, {Name: "lon", Type: mapcommons.AttrFloat},
		{Name: "lat", Type: mapcommons.AttrFloat}, {Name: "n", Type: mapcommons.AttrInteger}, {Name: "x", Type: mapcommons.AttrFloat},
		{Name: "cat", Type: mapcommons.AttrString}, {Name: "label", Type: mapcommons.AttrString}, {Name: "ts", Type: mapcommons.AttrDate}}
	const n = 1000000
	r := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	feats := make([]mapcommons.Feature, n)
	for i := range feats {
		x, y := r.Float64()*360-180, r.Float64()*170-85
		label := make([]byte, 8)
		for k := range label {
			label[k] = byte('a' + r.IntN(26))
		}
		ts := t0.Add(time.Duration(r.IntN(366*86400)) * time.Second).Format("2006-01-02T15:04:05Z")
		feats[i] = mapcommons.Feature{Geometry: wkb.AppendPoint(nil, x, y),
			Values: []any{int64(i + 1), x, y, int64(r.IntN(1000)), r.Float64() * 1000, fmt.Sprintf("c%d", r.IntN(10)), string(label), ts}}
	}
	for b.Loop() {
		dir := b.TempDir()
		w, err := NewWriter(dir, attrs)
		if err != nil {
			b.Fatal(err)
		}
		for i := range feats {
			if err := w.Add(&feats[i]); err != nil {
				b.Fatal(err)
			}
		}
		t := time.Now()
		if _, err := w.Finish(filepath.Join(dir, "x.seg")); err != nil {
			b.Fatal(err)
		}
		b.Logf("Finish %v", time.Since(t))
		s, err := Open(filepath.Join(dir, "x.seg"))
		if err != nil {
			b.Fatal(err)
		}
		for col, a := range attrs {
			t := time.Now()
			if !s.hasAttrIndex(col) {
				b.Fatalf("no index on %s", a.Name)
			}
			b.Logf("check of %s's index (its first use) %v", a.Name, time.Since(t))
		}
		s.Close()
	}
}
