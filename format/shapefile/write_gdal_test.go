package shapefile

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// wtWriteFile writes the zip of feats to a file in a temporary directory.
func wtWriteFile(t *testing.T, name string, attrs []mapcommons.Attribute, feats []mapcommons.Feature) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".zip")
	if err := os.WriteFile(path, wtZip(t, wtMeta(name, attrs, feats), feats), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wtGeoJSON converts a layer with ogr2ogr and returns its features'
// properties and geometry types.
func wtGeoJSON(t *testing.T, src string) []struct {
	Properties map[string]any
	Geometry   *struct{ Type string }
} {
	t.Helper()
	out, err := exec.Command("ogr2ogr", "-f", "GeoJSON", "/vsistdout/", src).Output()
	if err != nil {
		t.Fatalf("ogr2ogr %s: %v\n%s", src, err, out)
	}
	var fc struct {
		Features []struct {
			Properties map[string]any
			Geometry   *struct{ Type string }
		}
	}
	if err := json.Unmarshal(out, &fc); err != nil {
		t.Fatalf("ogr2ogr's GeoJSON: %v\n%s", err, out)
	}
	return fc.Features
}

// TestWriteGDAL opens what we write with GDAL: per layer the feature count,
// geometry type, extent and fields, and the values it reads.
func TestWriteGDAL(t *testing.T) {
	gdaltest.Need(t)
	attrs := wtAttrs("id:integer", "value:float", "name:string", "flag:boolean", "day:date", "population_total:integer", "population:integer")
	var feats []mapcommons.Feature
	add := func(g []byte, name string) {
		i := int64(len(feats))
		var v, day, flag any = float64(i) + 0.25, "2024-02-29", i%2 == 0
		if i == 2 {
			v, day, flag = nil, nil, nil
		}
		feats = append(feats, wtF(g, i, v, name, flag, day, i*1000, -i))
	}
	add(wkb.AppendPoint(nil, 2.3522, 48.8566), "Paris, Île-de-France")
	add(wkb.AppendPoint(nil, -46.6333, -23.5505), "São Paulo")
	add(nil, "nowhere")
	add(wkb.AppendLineString(nil, []float64{0, 0, 1, 1, 2, 0}), "Zürich–Genève")
	add(wkb.AppendPolygon(nil, [][]float64{wtShell, wtHole}), "Ürümqi 東京")
	add(wkb.AppendMultiPolygon(nil, [][][]float64{{wtShell}, {wtShellB}}), "two")
	add(wkb.AppendMultiPoint(nil, []float64{5, 5, 6, 7}), "many")
	path := wtWriteFile(t, "mix", attrs, feats)

	info := gdaltest.Ogrinfo(t, "/vsizip/"+path)
	if info.Driver != "ESRI Shapefile" {
		t.Errorf("driver %q", info.Driver)
	}
	type layer struct {
		geometry string
		count    int64
		extent   [4]float64
	}
	want := map[string]layer{
		"mix_point":      {"Point", 3, [4]float64{-46.6333, -23.5505, 2.3522, 48.8566}},
		"mix_multipoint": {"Multi Point", 1, [4]float64{5, 5, 6, 7}},
		"mix_line":       {"Line String", 1, [4]float64{0, 0, 2, 1}},
		"mix_polygon":    {"Polygon", 2, [4]float64{0, 0, 30, 10}},
	}
	if len(info.Layers) != len(want) {
		t.Fatalf("%d layers:\n%s", len(info.Layers), info.Output)
	}
	// GDAL 3.6 reads L fields as strings "T" and "F" (later versions as
	// booleans).
	wantFields := []string{"id: Integer (1.0)", "value: Real (4.2)", "name: String (21.0)", "flag: String (1.0)",
		"day: Date (10.0)", "populati_1: Integer (4.0)", "population: Integer (2.0)"}
	for _, l := range info.Layers {
		w, ok := want[l.Name]
		if !ok {
			t.Errorf("layer %q", l.Name)
			continue
		}
		if l.Geometry != w.geometry || l.Count != w.count || !l.HasExt || !gdaltest.Near(l.Extent, w.extent, 1e-9) {
			t.Errorf("layer %s: %s, %d features, extent %v; want %s, %d, %v", l.Name, l.Geometry, l.Count, l.Extent, w.geometry, w.count, w.extent)
		}
		if !strings.Contains(l.SRS, "WGS 84") && !strings.Contains(l.SRS, "WGS_1984") {
			t.Errorf("layer %s SRS %s", l.Name, l.SRS)
		}
		if !reflect.DeepEqual(l.Fields, wantFields) {
			t.Errorf("layer %s fields\n%q\nwant\n%q", l.Name, l.Fields, wantFields)
		}
	}

	// The values GDAL reads, text with accents included.
	var got []map[string]any
	for _, name := range []string{"mix_point", "mix_multipoint", "mix_line", "mix_polygon"} {
		for _, f := range wtGeoJSON(t, "/vsizip/"+path+"/"+name+".shp") {
			got = append(got, f.Properties)
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i]["id"].(float64) < got[j]["id"].(float64) })
	if len(got) != len(feats) {
		t.Fatalf("GDAL reads %d features, want %d", len(got), len(feats))
	}
	for i, p := range got {
		v := feats[i].Values
		want := map[string]any{"id": float64(i), "value": v[1], "name": v[2], "flag": v[3], "day": v[4],
			"populati_1": float64(i * 1000), "population": float64(-i)}
		switch v[3] {
		case true:
			want["flag"] = "T"
		case false:
			want["flag"] = "F"
		}
		for _, m := range []map[string]any{p, want} {
			for k, x := range m {
				if x == nil { // null or unset, either way
					delete(m, k)
				}
			}
		}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("GDAL reads feature %d as %v\nwant %v", i, p, want)
		}
	}
}

