package proj

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons"
)

// project is the forward projection of a Transform (tests only): longitude
// and latitude in degrees on the CRS's own datum to x, y in its units.
func project(t *Transform, lon, lat float64) (x, y float64) {
	if t.proj == nil {
		return (lon - t.lon0) * degree / t.angUnit, lat * degree / t.angUnit
	}
	x, y = t.proj.forward(math.Remainder(lon-t.lon0, 360)*degree, lat*degree)
	return (x + t.fe) / t.unit, (y + t.fn) / t.unit
}

// unproject is Forward without the datum shift: degrees on the CRS's datum.
func unproject(t *Transform, x, y float64) (lon, lat float64) {
	lam, phi := t.source(x, y)
	return math.Remainder(lam/degree, 360), phi / degree
}

// metres returns the distance on the ground between two lon/lat points in
// degrees (a local flat approximation, good for small differences).
func metres(lon1, lat1, lon2, lat2 float64) float64 {
	const r = 6371000.0
	dlon := math.Remainder(lon1-lon2, 360)
	dn := (lat1 - lat2) * degree * r
	de := dlon * degree * r * math.Cos((lat1+lat2)/2*degree)
	return math.Hypot(dn, de)
}

// dms converts degrees, minutes and seconds to degrees.
func dms(d, m, s float64) float64 {
	if d < 0 || math.Signbit(d) {
		return d - m/60 - s/3600
	}
	return d + m/60 + s/3600
}

func mustParse(t testing.TB, wkt string) *Transform {
	t.Helper()
	tr, err := Parse(wkt)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, wkt)
	}
	return tr
}

func readPRJ(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantInvalid checks that err is an EINVALID *mapcommons.Error whose
// message contains every one of parts.
func wantInvalid(t testing.TB, err error, parts ...string) {
	t.Helper()
	var me *mapcommons.Error
	if !errors.As(err, &me) || me.Code != mapcommons.EINVALID {
		t.Fatalf("error %v (%T), want an EINVALID *mapcommons.Error", err, err)
	}
	for _, p := range parts {
		if !strings.Contains(me.Message, p) {
			t.Errorf("error %q does not contain %q", me.Message, p)
		}
	}
}
