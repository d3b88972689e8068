package proj

import (
	"errors"
	"math"
	"path/filepath"
	"testing"

	"mapcommons"
)

// checkForward asserts what Forward promises: an EINVALID error, or a
// finite longitude in [-180, 180] and latitude in [-90, 90]; non-finite
// input is always an error.
func checkForward(t *testing.T, tr *Transform, x, y float64) {
	lon, lat, err := tr.Forward(x, y)
	if err != nil {
		var me *mapcommons.Error
		if !errors.As(err, &me) || me.Code != mapcommons.EINVALID {
			t.Fatalf("Forward(%v, %v): error %v is not EINVALID", x, y, err)
		}
		return
	}
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		t.Fatalf("Forward(%v, %v) = %v %v, no error", x, y, lon, lat)
	}
	if !(lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90) {
		t.Fatalf("Forward(%v, %v) = %v %v, out of range", x, y, lon, lat)
	}
}

func addPRJSeeds(f *testing.F) []string {
	files, _ := filepath.Glob("testdata/*.prj")
	var out []string
	for _, file := range files {
		out = append(out, readPRJ(f, filepath.Base(file)))
	}
	for _, ex := range epsgExamples {
		out = append(out, ex.wkt)
	}
	return out
}

// FuzzParse: arbitrary text never panics or hangs Parse; errors are
// EINVALID; a transform that parses converts points within range or says
// why not.
func FuzzParse(f *testing.F) {
	for _, s := range addPRJSeeds(f) {
		f.Add(s)
	}
	f.Add("")
	f.Add(`GEOGCS["x",DATUM["y",SPHEROID["z",6378137,0]],UNIT["radian",1]]`)
	f.Add(`PROJCS["x",GEOGCS["g",DATUM["d",SPHEROID["s",6378137,298.257223563],TOWGS84[1,2,3,4,5,6,7]],PRIMEM["p",400]],PROJECTION["Polar_Stereographic"],PARAMETER["latitude_of_origin",-90],PARAMETER["scale_factor",1e-9]]`)
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := Parse(s)
		if err != nil {
			var me *mapcommons.Error
			if !errors.As(err, &me) || me.Code != mapcommons.EINVALID {
				t.Fatalf("error %v is not EINVALID", err)
			}
			if tr != nil {
				t.Fatal("a transform and an error")
			}
			return
		}
		for _, p := range [][2]float64{{0, 0}, {500000, 4500000}, {-1e7, 1e7}, {1e9, -1e9}, {45, 45}, {math.NaN(), 1}, {1, math.Inf(1)}} {
			checkForward(t, tr, p[0], p[1])
		}
	})
}

// FuzzForward: any coordinates in any of the test CRSs: no panic, and
// non-finite or out-of-range results are errors.
func FuzzForward(f *testing.F) {
	var trs []*Transform
	for _, s := range addPRJSeeds(f) {
		if tr, err := Parse(s); err == nil {
			trs = append(trs, tr)
		}
	}
	f.Add(uint8(0), 500000.0, 4649776.0)
	f.Add(uint8(3), 0.0, 0.0)
	f.Add(uint8(7), -1e8, 1e8)
	f.Add(uint8(11), math.MaxFloat64, -math.MaxFloat64)
	f.Add(uint8(13), math.SmallestNonzeroFloat64, 1e-300)
	f.Add(uint8(20), math.NaN(), 0.0)
	f.Add(uint8(21), 2e7, 3e7)
	f.Fuzz(func(t *testing.T, i uint8, x, y float64) {
		checkForward(t, trs[int(i)%len(trs)], x, y)
	})
}
