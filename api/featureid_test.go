package api_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"mapcommons/internal/gdaltest"
)

// TestFeatureIDs: features keep stable ids through deletes and appends,
// never reused; GeoJSON answers and downloads carry them ("id"), the
// GeoPackage and SpatiaLite downloads as their FIDs; positions (start,
// DELETE ?ids=) keep their array meaning.
func TestFeatureIDs(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	path := ts.createCSV("?title=Wells", "name,lat,lon\na,1,1\nb,2,2\nc,3,3\nd,4,4\n")
	type fc struct {
		Features []struct {
			ID         int64          `json:"id"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	idsOf := func(body []byte) ([]int64, string) {
		t.Helper()
		var ids []int64
		names := ""
		for _, f := range decode[fc](t, body).Features {
			ids = append(ids, f.ID)
			names += f.Properties["name"].(string)
		}
		return ids, names
	}
	want := func(query string, ids []int64, names string) {
		t.Helper()
		gotIDs, gotNames := idsOf(must(t, ts.get(path+"/features.json?geojson=1"+query, ""), 200))
		if !slices.Equal(gotIDs, ids) || gotNames != names {
			t.Fatalf("features%s: ids %v names %s, want %v %s", query, gotIDs, gotNames, ids, names)
		}
	}
	want("", []int64{1, 2, 3, 4}, "abcd")
	// Delete position 2 ("c", id 3): the others keep their ids.
	must(t, ts.do(req{method: "DELETE", path: path + "/features.json?ids=2", user: "alice"}), 204)
	want("", []int64{1, 2, 4}, "abd")
	want("&start=2", []int64{4}, "d") // positions are still positions
	if ids, _ := idsOf(must(t, ts.get(path+".geojson", ""), 200)); !slices.Equal(ids, []int64{1, 2, 4}) {
		t.Fatalf("GeoJSON download ids %v", ids)
	}
	// An append gets the next id, and deleting it does not free it.
	add := func(name string) {
		t.Helper()
		must(t, ts.do(req{method: "POST", path: path + "/features.json", user: "alice", ctype: "application/json",
			body: []byte(`[{"name":"` + name + `","geometry":{"type":"Point","coordinates":[5,5]}}]`)}), 201)
	}
	add("e")
	want("", []int64{1, 2, 4, 5}, "abde")
	must(t, ts.do(req{method: "DELETE", path: path + "/features.json?ids=3", user: "alice"}), 204)
	add("f")
	want("", []int64{1, 2, 4, 6}, "abdf")

	for _, ext := range []string{"gpkg", "sqlite"} {
		t.Run(ext, func(t *testing.T) {
			gdaltest.Need(t)
			file := filepath.Join(t.TempDir(), "wells."+ext)
			if err := os.WriteFile(file, must(t, ts.get(path+"."+ext, ""), 200), 0o644); err != nil {
				t.Fatal(err)
			}
			var fids []int64
			names := ""
			for _, f := range gdaltest.Features(t, file, "-al") {
				n, err := strconv.ParseInt(f.FID, 10, 64)
				if err != nil {
					t.Fatalf("FID %q", f.FID)
				}
				fids, names = append(fids, n), names+f.Fields["name"]
			}
			if !slices.Equal(fids, []int64{1, 2, 4, 6}) || names != "abdf" {
				t.Fatalf("ogrinfo FIDs %v names %s, want [1 2 4 6] abdf", fids, names)
			}
			// Through the spatial index: the R*Tree's ids are the FIDs.
			fs := gdaltest.Features(t, file, "-al", "-spat", "3.5", "3.5", "4.5", "4.5")
			if len(fs) != 1 || fs[0].FID != "4" || fs[0].Fields["name"] != "d" {
				t.Fatalf("spatial filter: %+v, want FID 4 (d)", fs)
			}
		})
	}
}
