package mvt

import (
	"encoding/binary"
	"math"
	"testing"

	"mapcommons/format/wkb"
)

// FuzzEncode feeds arbitrary WKB, and geometries built from arbitrary
// coordinates, to random tiles: the encoder must never panic and every
// tile must pass the strict decoder.
func FuzzEncode(f *testing.F) {
	f.Add(uint8(0), uint32(0), uint32(0), wkb.AppendPoint(nil, 1, 2))
	f.Add(uint8(2), uint32(1), uint32(1), wkb.AppendPolygon(nil, [][]float64{square(-50, -50, 50, 50, true), square(-1, -1, 1, 1, false)}))
	f.Add(uint8(3), uint32(4), uint32(3), wkb.AppendLineString(nil, []float64{-180, 85, 180, -85, 0, 90, 10, -90}))
	f.Add(uint8(1), uint32(0), uint32(0), wkb.AppendMultiPolygon(nil, [][][]float64{{square(-170, -80, 170, 80, false)}}))
	f.Add(uint8(5), uint32(9), uint32(11), []byte{1, 3, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0})
	f.Fuzz(func(t *testing.T, z uint8, x, y uint32, data []byte) {
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
		}
		if _, err := decodeTile(tile.Encode()); err != nil {
			t.Fatal(err)
		}
	})
}
