package basemap

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"
)

// mvtLayer is what the tests read of a tile's layer: its features'
// geometries (rings or lines, in tile units) and properties.
type mvtLayer struct {
	feats []mvtFeature
}

type mvtFeature struct {
	typ   uint64
	parts [][][2]float64
	props map[string]any
}

// pbFields calls fn with each field of protobuf message b.
func pbFields(b []byte, fn func(f int, v uint64, data []byte)) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("bad key")
		}
		b = b[n:]
		switch key & 7 {
		case 0:
			v, n := binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("bad varint")
			}
			b = b[n:]
			fn(int(key>>3), v, nil)
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				return fmt.Errorf("bad length")
			}
			fn(int(key>>3), 0, b[n:n+int(l)])
			b = b[n+int(l):]
		case 1:
			fn(int(key>>3), binary.LittleEndian.Uint64(b), b[:8])
			b = b[8:]
		case 5:
			b = b[4:]
		default:
			return fmt.Errorf("wire type %d", key&7)
		}
	}
	return nil
}

func packedUvarints(b []byte) []uint64 {
	var out []uint64
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return out
		}
		out = append(out, v)
		b = b[n:]
	}
	return out
}

// decodeTile decodes an MVT tile into its layers by name.
func decodeTile(t testing.TB, b []byte) map[string]*mvtLayer {
	t.Helper()
	layers := map[string]*mvtLayer{}
	err := pbFields(b, func(f int, _ uint64, lb []byte) {
		if f != 3 {
			return
		}
		l := &mvtLayer{}
		var name string
		var keys []string
		var vals []any
		var feats [][]byte
		pbFields(lb, func(f int, v uint64, d []byte) {
			switch f {
			case 1:
				name = string(d)
			case 2:
				feats = append(feats, d)
			case 3:
				keys = append(keys, string(d))
			case 4:
				var val any
				pbFields(d, func(f int, v uint64, d []byte) {
					switch f {
					case 1:
						val = string(d)
					case 3:
						val = math.Float64frombits(v)
					case 4, 5:
						val = int64(v)
					case 6:
						val = int64(v>>1) ^ -int64(v&1)
					case 7:
						val = v != 0
					}
				})
				vals = append(vals, val)
			}
		})
		for _, fb := range feats {
			ft := mvtFeature{props: map[string]any{}}
			var tags, geom []uint64
			pbFields(fb, func(f int, v uint64, d []byte) {
				switch f {
				case 2:
					tags = packedUvarints(d)
				case 3:
					ft.typ = v
				case 4:
					geom = packedUvarints(d)
				}
			})
			for i := 0; i+1 < len(tags); i += 2 {
				ft.props[keys[tags[i]]] = vals[tags[i+1]]
			}
			var x, y int64
			var cur [][2]float64
			for i := 0; i < len(geom); {
				cmd, count := geom[i]&7, int(geom[i]>>3)
				i++
				switch cmd {
				case 1, 2:
					if cmd == 1 && len(cur) > 0 {
						ft.parts = append(ft.parts, cur)
						cur = nil
					}
					for k := 0; k < count && i+1 < len(geom); k++ {
						x += int64(geom[i]>>1) ^ -int64(geom[i]&1)
						y += int64(geom[i+1]>>1) ^ -int64(geom[i+1]&1)
						i += 2
						cur = append(cur, [2]float64{float64(x), float64(y)})
					}
				case 7:
				}
			}
			if len(cur) > 0 {
				ft.parts = append(ft.parts, cur)
			}
			l.feats = append(l.feats, ft)
		}
		layers[name] = l
	})
	if err != nil {
		t.Fatal(err)
	}
	return layers
}

// tileXY is the tile of zoom z holding lon, lat and the point's position
// in it, in units of a 4096 extent.
func tileXY(lon, lat float64, z int) (x, y int, px, py float64) {
	n := math.Exp2(float64(z))
	fx := (lon + 180) / 360 * n
	fy := (1 - math.Asinh(math.Tan(lat*math.Pi/180))/math.Pi) / 2 * n
	x, y = int(fx), int(fy)
	return x, y, (fx - float64(x)) * 4096, (fy - float64(y)) * 4096
}

