// check.go: the checks both encodings make of their literals.
package cql2

import (
	"time"

	"mapcommons"
)

// checkInstant checks a DATE (YYYY-MM-DD) or TIMESTAMP (RFC 3339) literal.
func checkInstant(kind, s string) error {
	layout := "2006-01-02"
	if kind == mapcommons.LitTimestamp {
		layout = time.RFC3339Nano
	}
	if _, err := time.Parse(layout, s); err != nil {
		return mapcommons.Errorf(mapcommons.EINVALID, "%q is not a %s", s, kind)
	}
	return nil
}

// bboxOf reads the numbers of a BBOX: w, s, e, n or w, s, zmin, e, n, zmax.
// Longitudes lie in [-180, 180], latitudes in [-90, 90] with s ≤ n; w > e
// crosses the antimeridian.
func bboxOf(xs []float64) (*mapcommons.BBox, error) {
	var b mapcommons.BBox
	switch len(xs) {
	case 4:
		b = mapcommons.BBox{W: xs[0], S: xs[1], E: xs[2], N: xs[3]}
	case 6:
		b = mapcommons.BBox{W: xs[0], S: xs[1], E: xs[3], N: xs[4]}
	default:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "a bbox has 4 or 6 numbers, not %d", len(xs))
	}
	if !(b.W >= -180 && b.W <= 180 && b.E >= -180 && b.E <= 180 && b.S >= -90 && b.N <= 90 && b.S <= b.N) {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "bbox %v,%v,%v,%v: not west,south,east,north in degrees with south ≤ north", b.W, b.S, b.E, b.N)
	}
	return &b, nil
}
