package kml

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/archive"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
	"mapcommons/internal/gdaltest"
)

// extentOf returns the extent of the features' geometries.
func extentOf(t testing.TB, feats []mapcommons.Feature) [4]float64 {
	r := wkb.EmptyRect
	for _, f := range feats {
		if f.Geometry == nil {
			continue
		}
		b, ok, err := wkb.BoundsOf(f.Geometry)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			r = r.Extend(b)
		}
	}
	return [4]float64{r.MinX, r.MinY, r.MaxX, r.MaxY}
}

func extentOfRead(t testing.TB, feats []feat) [4]float64 {
	var fs []mapcommons.Feature
	for _, f := range feats {
		if f.WKT != "" {
			fs = append(fs, mapcommons.Feature{Geometry: geom(t, f.WKT)})
		}
	}
	return extentOf(t, fs)
}

// TestGDALReadsOurs opens what Write and WriteKMZ write with ogrinfo.
func TestGDALReadsOurs(t *testing.T) {
	gdaltest.Need(t)
	m, feats := testDataset(t)
	dir := t.TempDir()
	var kml, kmz bytes.Buffer
	if err := Write(&kml, m, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	if err := WriteKMZ(&kmz, m, formattest.ScanOf(feats)); err != nil {
		t.Fatal(err)
	}
	want := extentOf(t, feats)
	withGeom := 0
	for _, f := range feats {
		if f.Geometry != nil {
			withGeom++
		}
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		driver string
	}{
		{"out.kml", kml.Bytes(), "KML"},
		{"out.kml", kml.Bytes(), "LIBKML"},
		{"out.kmz", kmz.Bytes(), "LIBKML"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		skip := map[string]string{"KML": "LIBKML", "LIBKML": "KML"}[tc.driver]
		info := gdaltest.Ogrinfo(t, path, "--config", "OGR_SKIP", skip)
		if info.Driver != tc.driver {
			t.Errorf("%s: opened by %s, not %s", tc.name, info.Driver, tc.driver)
		}
		if len(info.Layers) != 1 {
			t.Fatalf("%s (%s): %d layers\n%s", tc.name, tc.driver, len(info.Layers), info.Output)
		}
		l := info.Layers[0]
		// GDAL's older KML driver leaves out Placemarks without geometry and
		// reads only SchemaData, not Data/value, as fields.
		n := int64(len(feats))
		if tc.driver == "KML" {
			n = int64(withGeom)
		}
		if l.Count != n {
			t.Errorf("%s (%s): GDAL counts %d features, want %d\n%s", tc.name, tc.driver, l.Count, n, info.Output)
		}
		if !l.HasExt || !gdaltest.Near(l.Extent, want, 1e-6) { // ogrinfo prints 6 decimals
			t.Errorf("%s (%s): GDAL's extent %v, ours %v", tc.name, tc.driver, l.Extent, want)
		}
		if tc.driver == "KML" {
			continue
		}
		// The ExtendedData fields are there.
		fields := strings.Join(l.Fields, "\n")
		for _, f := range []string{"pop", "ratio", "note"} {
			if !strings.Contains(fields, f+": ") {
				t.Errorf("%s (%s): no field %s in\n%s", tc.name, tc.driver, f, fields)
			}
		}
	}
}

// TestReadGDALKML reads the KML that GDAL's two drivers write.
func TestReadGDALKML(t *testing.T) {
	gdaltest.NeedTool(t, "ogr2ogr")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.geojson")
	err := os.WriteFile(in, []byte(`{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"Name":"A","Description":"<b>d</b>","pop":1,"r":1.5,"s":"x","zip":"02134"},"geometry":{"type":"Point","coordinates":[-122.4194155,37.7749295]}},
{"type":"Feature","properties":{"Name":"B","pop":null,"r":2.25,"s":"y & z","zip":"12345"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[10,0],[10,10],[0,10],[0,0]],[[1,1],[2,1],[2,2],[1,1]]]}},
{"type":"Feature","properties":{"Name":"C","pop":3,"r":null,"s":null,"zip":null},"geometry":{"type":"MultiLineString","coordinates":[[[0,0],[1,1]],[[2,2],[3,3]]]}},
{"type":"Feature","properties":{"Name":"D","pop":-4,"r":0.1,"s":"é€","zip":"99999"},"geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[2,2],[3,2],[3,3],[2,2]]]]}},
{"type":"Feature","properties":{"Name":"E","pop":5,"r":1e-3,"s":"","zip":"1"},"geometry":null}
]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	wantGeoms := []string{"POINT(-122.4194155 37.7749295)", "POLYGON((0 0,10 0,10 10,0 10,0 0),(1 1,2 1,2 2,1 1))",
		"MULTILINESTRING((0 0,1 1),(2 2,3 3))", "MULTIPOLYGON(((0 0,1 0,1 1,0 0)),((2 2,3 2,3 3,2 2)))", ""}
	for _, driver := range []string{"KML", "LIBKML"} {
		t.Run(driver, func(t *testing.T) {
			out := filepath.Join(dir, driver+".kml")
			gdaltest.Ogr2ogr(t, "-f", driver, out, in)
			doc, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			attrs, feats, err := readAll(t, string(doc), Options{})
			if err != nil {
				t.Fatal(err)
			}
			col := map[string]int{}
			for i, a := range attrs {
				col[a.Name] = i
			}
			types := map[string]mapcommons.AttrType{"name": "string", "description": "string", "pop": "integer", "r": "float", "s": "string", "zip": "string"}
			for n, typ := range types {
				if i, ok := col[n]; !ok || attrs[i].Type != typ {
					t.Errorf("attribute %s: %v (all: %v)", n, ok, attrSig(attrs))
				}
			}
			want := []map[string]any{
				{"name": "A", "description": "<b>d</b>", "pop": int64(1), "r": 1.5, "s": "x", "zip": "02134"},
				{"name": "B", "r": 2.25, "s": "y & z", "zip": "12345"},
				{"name": "C", "pop": int64(3)},
				{"name": "D", "pop": int64(-4), "r": 0.1, "s": "é€", "zip": "99999"},
				{"name": "E", "pop": int64(5), "r": 1e-3, "zip": "1"},
			}
			if len(feats) != len(want) {
				t.Fatalf("%d features", len(feats))
			}
			for k, w := range want {
				for n := range types {
					if got := feats[k].Vals[col[n]]; got != w[n] {
						t.Errorf("feature %d %s: %#v, want %#v", k, n, got, w[n])
					}
				}
				if g := feats[k].WKT; g != canon(t, wantGeoms[k]) {
					t.Errorf("feature %d: %s, want %s", k, g, wantGeoms[k])
				}
			}
		})
	}
}

// TestReadRealData converts the real shapefiles to KML with ogr2ogr and
// reads them back, comparing with what ogrinfo says of the same KML.
func TestReadRealData(t *testing.T) {
	gdaltest.NeedTool(t, "ogr2ogr")
	gdaltest.Need(t)
	for _, tc := range []struct {
		base  string
		count int
		attrs []string
	}{
		{"nc", 100, []string{"name:string", "AREA:float", "PERIMETER:float", "CNTY_ID:float", "CRESS_ID:integer", "FIPS:string", "BIR74:float"}},
		{"naturalearth_lowres", 177, []string{"name:string", "pop_est:float", "continent:string", "iso_a3:string", "gdp_md_est:integer"}},
		{"naturalearth_cities", 243, []string{"name:string"}},
	} {
		t.Run(tc.base, func(t *testing.T) {
			shp := formattest.RealDir + tc.base + ".shp"
			if _, err := os.Stat(shp); err != nil {
				t.Skipf("no real data: %v", err)
			}
			out := filepath.Join(t.TempDir(), tc.base+".kml")
			gdaltest.Ogr2ogr(t, "-f", "KML", "-nln", tc.base, out, shp)
			info := gdaltest.Ogrinfo(t, out)
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := Open(f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			attrs, feats, err := drain(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(feats) != tc.count || info.Layers[0].Count != int64(tc.count) {
				t.Errorf("%d features, GDAL %d, want %d", len(feats), info.Layers[0].Count, tc.count)
			}
			sig := map[string]bool{}
			for _, s := range attrSig(attrs) {
				sig[s] = true
			}
			for _, a := range tc.attrs {
				if !sig[a] {
					t.Errorf("no attribute %s in %v", a, attrSig(attrs))
				}
			}
			if got := extentOfRead(t, feats); !gdaltest.Near(got, info.Layers[0].Extent, 1e-6) { // ogrinfo prints 6 decimals
				t.Errorf("extent %v, GDAL %v", got, info.Layers[0].Extent)
			}
			for i, f := range feats {
				if f.WKT == "" || f.Vals[0] == nil {
					t.Errorf("feature %d: %v", i, f)
				}
			}
		})
	}
}

// TestReadGDALKMZ: KMZ files written by GDAL's LIBKML driver (doc.kml with
// a NetworkLink to each layer's document inside the archive) read whole.
func TestReadGDALKMZ(t *testing.T) {
	gdaltest.Need(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "nc.kmz")
	gdaltest.Ogr2ogr(t, "-f", "LIBKML", out, formattest.RealDir+"nc.shp")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	r, cleanup, err := OpenKMZ(bytes.NewReader(b), int64(len(b)), archive.Limits{}, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	attrs, feats, err := drain(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(feats) != 100 {
		t.Fatalf("%d features from GDAL's KMZ of nc, want 100", len(feats))
	}
	names := map[string]bool{}
	for _, a := range attrs {
		names[a.Name] = true
	}
	if !names["name"] && !names["NAME"] || !names["BIR74"] {
		t.Errorf("attributes %v", attrSig(attrs))
	}
}
