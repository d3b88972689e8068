package mvt

import (
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

// TestGDALReadsTiles has GDAL's MVT driver read the countries at zoom 2:
// the layer, its fields, the feature count of each tile as our decoder
// counts it, and each feature's attributes by id. It also asks SpatiaLite
// (through GDAL) whether each polygon is valid.
func TestGDALReadsTiles(t *testing.T) {
	gdaltest.Need(t)
	attrs, feats := readReal(t, "naturalearth_lowres")
	dir := t.TempDir()
	paths := writeTiles(t, dir, "countries", attrs, feats, 2, DefaultOptions())
	if len(paths) != 16 {
		t.Fatalf("%d tiles", len(paths))
	}
	total, invalid := 0, 0
	for _, p := range paths {
		info := gdaltest.Ogrinfo(t, p)
		if info.Driver != "MVT" || len(info.Layers) != 1 || info.Layers[0].Name != "countries" {
			t.Fatalf("%s: %s", p, info.Output)
		}
		l := info.Layers[0]
		fields := strings.Join(l.Fields, "\n")
		for _, want := range []string{"mvt_id: Integer64", "pop_est: Real", "continent: String", "name: String", "iso_a3: String", "gdp_md_est: Integer"} {
			if !strings.Contains(fields, want) {
				t.Errorf("%s: no field %q in\n%s", p, want, fields)
			}
		}
		b, err := readFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dt, err := decodeTile(b)
		if err != nil {
			t.Fatal(err)
		}
		if int(l.Count) != len(dt.Layers[0].Features) || l.Count == 0 {
			t.Errorf("%s: GDAL counts %d features, we encoded %d", p, l.Count, len(dt.Layers[0].Features))
		}
		total += int(l.Count)
		rows := ogrSQL(t, p, "SELECT mvt_id, name, iso_a3, pop_est, ST_IsValidReason(GEOMETRY) AS reason FROM countries")
		if len(rows) != int(l.Count) {
			t.Fatalf("%s: %d rows", p, len(rows))
		}
		for _, r := range rows {
			id, _ := strconv.Atoi(r["mvt_id"])
			if id < 1 || id > len(feats) {
				t.Fatalf("%s: mvt_id %q", p, r["mvt_id"])
			}
			v := feats[id-1].values // pop_est, continent, name, iso_a3, gdp_md_est
			pop, _ := strconv.ParseFloat(r["pop_est"], 64)
			if r["name"] != v[2] || r["iso_a3"] != v[3] || pop != v[0] {
				t.Errorf("%s id %d: %v, want %v", p, id, r, v)
			}
			if r["reason"] != "Valid Geometry" {
				invalid++
				t.Logf("%s id %d: %s", p, id, r["reason"])
			}
		}
	}
	t.Logf("%d features in 16 tiles, %d invalid for GEOS", total, invalid)
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