// inPolygons reports whether a polygon feature of l holds px, py (even–odd
// over each feature's rings).
func inPolygons(l *mvtLayer, px, py float64) bool {
	if l == nil {
		return false
	}
	for _, f := range l.feats {
		in := false
		for _, r := range f.parts {
			for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
				a, b := r[i], r[j]
				if (a[1] > py) != (b[1] > py) && px < (b[0]-a[0])*(py-a[1])/(b[1]-a[1])+a[0] {
					in = !in
				}
			}
		}
		if f.typ == 3 && in {
			return true
		}
	}
	return false
}

// TestTileLand: at the deepest zoom, the land of the 1:10m data is under
// Staten Island, Brooklyn and Olinda (which the 1:110m countries put in
// the sea), and not under the harbour between Staten Island and Brooklyn
// nor the Atlantic off Olinda; a place at every zoom; tiles of bounded
// size.
func TestTileLand(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lon, lat float64
		land     bool
	}{
		{"Staten Island", -74.15, 40.58, true},
		{"Brooklyn", -73.95, 40.65, true},
		{"Manhattan", -73.97, 40.78, true},
		{"Olinda", -34.855, -8.01, true},
		{"the Upper Bay", -74.045, 40.655, false},
		{"the Lower Bay", -74.05, 40.52, false},
		{"off Olinda", -34.75, -8.0, false},
	} {
		for _, z := range []int{MaxZoom, 7} {
			x, y, px, py := tileXY(tc.lon, tc.lat, z)
			b, err := Tile(z, x, y)
			if err != nil {
				t.Fatal(err)
			}
			if got := inPolygons(decodeTile(t, b)[LayerLand], px, py); got != tc.land {
				t.Errorf("%s (%g %g), tile %d/%d/%d: land %v", tc.name, tc.lon, tc.lat, z, y, x, got)
			}
		}
	}
	// New York's tile of zoom 9: land, coast, places; small.
	x, y, _, _ := tileXY(-74, 40.7, MaxZoom)
	b, err := Tile(MaxZoom, x, y)
	if err != nil {
		t.Fatal(err)
	}
	ls := decodeTile(t, b)
	if len(ls[LayerLand].feats) == 0 || len(ls[LayerCoastline].feats) == 0 {
		t.Errorf("New York, zoom 9: %d land, %d coast features", len(ls[LayerLand].feats), len(ls[LayerCoastline].feats))
	}
	var names []string
	for _, f := range ls[LayerPlaces].feats {
		names = append(names, fmt.Sprint(f.props["name"]))
	}
	if !slices.Contains(names, "New York") {
		t.Errorf("New York, zoom 9: places %v", names)
	}
	if len(b) > 64<<10 {
		t.Errorf("New York, zoom 9: %d bytes", len(b))
	}
	// The world: every layer but the rivers (from zoom 1), the largest
	// cities only, under 160 KB.
	b, err = Tile(0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ls = decodeTile(t, b)
	for _, l := range []string{LayerLand, LayerLakes, LayerBorders, LayerCountries, LayerPlaces} {
		if ls[l] == nil || len(ls[l].feats) == 0 {
			t.Errorf("zoom 0: no %s", l)
		}
	}
	if n := len(ls[LayerPlaces].feats); n < 5 || n > 50 {
		t.Errorf("zoom 0: %d places", n)
	}
	if len(b) > 160<<10 {
		t.Errorf("zoom 0: %d bytes", len(b))
	}
	// Deeper zooms show more places, the important first.
	prev := 0
	for z := 0; z <= MaxZoom; z++ {
		n := 0
		for _, p := range Load().Places {
			if p.MinZoom10 <= 10*z {
				n++
			}
		}
		if n < prev || (z == MaxZoom && n != len(Load().Places)) {
			t.Errorf("zoom %d: %d places shown", z, n)
		}
		prev = n
	}
}

