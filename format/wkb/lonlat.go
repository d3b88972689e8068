package wkb

// Coordinates a hair outside the longitude and latitude ranges: files
// written through a projection or a decimal round trip put a polygon's
// edge on the antimeridian at 180.00000000000006 (the OGC's own CQL2 test
// GeoPackage does). Such an overshoot is no sign of projected coordinates,
// which are metres and far beyond; it is moved onto the range's edge.

// LonLatTolerance is how far, in degrees, a coordinate may lie outside
// -180..180 (longitude) or -90..90 (latitude) and still be taken as
// longitude/latitude, clamped onto the edge: 1e-9° is about 0.1 mm on the
// ground, a million times a float64's rounding at 180.
const LonLatTolerance = 1e-9

// ClampLon returns lon, or the edge of -180..180 it overshoots by at most
// LonLatTolerance; ok is false when it lies further out (or is NaN).
func ClampLon(lon float64) (v float64, ok bool) { return clampTo(lon, 180) }

// ClampLat is ClampLon for latitudes, -90..90.
func ClampLat(lat float64) (v float64, ok bool) { return clampTo(lat, 90) }

func clampTo(v, edge float64) (float64, bool) {
	switch {
	case v >= -edge && v <= edge:
		return v, true
	case v > edge && v <= edge+LonLatTolerance:
		return edge, true
	case v < -edge && v >= -edge-LonLatTolerance:
		return -edge, true
	}
	return v, false
}

// clampXY clamps flat x,y pairs in place, reporting whether all were in
// range or within the tolerance of it.
func clampXY(xy []float64) bool {
	for i := 0; i+1 < len(xy); i += 2 {
		x, okx := ClampLon(xy[i])
		y, oky := ClampLat(xy[i+1])
		if !okx || !oky {
			return false
		}
		xy[i], xy[i+1] = x, y
	}
	return true
}

// ClampLonLat moves every coordinate of g that overshoots the longitude
// or latitude range by at most LonLatTolerance onto its edge, in place.
// It reports false, having perhaps clamped some, when a coordinate lies
// further out: g is then not longitude/latitude.
func (g *Geom) ClampLonLat() bool {
	if !clampXY(g.Coords) {
		return false
	}
	for _, r := range g.Rings {
		if !clampXY(r) {
			return false
		}
	}
	for i := range g.Parts {
		if !g.Parts[i].ClampLonLat() {
			return false
		}
	}
	return true
}

// InLonLat reports whether r lies within the longitude and latitude
// ranges.
func (r Rect) InLonLat() bool {
	return r.MinX >= -180 && r.MaxX <= 180 && r.MinY >= -90 && r.MaxY <= 90
}

// ClampLonLatWKB returns b, or when some coordinates overshoot the ranges
// by at most LonLatTolerance, b re-encoded (into dst) with them clamped;
// ok is false when a coordinate lies further out. r is b's bounding box
// (as BoundsOf gives it), which settles most geometries without decoding.
func ClampLonLatWKB(dst, b []byte, r Rect) (out []byte, ok bool, err error) {
	if r.InLonLat() {
		return b, true, nil
	}
	if r.MinX < -180-LonLatTolerance || r.MaxX > 180+LonLatTolerance || r.MinY < -90-LonLatTolerance || r.MaxY > 90+LonLatTolerance {
		return b, false, nil
	}
	g, err := Decode(b)
	if err != nil {
		return b, false, err
	}
	if !g.ClampLonLat() {
		return b, false, nil
	}
	return g.AppendWKB(dst[:0]), true, nil
}
