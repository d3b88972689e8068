package shapefile

import (
	"bytes"
	"reflect"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// wtRealFeatures reads a real shapefile with our reader and returns its
// attributes and features as the store would hand them to WriteZip.
func wtRealFeatures(t testing.TB, base string) ([]mapcommons.Attribute, []realFeat, []mapcommons.Feature) {
	t.Helper()
	r, rf := readReal(t, base)
	attrs := append([]mapcommons.Attribute(nil), r.Attributes()...)
	feats := make([]mapcommons.Feature, len(rf))
	for i, f := range rf {
		feats[i] = mapcommons.Feature{Values: f.values, Geometry: f.geom.AppendWKB(nil)}
	}
	return attrs, rf, feats
}

// TestWriteReal writes the real shapefiles, reads them back with our
// reader and compares every feature: the same attributes and types, the
// same values, and the same geometry, byte for byte.
func TestWriteReal(t *testing.T) {
	for _, base := range []string{"nc", "naturalearth_lowres", "naturalearth_cities"} {
		t.Run(base, func(t *testing.T) {
			attrs, _, feats := wtRealFeatures(t, base)
			m := wtMeta(base, attrs, feats)
			files, _ := wtUnzip(t, wtZip(t, m, feats))
			gotAttrs, got := wtRead(t, files, base)
			if attrList(gotAttrs) != attrList(attrs) {
				t.Errorf("attributes\n%s\nwant\n%s", attrList(gotAttrs), attrList(attrs))
			}
			if len(got) != len(feats) {
				t.Fatalf("%d features, want %d", len(got), len(feats))
			}
			for i, f := range got {
				if !reflect.DeepEqual(f.values, feats[i].Values) {
					t.Errorf("feature %d = %#v\nwant %#v", i, f.values, feats[i].Values)
				}
				if b := f.geom.AppendWKB(nil); !bytes.Equal(b, feats[i].Geometry) {
					t.Errorf("feature %d geometry differs:\n%.200s\nwant\n%.200s", i, wtWKT(f.geom), wtWKT(mustDecode(t, feats[i].Geometry)))
				}
			}
		})
	}
}

func mustDecode(t testing.TB, b []byte) wkb.Geom {
	t.Helper()
	g, err := wkb.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
