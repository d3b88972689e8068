package shapefile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

var wtUpdate = flag.Bool("update", false, "rewrite the golden files of the shapefile writer (testdata/write)")

const wtGoldenDir = "testdata/write"

// wtGoldenFeatures is a small dataset of every family, a feature without
// geometry and a long attribute name.
func wtGoldenFeatures() ([]mapcommons.Attribute, []mapcommons.Feature) {
	attrs := wtAttrs("id:integer", "value:float", "name:string", "flag:boolean", "day:date", "a_long_attribute_name:string")
	feats := []mapcommons.Feature{
		wtF(wkb.AppendPoint(nil, 2.3522, 48.8566), int64(1), 0.5, "Paris", true, "2024-02-29", "x"),
		wtF(wkb.AppendPoint(nil, -46.6333, -23.5505), int64(-22), nil, "São Paulo", false, nil, nil),
		wtF(nil, int64(3), 1e-9, "", nil, "1999-12-31", "nothing"),
		wtF(wkb.AppendMultiPoint(nil, []float64{1, 2, 3, 4}), int64(4), -3.25, "multi", true, "2000-01-01", "y"),
		wtF(wkb.AppendLineString(nil, []float64{0, 0, 1, 1, 2, 0}), int64(5), 12345.678, "line", false, "2001-02-03", "z"),
		wtF(wkb.AppendMultiLineString(nil, [][]float64{{0, 0, 1, 1}, {2, 2, 3, 3}}), int64(6), 6.0, "lines", true, nil, ""),
		wtF(wkb.AppendPolygon(nil, [][]float64{wtShell, wtHole}), int64(7), 7.5, "Ürümqi", nil, "2002-03-04", "w"),
		wtF(wkb.AppendMultiPolygon(nil, [][][]float64{{wtShell}, {wtShellB}}), int64(8), 8.125, "two", true, "2003-04-05", "v"),
	}
	return attrs, feats
}

// TestWriteGolden compares the entries of a small zip, byte for byte, with
// testdata/write/<entry>.golden; go test -run TestWriteGolden -update
// rewrites them.
func TestWriteGolden(t *testing.T) {
	attrs, feats := wtGoldenFeatures()
	files, names := wtUnzip(t, wtZip(t, wtMeta("golden", attrs, feats), feats))
	if *wtUpdate {
		if err := os.RemoveAll(wtGoldenDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(wtGoldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := os.WriteFile(filepath.Join(wtGoldenDir, n+".golden"), files[n], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(wtGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	var golden []string
	for _, e := range entries {
		golden = append(golden, strings.TrimSuffix(e.Name(), ".golden"))
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	if strings.Join(golden, " ") != strings.Join(sorted, " ") {
		t.Errorf("entries %v, golden files for %v", sorted, golden)
	}
	for _, n := range names {
		want, err := os.ReadFile(filepath.Join(wtGoldenDir, n+".golden"))
		if err != nil {
			t.Error(err)
			continue
		}
		if got := files[n]; !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s differs from its golden file at byte %d (%d bytes, golden %d); run with -update if the change is meant", n, i, len(got), len(want))
		}
	}
}
