package gdaltest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestOgrinfo(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.csv")
	os.WriteFile(p, []byte("WKT,name,n\n\"POINT (1 2)\",a,1\n\"LINESTRING (0 0,3 4)\",b,2\n"), 0o644)
	info := Ogrinfo(t, p, "-oo", "GEOM_POSSIBLE_NAMES=WKT")
	if info.Driver != "CSV" || len(info.Layers) != 1 {
		t.Fatalf("%+v", info)
	}
	l := info.Layers[0]
	if l.Name != "t" || l.Count != 2 || !l.HasExt || !Near(l.Extent, [4]float64{0, 0, 3, 4}, 1e-9) {
		t.Errorf("%+v", l)
	}
	if len(l.Fields) != 3 {
		t.Errorf("fields %q", l.Fields)
	}
}
