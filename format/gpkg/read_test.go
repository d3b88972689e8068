package gpkg

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
	"mapcommons/internal/gdaltest"
)

// readAll reads every feature of r, copying each.
func readAll(t testing.TB, r *Reader) []mapcommons.Feature {
	t.Helper()
	var out []mapcommons.Feature
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, mapcommons.Feature{Position: f.Position, Values: append([]any(nil), f.Values...), Geometry: append([]byte(nil), f.Geometry...)})
	}
}

// TestReadOurs: what WriteFile writes reads back the same: attributes,
// values and geometries of every kind (empty ones read as none).
func TestReadOurs(t *testing.T) {
	for name, d := range formattest.Datasets(t) {
		t.Run(name, func(t *testing.T) {
			path := writeDataset(t, d)
			r, err := Open(context.Background(), path, "")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Table() != TableName(name) || !r.SRS().LonLat() {
				t.Errorf("table %q, srs %+v", r.Table(), r.SRS())
			}
			// Types as written (dates are TEXT; column names as the writer
			// made them unique, which is its own test's business).
			var types, want []string
			for _, a := range r.Attributes() {
				types = append(types, string(a.Type))
			}
			for _, a := range d.Meta.Attributes {
				want = append(want, strings.Replace(string(a.Type), "date", "string", 1))
			}
			if !reflect.DeepEqual(types, want) {
				t.Fatalf("attribute types %v, want %v", types, want)
			}
			feats := readAll(t, r)
			if len(feats) != len(d.Feats) {
				t.Fatalf("%d features, want %d", len(feats), len(d.Feats))
			}
			for i, f := range feats {
				for j, v := range f.Values {
					w := d.Feats[i].Values[j]
					if !reflect.DeepEqual(v, w) && !(isEmptyString(w) && v == nil) {
						t.Errorf("feature %d value %d: %#v, want %#v", i, j, v, w)
					}
				}
				got, want := "", ""
				if len(f.Geometry) > 0 {
					b, _ := wkb.ToWKT(nil, f.Geometry)
					got = string(b)
				}
				if g, err := wkb.Decode(d.Feats[i].Geometry); err == nil && !g.IsEmpty() {
					want = string(g.AppendWKT(nil))
				}
				if got != want {
					t.Errorf("feature %d: %s, want %s", i, got, want)
				}
			}
		})
	}
}

func isEmptyString(v any) bool { s, ok := v.(string); return ok && s == "" }

// TestReadGDAL reads GeoPackages written by GDAL: geographic NAD27
// counties, and the same projected to UTM (reprojection is the caller's:
// the SRS definition comes with the reader).
func TestReadGDAL(t *testing.T) {
	gdaltest.Need(t)
	dir := t.TempDir()
	geo, utm := filepath.Join(dir, "nc.gpkg"), filepath.Join(dir, "nc_utm.gpkg")
	gdaltest.Ogr2ogr(t, "-f", "GPKG", geo, "../../testdata/real/nc.shp")
	gdaltest.Ogr2ogr(t, "-f", "GPKG", "-t_srs", "EPSG:32617", "-nln", "counties", utm, "../../testdata/real/nc.shp")
	for _, c := range []struct {
		path, layer string
		lonlat      bool
	}{{geo, "", false}, {utm, "counties", false}} {
		r, err := Open(context.Background(), c.path, c.layer)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		feats := readAll(t, r)
		if len(feats) != 100 {
			t.Fatalf("%s: %d features", c.path, len(feats))
		}
		srs := r.SRS()
		if srs.Definition == "" || srs.LonLat() != c.lonlat {
			t.Errorf("%s: srs %+v", c.path, srs)
		}
		found := false
		for i, a := range r.Attributes() {
			if a.OriginalName == "NAME" && feats[0].Values[i] == "Ashe" {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: attributes %v, first %v", c.path, r.Attributes(), feats[0].Values)
		}
	}
}

// TestReadErrors: files that are not GeoPackages, or lack what is asked,
// are clear EINVALID errors.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.gpkg")
	os.WriteFile(junk, []byte("this is not SQLite at all, just some text long enough to be a header......"), 0o644)
	empty := filepath.Join(dir, "empty.gpkg")
	db, err := sql.Open("sqlite", "file:"+empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	d := formattest.Datasets(t)
	var ours string
	for name, ds := range d {
		ours = writeDataset(t, ds)
		_ = name
		break
	}
	for _, c := range []struct {
		path, layer, want string
	}{
		{junk, "", "not a readable GeoPackage"},
		{empty, "", "not a GeoPackage"},
		{ours, "nope", "no such feature table"},
		{filepath.Join(dir, "missing.gpkg"), "", "GeoPackage"},
	} {
		r, err := Open(context.Background(), c.path, c.layer)
		if err == nil {
			r.Close()
		}
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want %q", filepath.Base(c.path), c.layer, err, c.want)
		}
	}
}

// FuzzRead: any file is a GeoPackage read to its end or a clear error,
// never a panic. The seeds are GeoPackages of every geometry kind with
// bytes changed here and there.
func FuzzRead(f *testing.F) {
	for _, d := range formattest.Datasets(f) {
		b, err := os.ReadFile(writeDataset(f, d))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "f.gpkg")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := Open(context.Background(), path, "")
		if err != nil {
			if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
				t.Fatalf("not EINVALID: %v", err)
			}
			return
		}
		defer r.Close()
		for i := 0; ; i++ {
			f, err := r.Next()
			if err == io.EOF {
				return
			} else if err != nil {
				if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
					t.Fatalf("not EINVALID: %v", err)
				}
				return
			}
			if len(f.Values) != len(r.Attributes()) {
				t.Fatalf("feature %d: %d values for %d attributes", i, len(f.Values), len(r.Attributes()))
			}
			if f.Geometry != nil {
				if _, err := wkb.Decode(f.Geometry); err != nil {
					t.Fatalf("feature %d: bad WKB: %v", i, err)
				}
			}
		}
	})
}
