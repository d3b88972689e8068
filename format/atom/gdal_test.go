package atom

import (
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
	"mapcommons/internal/gdaltest"
)

// shapeFeatures converts a real shapefile to CSV with WKT by ogr2ogr and
// returns its attributes (all strings) and features.
func shapeFeatures(t *testing.T, base string) ([]mapcommons.Attribute, []mapcommons.Feature) {
	t.Helper()
	path := filepath.Join(t.TempDir(), base+".csv")
	gdaltest.Ogr2ogr(t, "-f", "CSV", "-lco", "GEOMETRY=AS_WKT", path, formattest.RealDir+base+".shp")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	header, err := cr.Read()
	if err != nil || header[0] != "WKT" {
		t.Fatalf("header %v: %v", header, err)
	}
	var attrs []mapcommons.Attribute
	for _, h := range header[1:] {
		attrs = append(attrs, mapcommons.Attribute{Name: h, Type: mapcommons.AttrString})
	}
	var feats []mapcommons.Feature
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		feat := mapcommons.Feature{Position: int64(len(feats))}
		if rec[0] != "" {
			if feat.Geometry, err = wkb.ParseWKT(rec[0]); err != nil {
				t.Fatalf("%s: %v", rec[0], err)
			}
		}
		for _, v := range rec[1:] {
			feat.Values = append(feat.Values, v)
		}
		feats = append(feats, feat)
	}
	return attrs, feats
}

// readExtent reads a feed with our reader: its features' count, their
// extent and the reader.
func readExtent(t *testing.T, path string) (int64, [4]float64, *Reader) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	n, ext := formattest.ReadExtent(t, r)
	return n, ext, r
}

// TestWriteGDAL writes real datasets as Atom and checks that GDAL's GeoRSS
// driver reads the same count and extent as it reads from the shapefiles.
func TestWriteGDAL(t *testing.T) {
	gdaltest.Need(t)
	for _, base := range []string{"naturalearth_cities", "naturalearth_lowres", "nc"} {
		t.Run(base, func(t *testing.T) {
			src := gdaltest.Ogrinfo(t, formattest.RealDir+base+".shp").Layers[0]
			attrs, feats := shapeFeatures(t, base)
			path := filepath.Join(t.TempDir(), base+".atom")
			out, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			m := format.Meta{Name: base, Title: base, Link: "http://example.com/datasets/1.json", Attributes: attrs}
			if err := Write(out, m, formattest.ScanOf(feats)); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
			// Every feed opens as GeoRSS without options, whatever its
			// first entries carry (see Write).
			info := gdaltest.Ogrinfo(t, path)
			if info.Driver != "GeoRSS" {
				t.Fatalf("driver %q\n%s", info.Driver, info.Output)
			}
			got := info.Layers[0]
			if got.Count != src.Count || !got.HasExt || !gdaltest.Near(got.Extent, src.Extent, 1e-6) {
				t.Errorf("GDAL reads %d features in %v, the shapefile has %d in %v", got.Count, got.Extent, src.Count, src.Extent)
			}
			n, ext, _ := readExtent(t, path)
			if n != src.Count || !gdaltest.Near(ext, src.Extent, 1e-6) {
				t.Errorf("we read %d features in %v, the shapefile has %d in %v", n, ext, src.Count, src.Extent)
			}
		})
	}
}

// TestReadGDAL reads feeds that GDAL's GeoRSS driver wrote and compares
// count and extent with what GDAL reads from them.
func TestReadGDAL(t *testing.T) {
	gdaltest.Need(t)
	for _, tc := range []struct {
		base, format, dialect string
		extra                 []string
	}{
		{"naturalearth_cities", "RSS", "SIMPLE", nil},
		{"naturalearth_cities", "ATOM", "SIMPLE", nil},
		{"naturalearth_cities", "RSS", "W3C_GEO", nil},
		{"naturalearth_lowres", "ATOM", "SIMPLE", nil},
		{"nc", "RSS", "SIMPLE", []string{"-t_srs", "EPSG:4326"}},
	} {
		t.Run(tc.base+"_"+tc.format+"_"+tc.dialect, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.base+".xml")
			args := []string{"-f", "GeoRSS", "-dsco", "FORMAT=" + tc.format, "-dsco", "GEOM_DIALECT=" + tc.dialect, "-dsco", "USE_EXTENSIONS=YES"}
			args = append(append(args, tc.extra...), path, formattest.RealDir+tc.base+".shp")
			gdaltest.Ogr2ogr(t, args...)
			info := gdaltest.Ogrinfo(t, path)
			if info.Driver != "GeoRSS" {
				t.Fatalf("driver %q", info.Driver)
			}
			want := info.Layers[0]
			n, ext, r := readExtent(t, path)
			if n != want.Count || !want.HasExt || !gdaltest.Near(ext, want.Extent, 1e-6) {
				t.Errorf("we read %d features in %v, GDAL %d in %v", n, ext, want.Count, want.Extent)
			}
			// GDAL writes the fields as elements of an undeclared ogr: prefix.
			found := false
			for _, a := range r.Attributes() {
				found = found || strings.EqualFold(a.Name, "name")
			}
			if !found {
				t.Errorf("no name attribute among %s", formattest.Schema(r.Attributes()))
			}
		})
	}
}
