package mvt

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// benchData is a deterministic stand-in for the 1M-point reference data
// set (bench/gen_points.py): lon uniform in -180..180, lat in -85..85,
// an integer, a float, a 10-value category and an 8-letter label. It is
// held column-wise and read through benchRow, as the segment store's lazy
// rows are, so that the benchmark's own heap does not weigh on the
// garbage collector the encoder runs with.
type benchData struct {
	lon, lat, x []float64
	n           []int64
	cat         []uint8
	label       [][8]byte
}

var benchPoints = sync.OnceValue(func() *benchData {
	const N = 1_000_000
	r := rand.New(rand.NewPCG(42, 1))
	d := &benchData{lon: make([]float64, N), lat: make([]float64, N), x: make([]float64, N),
		n: make([]int64, N), cat: make([]uint8, N), label: make([][8]byte, N)}
	for i := 0; i < N; i++ {
		d.lon[i], d.lat[i] = -180+360*r.Float64(), -85+170*r.Float64()
		d.n[i], d.x[i], d.cat[i] = int64(r.IntN(1000)), 1000*r.Float64(), uint8(r.IntN(10))
		for k := range d.label[i] {
			d.label[i][k] = byte('a' + r.IntN(26))
		}
	}
	return d
})

var catNames = [10][]byte{[]byte("c0"), []byte("c1"), []byte("c2"), []byte("c3"), []byte("c4"), []byte("c5"), []byte("c6"), []byte("c7"), []byte("c8"), []byte("c9")}

// benchRow reads point i of d as a mapcommons.Row over benchAttrs.
type benchRow struct {
	d *benchData
	i int
}

func (r *benchRow) IsNull(int) bool   { return false }
func (r *benchRow) Int(int) int64     { return r.d.n[r.i] }
func (r *benchRow) Float(int) float64 { return r.d.x[r.i] }
func (r *benchRow) Bool(int) bool     { return false }
func (r *benchRow) Bytes(c int) []byte {
	if c == 2 {
		return catNames[r.d.cat[r.i]]
	}
	return r.d.label[r.i][:]
}

var benchAttrs = []mapcommons.Attribute{
	{Name: "n", Type: mapcommons.AttrInteger}, {Name: "x", Type: mapcommons.AttrFloat},
	{Name: "cat", Type: mapcommons.AttrString}, {Name: "label", Type: mapcommons.AttrString},
}

// inTile returns the points of tile z/x/y with its buffer, as the bbox
// query of the store would (not timed).
func inTile(d *benchData, z, x, y int) []int {
	b := TileBounds(z, x, y, 64, 4096)
	var out []int
	for i, lon := range d.lon {
		if lat := d.lat[i]; lon >= b.MinX && lon <= b.MaxX && lat >= b.MinY && lat <= b.MaxY {
			out = append(out, i)
		}
	}
	return out
}

// benchTile encodes tile z/x/y from the points in it, each fed as the
// store's scan would: WKB rebuilt in a reused buffer, values in place.
func benchTile(b *testing.B, z, x, y int, props []string) {
	d := benchPoints()
	pts := inTile(d, z, x, y)
	row := &benchRow{d: d}
	var geom []byte
	b.ResetTimer()
	size := 0
	for b.Loop() {
		t, _ := NewTile(z, x, y, DefaultOptions())
		l, _ := t.AddLayer("points", benchAttrs, props)
		for _, i := range pts {
			geom = wkb.AppendPoint(geom[:0], d.lon[i], d.lat[i])
			row.i = i
			l.AddRow(uint64(i+1), geom, row)
		}
		size = len(t.Encode())
	}
	b.ReportMetric(float64(size)/1024, "KB")
	b.ReportMetric(float64(len(pts)), "points")
}

// BenchmarkTileLowZoom encodes the fullest tiles of zooms 0–4 from the
// 1M points (the whole data set at z0), all attributes. Targets: ≤ 50 ms
// and ≤ 500 KB a tile.
func BenchmarkTileLowZoom(b *testing.B) {
	for _, tc := range []struct{ z, x, y int }{{0, 0, 0}, {1, 0, 0}, {2, 1, 1}, {3, 3, 3}, {4, 7, 7}} {
		b.Run("z"+strconv.Itoa(tc.z), func(b *testing.B) { benchTile(b, tc.z, tc.x, tc.y, nil) })
	}
	b.Run("z0-props=cat", func(b *testing.B) { benchTile(b, 0, 0, 0, []string{"cat"}) })
}

// BenchmarkTileZ10 encodes a z10 tile with 500 points, all attributes
// (the 1M points put about one in a z10 tile, so this tile's points are
// drawn inside it). Target: p50 ≤ 5 ms.
func BenchmarkTileZ10(b *testing.B) {
	const z, x, y = 10, 300, 400
	tb := TileBounds(z, x, y, 0, 4096)
	r := rand.New(rand.NewPCG(7, 1))
	pts := make([]realFeature, 500)
	for i := range pts {
		lon, lat := tb.MinX+(tb.MaxX-tb.MinX)*r.Float64(), tb.MinY+(tb.MaxY-tb.MinY)*r.Float64()
		pts[i] = realFeature{geom: wkb.AppendPoint(nil, lon, lat),
			values: []any{int64(r.IntN(1000)), 1000 * r.Float64(), "c" + strconv.Itoa(r.IntN(10)), "abcdefgh"}}
	}
	b.ResetTimer()
	size := 0
	for b.Loop() {
		t, _ := NewTile(z, x, y, DefaultOptions())
		l, _ := t.AddLayer("points", benchAttrs, nil)
		for i, p := range pts {
			l.Add(uint64(i+1), p.geom, p.values)
		}
		size = len(t.Encode())
	}
	b.ReportMetric(float64(size)/1024, "KB")
}

// BenchmarkTileZ10Polygons encodes the z10 tile of North Carolina with
// the most county pieces, all attributes.
func BenchmarkTileZ10Polygons(b *testing.B) {
	attrs, feats := readReal(b, "nc")
	// Raleigh: 35.78N 78.64W.
	z := 10
	x, y := int(worldX(-78.64)*1024), int(worldY(35.78)*1024)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		t, _ := NewTile(z, x, y, DefaultOptions())
		l, _ := t.AddLayer("counties", attrs, nil)
		for i, f := range feats {
			l.Add(uint64(i+1), f.geom, f.values)
		}
		t.Encode()
		n = l.Len()
	}
	b.ReportMetric(float64(n), "features")
}

// BenchmarkTilePolygons encodes the countries at zoom 2 (tile 2/1/1).
func BenchmarkTilePolygons(b *testing.B) {
	attrs, feats := readReal(b, "naturalearth_lowres")
	b.ResetTimer()
	for b.Loop() {
		t, _ := NewTile(2, 1, 1, DefaultOptions())
		l, _ := t.AddLayer("countries", attrs, nil)
		for i, f := range feats {
			l.Add(uint64(i+1), f.geom, f.values)
		}
		t.Encode()
	}
}
