package mvt

// This file is the WebMercatorQuad tile matrix set (OGC 17-083r4, annex
// D.1): tile numbering, tile bounds in lon/lat, and the projection of
// lon/lat onto a tile's pixel grid.

import (
	"math"
	"sync"

	"mapcommons/format/wkb"
)

// MaxLat is the latitude where WebMercatorQuad ends: the square world
// (atan(sinh(π)) in degrees). Tile bounds stop there; what lies beyond
// is in no tile (only in the buffer of the tiles along the edge).
const MaxLat = 85.05112877980659

// MaxZoom is the deepest zoom level NewTile accepts.
const MaxZoom = 30

// ValidTile reports whether z/x/y names a tile of WebMercatorQuad: 0 ≤ z ≤
// MaxZoom and 0 ≤ x, y < 2^z. y counts from the north, as in the OGC and
// XYZ schemes (not TMS).
func ValidTile(z, x, y int) bool {
	if z < 0 || z > MaxZoom {
		return false
	}
	n := 1 << z
	return x >= 0 && x < n && y >= 0 && y < n
}

// worldX and worldY map lon/lat to [0,1] across the Web Mercator square,
// x east, y south (the tile pixel orientation). Latitudes beyond ±MaxLat
// land outside the square (up to ±89.9999°, past which Mercator has no
// finite y): clamping them onto the square's edge instead would fold the
// parts of polygons beyond it (Antarctica) onto one line, a ring that
// touches itself; clipping to the tile cuts them off cleanly instead.
func worldX(lon float64) float64 { return (lon + 180) / 360 }

func worldY(lat float64) float64 {
	const limit = 89.9999
	if lat > limit {
		lat = limit
	} else if lat < -limit {
		lat = -limit
	}
	s := math.Sin(lat * math.Pi / 180)
	return 0.5 - math.Log((1+s)/(1-s))/(4*math.Pi)
}

// lonOf and latOf invert worldX and worldY.
func lonOf(wx float64) float64 { return wx*360 - 180 }

func latOf(wy float64) float64 {
	return math.Atan(math.Sinh(math.Pi*(1-2*wy))) * 180 / math.Pi
}

// TileBounds returns the lon/lat box of tile z/x/y grown on every side by
// buffer/extent of a tile (buffer 64 of extent 4096 is a 1/64 margin), the
// box a caller's bbox query should cover to fill the tile. Latitudes stop
// at ±MaxLat and longitudes at ±180 (the buffer does not wrap the
// antimeridian).
func TileBounds(z, x, y int, buffer, extent int) wkb.Rect {
	n := float64(uint64(1) << uint(z))
	m := 0.0
	if extent > 0 {
		m = float64(buffer) / float64(extent)
	}
	wx0, wx1 := (float64(x)-m)/n, (float64(x)+1+m)/n
	wy0, wy1 := (float64(y)-m)/n, (float64(y)+1+m)/n
	r := wkb.Rect{MinX: lonOf(wx0), MinY: latOf(wy1), MaxX: lonOf(wx1), MaxY: latOf(wy0)}
	r.MinX, r.MaxX = math.Max(r.MinX, -180), math.Min(r.MaxX, 180)
	r.MinY, r.MaxY = math.Max(r.MinY, -MaxLat), math.Min(r.MaxY, MaxLat)
	return r
}

// projector maps lon/lat to the pixel grid of one tile (floats, not yet
// rounded): x grows east, y south, the tile spans [0, extent).
type projector struct {
	scale, ox, oy float64
}

func newProjector(z, x, y, extent int) projector {
	s := float64(uint64(1)<<uint(z)) * float64(extent)
	return projector{scale: s, ox: float64(x) * float64(extent), oy: float64(y) * float64(extent)}
}

func (p projector) xy(lon, lat float64) (float64, float64) {
	return worldX(lon)*p.scale - p.ox, worldY(lat)*p.scale - p.oy
}

// yTable is worldY sampled every 180/yTableN degrees of latitude, for
// interpolation where a hair of error does not matter (finding a point's
// thinning cell): one multiply-add instead of a sine and a logarithm, the
// bulk of the cost of thinning a million points. Interpolation error is
// below 1e-7 of the world's height within ±MaxLat (0.1 pixel of a 4096
// extent at zoom 8); beyond, where nothing is drawn, it grows.
type yTable [yTableN + 2]float64

const yTableN = 1 << 14

// mercatorTable returns the one shared, read-only table.
var mercatorTable = sync.OnceValue(func() *yTable {
	var t yTable
	for i := range t {
		t[i] = worldY(-90 + float64(i)*180/yTableN)
	}
	return &t
})

func (t *yTable) y(lat float64) float64 {
	f := (lat + 90) * (yTableN / 180.0)
	if !(f >= 0) { // NaN as well
		return t[0]
	}
	if f >= yTableN {
		return t[yTableN]
	}
	i := int(f)
	return t[i] + (f-float64(i))*(t[i+1]-t[i])
}