// TestTileDivisionsAndUrban: the first-order divisions' names label their
// divisions where Natural Earth puts them (Texas in Texas, Bavaria in
// Bavaria: the 1:10m label points cover every country), from the zoom of
// their rank; their boundaries are drawn where the 1:50m lines have them
// (between Texas and New Mexico); and the urban areas cover New York and
// São Paulo, not the Upper Bay nor Death Valley, from zoom 4.
func TestTileDivisionsAndUrban(t *testing.T) {
	regionsOf := func(z int, lon, lat float64) []string {
		x, y, _, _ := tileXY(lon, lat, z)
		b, err := Tile(z, x, y)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range decodeTile(t, b)[LayerRegions].feats {
			names = append(names, fmt.Sprint(f.props["name"]))
		}
		return names
	}
	if got := regionsOf(2, -99, 31); len(got) != 0 {
		t.Errorf("zoom 2 over Texas: regions %v (they start at zoom 3)", got)
	}
	for _, tc := range []struct {
		z        int
		lon, lat float64
		name     string
	}{{4, -99, 31, "Texas"}, {5, 11.5, 48.8, "Bayern"}, {6, 35, -8, "Iringa"}, {6, 2.4, 48.6, "Essonne"}} {
		got := regionsOf(tc.z, tc.lon, tc.lat)
		if !slices.Contains(got, tc.name) {
			t.Errorf("zoom %d tile over %s: regions %v", tc.z, tc.name, got)
		}
	}
	// One label for each division, however many islands it has: on its
	// largest part (Texas's on the mainland, not on a barrier island;
	// Hawaii's on the main islands, not the north-western ones).
	seen := map[string]int{}
	for _, r := range Load().Regions {
		seen[r.Name+"|"+fmt.Sprint(r.Lon > 0)]++
		switch r.Name {
		case "Texas":
			if r.Lat < 30 || r.Lon > -98 {
				t.Errorf("Texas labelled at %g %g", r.Lon, r.Lat)
			}
		case "Hawaii":
			if r.Lon < -161 {
				t.Errorf("Hawaii labelled at %g %g", r.Lon, r.Lat)
			}
		}
	}
	if seen["Hawaii|false"] != 1 || seen["Nunavut|false"] != 1 || seen["Texas|false"] != 1 {
		t.Errorf("Hawaii has %d labels, Nunavut %d, Texas %d", seen["Hawaii|false"], seen["Nunavut|false"], seen["Texas|false"])
	}
	// The boundary between Texas and New Mexico (the 103rd meridian, from
	// 32° to 36.5° north) is in zoom 5's divisions.
	x, y, _, _ := tileXY(-103, 34, 5)
	b, err := Tile(5, x, y)
	if err != nil {
		t.Fatal(err)
	}
	ls := decodeTile(t, b)
	near := false
	_, _, px, _ := tileXY(-103, 34, 5)
	for _, f := range ls[LayerDivisions].feats {
		for _, part := range f.parts {
			for i := 1; i < len(part); i++ {
				a, c := part[i-1], part[i]
				if math.Abs(a[0]-px) < 8 && math.Abs(c[0]-px) < 8 && math.Abs(a[1]-c[1]) > 8 {
					near = true
				}
			}
		}
	}
	if !near {
		t.Errorf("zoom 5: no division line along the 103rd meridian among %d lines", len(ls[LayerDivisions].feats))
	}
	for _, tc := range []struct {
		name     string
		lon, lat float64
		urban    bool
	}{
		{"Manhattan", -73.97, 40.78, true},
		{"São Paulo", -46.63, -23.55, true},
		{"the Upper Bay", -74.045, 40.655, false},
		{"Death Valley", -116.9, 36.5, false},
	} {
		for _, z := range []int{4, 7} {
			x, y, px, py := tileXY(tc.lon, tc.lat, z)
			b, err := Tile(z, x, y)
			if err != nil {
				t.Fatal(err)
			}
			if got := inPolygons(decodeTile(t, b)[LayerUrban], px, py); got != tc.urban {
				t.Errorf("%s, zoom %d: urban %v", tc.name, z, got)
			}
		}
	}
	x, y, _, _ = tileXY(-74, 40.7, 3)
	if b, err := Tile(3, x, y); err != nil || decodeTile(t, b)[LayerUrban] != nil && len(decodeTile(t, b)[LayerUrban].feats) > 0 {
		t.Errorf("zoom 3 over New York: urban areas drawn (they start at zoom 4): %v", err)
	}
}
