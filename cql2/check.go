// check.go: the checks both encodings make of their literals.
package cql2

import (
	"time"

	"mapcommons"
)

// instant checks a DATE (YYYY-MM-DD) or TIMESTAMP (RFC 3339) literal and
// gives its canonical text: a timestamp in UTC with the fewest digits of
// its fraction (2022-01-01T08:00:00.5Z for 2022-01-01T10:00:00.500+02:00),
// the form uploads store and mapcommons.CompareTimes orders.
func instant(kind, s string) (string, error) {
	layout := "2006-01-02"
	if kind == mapcommons.LitTimestamp {
		layout = time.RFC3339Nano
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return "", mapcommons.Errorf(mapcommons.EINVALID, "%q is not a %s", s, kind)
	}
	if kind == mapcommons.LitTimestamp {
		s = t.UTC().Format(time.RFC3339Nano)
	}
	return s, nil
}

// bboxOf reads the numbers of a BBOX: w, s, e, n or w, s, zmin, e, n, zmax,
// by the rule of every bbox (mapcommons.NewBBox): longitudes in
// [-180, 180], latitudes in [-90, 90] with s ≤ n; w > e crosses the
// antimeridian.
func bboxOf(xs []float64) (*mapcommons.BBox, error) {
	switch len(xs) {
	case 4:
		return mapcommons.NewBBox("BBOX", xs[0], xs[1], xs[2], xs[3])
	case 6:
		return mapcommons.NewBBox("BBOX", xs[0], xs[1], xs[3], xs[4])
	}
	return nil, mapcommons.Errorf(mapcommons.EINVALID, "a bbox has 4 or 6 numbers, not %d", len(xs))
}
