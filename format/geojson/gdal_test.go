package geojson

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/internal/formattest"
	"mapcommons/internal/gdaltest"
)

func openFile(t *testing.T, path string) (*Reader, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return Open(f)
}

// TestSourceGDAL converts the real shapefiles to GeoJSON with ogr2ogr and
// checks that we read the features, extent and fields that ogrinfo reads.
func TestSourceGDAL(t *testing.T) {
	gdaltest.Need(t)
	for _, tc := range []struct {
		base string
		args []string
	}{
		{"naturalearth_cities", nil},
		{"naturalearth_lowres", nil},
		{"naturalearth_lowres", []string{"-lco", "RFC7946=YES"}},
		{"nc", []string{"-t_srs", "EPSG:4326"}},
	} {
		t.Run(tc.base+strings.Join(tc.args, ""), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.base+".geojson")
			gdaltest.Ogr2ogr(t, append(append([]string{"-f", "GeoJSON"}, tc.args...), path, formattest.RealDir+tc.base+".shp")...)
			want := gdaltest.Ogrinfo(t, path).Layers[0]
			r, err := openFile(t, path)
			if err != nil {
				t.Fatal(err)
			}
			n, got := formattest.ReadExtent(t, r)
			if n != want.Count || !want.HasExt || !gdaltest.Near(got, want.Extent, 1e-6) {
				t.Errorf("we read %d features in %v, GDAL %d in %v", n, got, want.Count, want.Extent)
			}
			// Fields: same names in the same order; GDAL's String and
			// Integer fields are ours too (a Real field whose values are all
			// integral may read as integer).
			attrs := r.Attributes()
			if len(attrs) != len(want.Fields) {
				t.Fatalf("attributes %s, GDAL fields %v", formattest.Schema(attrs), want.Fields)
			}
			for i, f := range want.Fields {
				name, typ, _ := strings.Cut(f, ": ")
				a := attrs[i]
				ok := a.Name == name
				switch {
				case strings.HasPrefix(typ, "String"):
					ok = ok && a.Type == mapcommons.AttrString
				case strings.HasPrefix(typ, "Integer"):
					ok = ok && a.Type == mapcommons.AttrInteger
				case strings.HasPrefix(typ, "Real"):
					ok = ok && a.Type.Numeric()
				}
				if !ok {
					t.Errorf("attribute %s:%s, GDAL field %s", a.Name, a.Type, f)
				}
			}
		})
	}
	// Without reprojection nc keeps its NAD27 coordinates and says so.
	path := filepath.Join(t.TempDir(), "nc.geojson")
	gdaltest.Ogr2ogr(t, "-f", "GeoJSON", path, formattest.RealDir+"nc.shp")
	_, err := openFile(t, path)
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), "4267") {
		t.Errorf("error %v", err)
	}
}
