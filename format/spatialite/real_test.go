package spatialite

import (
	"encoding/hex"
	"io"
	"os"
	"testing"

	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// realDir holds real shapefiles nobody on this project made (see
// shared/testdata/README.md); CI checks the repository out beside shared/.
const realDir = "../../../shared/testdata/real/"

// readReal reads a real shapefile into a dataset.
func readReal(t *testing.T, base string) dataset {
	t.Helper()
	open := func(ext string) *os.File {
		f, err := os.Open(realDir + base + ext)
		if err != nil {
			t.Skipf("real data: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	shp, dbf, shx := open(".shp"), open(".dbf"), open(".shx")
	cpg, _ := os.ReadFile(realDir + base + ".cpg")
	r, err := shapefile.Open(shp, dbf, shx, shapefile.Options{CPG: string(cpg)})
	if err != nil {
		t.Fatal(err)
	}
	d := newDataset(t, base, r.Attributes(), nil, nil)
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		c := *f
		c.Values = append([]any(nil), f.Values...)
		c.Geometry = append([]byte(nil), f.Geometry...)
		if len(f.Geometry) > 0 {
			d.meta.GeometryMask |= 1 << f.Geometry[1]
		}
		d.feats = append(d.feats, &c)
		d.wkt = append(d.wkt, "")
	}
	d.meta.Count = int64(len(d.feats))
	return d
}

func TestReal(t *testing.T) {
	gdaltest.Need(t)
	for _, base := range []string{"nc", "naturalearth_lowres", "naturalearth_cities"} {
		t.Run(base, func(t *testing.T) {
			d := readReal(t, base)
			path := writeDataset(t, d)
			info := gdaltest.Ogrinfo(t, path)
			if info.Driver != "SQLite" || len(info.Layers) != 1 {
				t.Fatalf("%s", info.Output)
			}
			l := info.Layers[0]
			e, _ := d.extent()
			if l.Count != int64(len(d.feats)) || !gdaltest.Near(l.Extent, [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, 1e-6) {
				t.Errorf("%d features, extent %v; want %d, %v", l.Count, l.Extent, len(d.feats), e)
			}
			if want := gdalTypeName[typeCode(d.meta.GeometryMask)]; l.Geometry != want {
				t.Errorf("geometry %q, want %q", l.Geometry, want)
			}
			if n, _ := ogrCount(t, path, TableName(base), "-spat", ftoa(e.MinX), ftoa(e.MinY), ftoa(e.MaxX), ftoa(e.MaxY)); n != int64(len(d.feats)) {
				t.Errorf("spatial filter on the extent: %d features", n)
			}
			// SpatiaLite reads every geometry back exactly.
			res := ogrSQL(t, path, `SELECT hex(AsBinary(geometry)) AS h FROM `+quote(TableName(base))+` ORDER BY ogc_fid`)
			if len(res) != len(d.feats) {
				t.Fatalf("%d rows", len(res))
			}
			for i, r := range res {
				b, err := hex.DecodeString(r["h"])
				if err != nil {
					t.Fatal(err)
				}
				g, err := wkb.Decode(b)
				if err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
				want, _ := wkb.ToWKT(nil, d.feats[i].Geometry)
				if got, _ := wkb.ToWKT(nil, g.AppendWKB(nil)); string(got) != string(want) {
					t.Errorf("row %d: SpatiaLite reads\n%.200s\nwant\n%.200s", i, got, want)
				}
			}
		})
	}
}