// TestWriteGDALReal writes the real shapefiles and compares what GDAL reads
// of ours with every feature we read of the originals, and the layer
// summaries of both.
func TestWriteGDALReal(t *testing.T) {
	gdaltest.Need(t)
	for _, base := range []string{"nc", "naturalearth_lowres", "naturalearth_cities"} {
		t.Run(base, func(t *testing.T) {
			attrs, rf, feats := wtRealFeatures(t, base)
			path := wtWriteFile(t, base, attrs, feats)
			ours := gdaltest.Ogrinfo(t, "/vsizip/"+path)
			orig := gdaltest.Ogrinfo(t, realDir+base+".shp")
			if len(ours.Layers) != 1 {
				t.Fatalf("%d layers", len(ours.Layers))
			}
			a, b := ours.Layers[0], orig.Layers[0]
			if a.Name != b.Name || a.Geometry != b.Geometry || a.Count != b.Count || !gdaltest.Near(a.Extent, b.Extent, 1e-9) {
				t.Errorf("ours: %s %s %d %v\noriginal: %s %s %d %v", a.Name, a.Geometry, a.Count, a.Extent, b.Name, b.Geometry, b.Count, b.Extent)
			}
			var an, bn []string
			for _, f := range a.Fields {
				an = append(an, strings.SplitN(f, ":", 2)[0])
			}
			for _, f := range b.Fields {
				bn = append(bn, strings.SplitN(f, ":", 2)[0])
			}
			if !reflect.DeepEqual(an, bn) {
				t.Errorf("fields %v, original %v", a.Fields, b.Fields)
			}
			t.Logf("fields %v, original %v", a.Fields, b.Fields)

			out, err := exec.Command("ogr2ogr", "--config", "OGR_WKT_PRECISION", "17",
				"-f", "CSV", "/vsistdout/", "/vsizip/"+path+"/"+base+".shp", "-lco", "GEOMETRY=AS_WKT").Output()
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows)-1 != len(rf) {
				t.Fatalf("GDAL reads %d features, we wrote %d", len(rows)-1, len(rf))
			}
			for i, row := range rows[1:] {
				compareGDAL(t, i, attrs, rf[i], row)
			}
		})
	}
}

// TestWriteGDALEdges: a shapefile of Null shapes only, an empty one, and
// one without attributes open in GDAL too (GDAL calls shape type Null
// "Unknown (any)").
func TestWriteGDALEdges(t *testing.T) {
	gdaltest.Need(t)
	for _, tc := range []struct {
		name     string
		attrs    []mapcommons.Attribute
		feats    []mapcommons.Feature
		geometry string
		count    int64
		fields   []string
	}{
		{"nulls", wtAttrs("n:integer"), []mapcommons.Feature{wtF(nil, int64(1)), wtF(nil, int64(22))}, "Unknown (any)", 2, []string{"n: Integer (2.0)"}},
		{"empty", wtAttrs("s:string", "f:float"), nil, "Unknown (any)", 0, []string{"s: String (1.0)", "f: Real (3.1)"}},
		{"bare", nil, []mapcommons.Feature{wtF(wkb.AppendPoint(nil, 1, 2)), wtF(wkb.AppendPoint(nil, 3, 4))}, "Point", 2, []string{"FID: Integer (1.0)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info := gdaltest.Ogrinfo(t, "/vsizip/"+wtWriteFile(t, tc.name, tc.attrs, tc.feats))
			if len(info.Layers) != 1 {
				t.Fatalf("%d layers:\n%s", len(info.Layers), info.Output)
			}
			l := info.Layers[0]
			if l.Name != tc.name || l.Geometry != tc.geometry || l.Count != tc.count || !reflect.DeepEqual(l.Fields, tc.fields) {
				t.Errorf("layer %s: %s, %d features, fields %q\n%s", l.Name, l.Geometry, l.Count, l.Fields, info.Output)
			}
		})
	}
}

// TestWriteGDALFloats: GDAL reads every float back exactly, exponent forms
// included (printed with 17 significant digits, which round-trip).
func TestWriteGDALFloats(t *testing.T) {
	gdaltest.Need(t)
	vals := []float64{1e-300, -7e-7, 3e25, 123456789.12345679, math.Pi, 0.1, 5e-324, math.MaxFloat64, -1825, 1e21, 999999999999999.9}
	var feats []mapcommons.Feature
	for i, v := range vals {
		feats = append(feats, wtF(wkb.AppendPoint(nil, float64(i), 0), int64(i), v))
	}
	path := wtWriteFile(t, "floats", wtAttrs("i:integer", "v:float"), feats)
	out, err := exec.Command("ogr2ogr", "-f", "GeoJSON", "-lco", "SIGNIFICANT_FIGURES=17", "/vsistdout/", "/vsizip/"+path).Output()
	if err != nil {
		t.Fatalf("ogr2ogr: %v\n%s", err, out)
	}
	var fc struct {
		Features []struct {
			Properties struct {
				I int
				V float64
			}
		}
	}
	if err := json.Unmarshal(out, &fc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(fc.Features) != len(vals) {
		t.Fatalf("%d features", len(fc.Features))
	}
	for i, f := range fc.Features {
		if f.Properties.I != i || f.Properties.V != vals[i] {
			t.Errorf("GDAL reads %d: %v, want %d: %v", f.Properties.I, f.Properties.V, i, vals[i])
		}
	}
}
