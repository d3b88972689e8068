package mvt

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"mapcommons/internal/gdaltest"
)

// ogrSQL runs an SQL query of GDAL's SQLite dialect (SpatiaLite functions
// included) on a tile file, with the MVT driver's clipping off so GDAL
// sees the geometry as encoded, and returns the rows, each a map from
// column to value as ogrinfo prints it.
func ogrSQL(t *testing.T, path, sql string) []map[string]string {
	t.Helper()
	bin := gdaltest.Need(t)
	out, err := exec.Command(bin, "-ro", "-q", "-oo", "CLIP=NO", "-dialect", "sqlite", "-sql", sql, path).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %s: %v\n%s", sql, err, out)
	}
	re := regexp.MustCompile(`^  ([A-Za-z0-9_()*]+) \([A-Za-z0-9]+\) = (.*)$`)
	var rows []map[string]string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "OGRFeature(") {
			rows = append(rows, map[string]string{})
		} else if m := re.FindStringSubmatch(line); m != nil && len(rows) > 0 {
			rows[len(rows)-1][m[1]] = m[2]
		}
	}
	return rows
}

// TestGDALReadsTiles has GDAL's MVT driver read every tile of the
// countries at zooms 0 and 2 and of the North Carolina counties at zoom
// 8: the layer, its fields, the feature count of each tile as our decoder
// counts it, each feature's name and iso_a3/FIPS by id, and whether
// SpatiaLite (through GDAL) finds each polygon valid as GDAL reads it
// (at zoom 0, rounding alone would make Sudan's ring touch itself). Every
// tile of zooms 0–8 is checked for validity by TestGDALTilePolygonsValid.
func TestGDALReadsTiles(t *testing.T) {
	gdaltest.Need(t)
	for _, tc := range []struct {
		base, layer string
		z, tiles    int
		name, code  string
	}{{"naturalearth_lowres", "countries", 0, 1, "name", "iso_a3"}, {"naturalearth_lowres", "countries", 2, 16, "name", "iso_a3"},
		{"nc", "counties", 8, 21, "name", "fips"}} {
		t.Run(tc.layer+"/z"+strconv.Itoa(tc.z), func(t *testing.T) {
			attrs, feats := readReal(t, tc.base)
			col := func(name string) int {
				for i, a := range attrs {
					if strings.EqualFold(a.Name, name) {
						return i
					}
				}
				t.Fatalf("no attribute %s in %v", name, attrs)
				return -1
			}
			nameCol, codeCol := col(tc.name), col(tc.code)
			paths := writeTiles(t, t.TempDir(), tc.layer, attrs, feats, tc.z, DefaultOptions())
			if len(paths) != tc.tiles {
				t.Fatalf("%d tiles", len(paths))
			}
			total := 0
			for _, p := range paths {
				info := gdaltest.Ogrinfo(t, p)
				if info.Driver != "MVT" || len(info.Layers) != 1 || info.Layers[0].Name != tc.layer {
					t.Fatalf("%s: %s", p, info.Output)
				}
				l := info.Layers[0]
				fields := strings.Join(l.Fields, "\n")
				for _, a := range attrs {
					if l.Count > 0 && !strings.Contains(fields, a.Name+": ") {
						t.Errorf("%s: no field %q in\n%s", p, a.Name, fields)
					}
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				dt, err := decodeTile(b)
				if err != nil {
					t.Fatal(err)
				}
				if int(l.Count) != len(dt.Layers[0].Features) {
					t.Errorf("%s: GDAL counts %d features, we encoded %d", p, l.Count, len(dt.Layers[0].Features))
				}
				total += int(l.Count)
				rows := ogrSQL(t, p, "SELECT mvt_id, "+attrs[nameCol].Name+" AS name, "+attrs[codeCol].Name+" AS code, ST_IsValidReason(GEOMETRY) AS reason FROM "+tc.layer)
				if len(rows) != int(l.Count) {
					t.Fatalf("%s: %d rows", p, len(rows))
				}
				for _, r := range rows {
					id, _ := strconv.Atoi(r["mvt_id"])
					if id < 1 || id > len(feats) {
						t.Fatalf("%s: mvt_id %q", p, r["mvt_id"])
					}
					v := feats[id-1].values
					if r["name"] != v[nameCol] || r["code"] != v[codeCol] {
						t.Errorf("%s id %d: %v, want %v %v", p, id, r, v[nameCol], v[codeCol])
					}
					if r["reason"] != "Valid Geometry" {
						t.Errorf("%s id %d (%v): %s", p, id, v[nameCol], r["reason"])
					}
				}
			}
			if total < len(feats) {
				t.Errorf("%d features in all tiles, %d in the file", total, len(feats))
			}
		})
	}
}

// TestGDALReadsThinnedPoints: the cities at zoom 0, thinned, still count
// every city through point_count.
func TestGDALReadsThinnedPoints(t *testing.T) {
	gdaltest.Need(t)
	attrs, feats := readReal(t, "naturalearth_cities")
	dir := t.TempDir()
	paths := writeTiles(t, dir, "cities", attrs, feats, 0, DefaultOptions())
	info := gdaltest.Ogrinfo(t, paths[0])
	if len(info.Layers) != 1 || info.Layers[0].Name != "cities" || info.Layers[0].Geometry != "Point" {
		t.Fatalf("%s", info.Output)
	}
	if !strings.Contains(strings.Join(info.Layers[0].Fields, "\n"), "point_count: Integer") {
		t.Errorf("fields %v", info.Layers[0].Fields)
	}
	rows := ogrSQL(t, paths[0], "SELECT sum(point_count) AS n, count(*) AS c FROM cities")
	if len(rows) != 1 || rows[0]["n"] != strconv.Itoa(len(feats)) {
		t.Errorf("sum(point_count) %v, want %d", rows, len(feats))
	}
	if len(rows) != 1 || rows[0]["c"] == strconv.Itoa(len(feats)) {
		t.Errorf("%v: nothing thinned", rows)
	}
	t.Logf("%d cities as %v points", len(feats), rows)
}
