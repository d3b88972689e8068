package formattest

import (
	"slices"
	"strconv"
	"testing"

	"mapcommons/internal/gdaltest"
)

// CheckFeatureIDs writes the "points" dataset with write, its features
// carrying a store's stable ids (with gaps; some without an id), and checks
// that the integer primary key fid of table layer(name) and the row ids of
// the R*Tree index hold them (a feature without an id gets the one before
// plus one), with dense ids and with sparse ones, and that GDAL reads them
// as the FIDs, through its spatial filter too.
func CheckFeatureIDs(t *testing.T, write WriteFunc, ext string, layer func(name string) string, fid, index string) {
	for _, c := range []struct {
		name      string
		ids, want []int64
	}{
		{"dense", []int64{2, 3, 0, 7, 8, 0, 12, 20}, []int64{2, 3, 4, 7, 8, 9, 12, 20}},
		{"sparse", []int64{3, 0, 1 << 33, 0, 1<<33 + 5, 1 << 34, 0, 1<<34 + 1},
			[]int64{3, 4, 1 << 33, 1<<33 + 1, 1<<33 + 5, 1 << 34, 1<<34 + 1, 1<<34 + 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Datasets(t)["points"]
			for i, f := range d.Feats {
				g := *f
				g.ID = c.ids[i]
				d.Feats[i] = &g
			}
			path := WriteDataset(t, write, d, ext)
			table := layer(d.Meta.Name)
			db := OpenSQLite(t, path)
			col := func(q string) []int64 {
				t.Helper()
				rows, err := db.Query(q)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var out []int64
				for rows.Next() {
					var v int64
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					out = append(out, v)
				}
				return out
			}
			if got := col(`SELECT "` + fid + `" FROM "` + table + `" ORDER BY 1`); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", fid, got, c.want)
			}
			if got := col(`SELECT rowid FROM "` + index + `" ORDER BY 1`); !slices.Equal(got, c.want) {
				t.Errorf("index ids: %v, want %v", got, c.want)
			}
			var check string
			if err := db.QueryRow(`SELECT rtreecheck(?)`, index).Scan(&check); err != nil || check != "ok" {
				t.Errorf("rtreecheck: %q, %v", check, err)
			}
			t.Run("GDAL", func(t *testing.T) {
				gdaltest.Need(t)
				var fids []int64
				for _, f := range gdaltest.Features(t, path, table) {
					n, err := strconv.ParseInt(f.FID, 10, 64)
					if err != nil {
						t.Fatalf("FID %q", f.FID)
					}
					fids = append(fids, n)
				}
				if !slices.Equal(fids, c.want) {
					t.Errorf("GDAL FIDs %v, want %v", fids, c.want)
				}
				// POINT (12.5 41.9), the sixth, found through the index.
				fs := gdaltest.Features(t, path, table, "-spat", "12", "41", "13", "42")
				if len(fs) != 1 || fs[0].FID != strconv.FormatInt(c.want[5], 10) {
					t.Errorf("spatial filter: %+v, want FID %d", fs, c.want[5])
				}
			})
		})
	}
}
