package registry

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// places is a small dataset of two points, in every download format.
func places() (format.Meta, format.Scan) {
	attrs := []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "depth", Type: mapcommons.AttrInteger}}
	feats := []mapcommons.Feature{
		{ID: 1, Values: []any{"Well A", int64(12)}, Geometry: wkb.AppendPoint(nil, -71.06, 42.36)},
		{ID: 2, Values: []any{"Well B", nil}, Geometry: wkb.AppendPoint(nil, -70.5, 41.9)},
	}
	m := format.Meta{Name: "places", Title: "Places", Attributes: attrs, GeometryMask: 1 << wkb.Point, Count: 2,
		Extent: &wkb.Rect{MinX: -71.06, MinY: 41.9, MaxX: -70.5, MaxY: 42.36}, Link: "http://example.net/datasets/1.json"}
	scan := func(fn func(*mapcommons.Feature) error) error {
		for i := range feats {
			if err := fn(&feats[i]); err != nil {
				return err
			}
		}
		return nil
	}
	return m, scan
}

// TestDownloadsReadBack writes the dataset in every download format the
// registry knows and reads back, through the registry's readers, those
// that are also upload kinds: the same two features.
func TestDownloadsReadBack(t *testing.T) {
	m, scan := places()
	for _, ext := range []string{"csv", "geojson", "kml", "kmz", "atom", "rss", "zip", "sqlite", "spatialite", "gpkg"} {
		d, ok := DownloadOf(ext)
		if !ok || (d.Stream == nil) == (d.Build == nil) {
			t.Errorf("%s: %+v, %v: want one way of writing", ext, d, ok)
			continue
		}
		if ct, _ := format.ContentType(d.Format); d.ContentType != ct || ct == "" {
			t.Errorf("%s: content type %q", ext, d.ContentType)
		}
		path := filepath.Join(t.TempDir(), "places."+d.Format)
		if d.Build != nil {
			if err := d.Build(context.Background(), path, m, scan); err != nil {
				t.Fatalf("%s: %v", ext, err)
			}
		} else {
			var b bytes.Buffer
			if err := d.Stream(&b, m, scan, t.TempDir()); err != nil {
				t.Fatalf("%s: %v", ext, err)
			}
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() == 0 {
			t.Fatalf("%s: wrote %v, %v", ext, st, err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		src, ok, err := Open(d.Format, f)
		if !ok {
			f.Close()
			continue // an archive or a database: ingest opens those
		}
		if err != nil {
			t.Fatalf("%s: reading back: %v", ext, err)
		}
		var names []any
		for {
			ft, err := src.Next()
			if err == mapcommons.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", ext, err)
			}
			names = append(names, ft.Values[0])
		}
		f.Close()
		if len(names) != 2 || names[0] != "Well A" || names[1] != "Well B" {
			t.Errorf("%s: read back %v", ext, names)
		}
	}
	for _, ext := range []string{"json", "shp", "html", ""} {
		if d, ok := DownloadOf(ext); ok {
			t.Errorf("%q downloads as %+v", ext, d)
		}
	}
	for _, kind := range []string{format.KindShp, format.KindZip, format.KindKMZ, format.KindGPKG, "pdf"} {
		if _, ok, _ := Open(kind, bytes.NewReader(nil)); ok {
			t.Errorf("%s is opened from one stream", kind)
		}
	}
}
