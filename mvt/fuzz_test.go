package mvt

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"mapcommons/format/wkb"
)

// FuzzEncode feeds arbitrary WKB, and geometries built from arbitrary
// coordinates, to random tiles: the encoder must never panic, every tile
// must pass the strict decoder, and every polygon the test's own check
// (checkPolygon).
func FuzzEncode(f *testing.F) {
	f.Add(uint8(0), uint32(0), uint32(0), wkb.AppendPoint(nil, 1, 2))
	f.Add(uint8(2), uint32(1), uint32(1), wkb.AppendPolygon(nil, [][]float64{square(-50, -50, 50, 50, true), square(-1, -1, 1, 1, false)}))
	f.Add(uint8(3), uint32(4), uint32(3), wkb.AppendLineString(nil, []float64{-180, 85, 180, -85, 0, 90, 10, -90}))
	f.Add(uint8(1), uint32(0), uint32(0), wkb.AppendMultiPolygon(nil, [][][]float64{{square(-170, -80, 170, 80, false)}}))
	f.Add(uint8(5), uint32(9), uint32(11), []byte{1, 3, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0})
	f.Fuzz(fuzzOne)
}

func fuzzOne(t *testing.T, z uint8, x, y uint32, data []byte) {
	zz := int(z % 12)
	n := uint32(1) << zz
	tile, err := NewTile(zz, int(x%n), int(y%n), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	l, _ := tile.AddLayer("f", nil, nil)
	l.Add(1, data, nil) // errors are fine; panics are not
	// The same bytes read as coordinates: a ring, a line, points.
	var xy []float64
	for i := 0; i+16 <= len(data) && len(xy) < 400; i += 16 {
		a := math.Float64frombits(binary.LittleEndian.Uint64(data[i:]))
		b := math.Float64frombits(binary.LittleEndian.Uint64(data[i+8:]))
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
			continue
		}
		xy = append(xy, math.Mod(a, 360), math.Mod(b, 180))
	}
	if len(xy) >= 2 {
		ring := append(append([]float64(nil), xy...), xy[0], xy[1])
		l.Add(2, wkb.AppendPolygon(nil, [][]float64{ring}), nil)
		l.Add(3, wkb.AppendLineString(nil, xy), nil)
		l.Add(4, wkb.AppendMultiPoint(nil, xy), nil)
		// The same points as an exterior and a hole, and as the two
		// parts of a MultiPolygon, most likely crossing each other.
		if h := len(xy) / 4 * 2; h >= 6 {
			a := append(append([]float64(nil), xy[:h]...), xy[0], xy[1])
			b := append(append([]float64(nil), xy[h:]...), xy[h], xy[h+1])
			l.Add(5, wkb.AppendPolygon(nil, [][]float64{a, b}), nil)
			l.Add(6, wkb.AppendMultiPolygon(nil, [][][]float64{{a}, {b}}), nil)
		}
	}
	dt, err := decodeTile(tile.Encode())
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the input, the polygons come out with simple rings,
	// wound as MVT wants, of non-zero area, holes inside their
	// exterior, no two rings crossing.
	for _, ft := range dt.Layers[0].Features {
		if ft.Type == 3 {
			if err := checkPolygon(ft.Parts); err != nil {
				t.Fatalf("feature %d: %v\n%v", ft.ID, err, ft.Parts)
			}
		}
	}
}

// TestRandomPolygonsStayValid runs the fuzz target's checks on random
// rings of random tiles, their points drawn around the tile (a quarter of
// them on a coarse grid, for coincident points and edges): mostly
// self-crossing rings, which the encoder must turn into valid polygons.
func TestRandomPolygonsStayValid(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 2000
	if raceEnabled {
		n = 500
	}
	for range n {
		z := r.IntN(12)
		x, y := r.IntN(1<<z), r.IntN(1<<z)
		b := TileBounds(z, x, y, 0, 4096)
		w, h := b.MaxX-b.MinX, b.MaxY-b.MinY
		var data []byte
		for range 3 + r.IntN(60) {
			lon, lat := b.MinX-w+3*w*r.Float64(), b.MinY-h+3*h*r.Float64()
			if r.IntN(4) == 0 {
				lon, lat = b.MinX+w*float64(r.IntN(9))/8, b.MinY+h*float64(r.IntN(9))/8
			}
			data = binary.LittleEndian.AppendUint64(data, math.Float64bits(lon))
			data = binary.LittleEndian.AppendUint64(data, math.Float64bits(lat))
		}
		func() {
			defer func() { // after a t.Fatal of fuzzOne too
				if t.Failed() {
					t.Logf("tile %d/%d/%d, data %q", z, x, y, data)
				}
			}()
			fuzzOne(t, uint8(z), uint32(x), uint32(y), data)
		}()
	}
}
