package gpkg

// Fuzz targets that spend their time in our decoding rather than in the
// SQLite engine (FuzzRead mutates whole files, which the pure-Go SQLite,
// instrumented under -fuzz, reads a dozen a minute): the geometry BLOBs
// and the attribute values, seeded with those of real files (GDAL's, the
// OGC's CQL2 test data, ours) read once through SQLite before fuzzing.

import (
	"database/sql"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/formattest"
)

// realFiles are GeoPackages nobody on this project wrote.
var realFiles = []string{"../../testdata/ogc/ne110m4cql2.gpkg"}

// seedRows calls add with the geometry BLOB and the attribute cells of up
// to limit rows of every feature table of the GeoPackage at path.
func seedRows(f *testing.F, path string, limit int, add func(geom []byte, cells []any)) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT table_name FROM gpkg_contents WHERE data_type = 'features'`)
	if err != nil {
		f.Fatal(err)
	}
	for rows.Next() {
		var t string
		rows.Scan(&t)
		tables = append(tables, t)
	}
	rows.Close()
	for _, t := range tables {
		rows, err := db.Query(`SELECT * FROM "`+strings.ReplaceAll(t, `"`, `""`)+`" LIMIT ?`, limit)
		if err != nil {
			f.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			cells := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range cells {
				ptrs[i] = &cells[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				f.Fatal(err)
			}
			var geom []byte
			for i, c := range cells {
				if b, ok := c.([]byte); ok && len(b) > 8 && b[0] == 'G' && b[1] == 'P' {
					geom = b
					cells = append(cells[:i:i], cells[i+1:]...)
					break
				}
			}
			add(geom, cells)
		}
		rows.Close()
	}
}

// seedFiles are the real files and some of ours, written by WriteFile.
func seedFiles(f *testing.F) []string {
	files := append([]string(nil), realFiles...)
	for _, d := range formattest.Datasets(f) {
		files = append(files, writeDataset(f, d))
	}
	return files
}

// FuzzGeometry: any bytes decode to a geometry or an ErrInvalid error;
// what decodes encodes again (AppendGeometry) to a BLOB that decodes to
// the same geometry and an envelope that holds it.
func FuzzGeometry(f *testing.F) {
	for _, path := range seedFiles(f) {
		seedRows(f, path, 40, func(geom []byte, _ []any) {
			if geom != nil {
				f.Add(geom)
			}
		})
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, g, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("not ErrInvalid: %v", err)
			}
			return
		}
		w := g.AppendWKB(nil)
		if _, err := wkb.Normalize(w); err != nil {
			return // non-finite coordinates: the reader refuses them
		}
		again, env, empty, err := AppendGeometry(nil, w, h.SRSID)
		if err != nil {
			t.Fatalf("AppendGeometry of a decoded geometry: %v", err)
		}
		h2, g2, err := Decode(again)
		if err != nil {
			t.Fatalf("our BLOB does not decode: %v", err)
		}
		if h2.SRSID != h.SRSID || h2.Empty != empty || string(g2.AppendWKB(nil)) != string(w) {
			t.Fatalf("round trip: %+v %+v", h, h2)
		}
		if r, ok := g.Bounds(); ok && !empty && (r.MinX < env.MinX || r.MaxX > env.MaxX || r.MinY < env.MinY || r.MaxY > env.MaxY) {
			t.Fatalf("envelope %+v does not hold %+v", env, r)
		}
	})
}

// FuzzValues: a cell of any storage class converts, for a column of any
// type, to a value of that type (or none) or an error; never a panic, and
// never a value of another type. Seeded with the cells of real files.
func FuzzValues(f *testing.F) {
	for _, path := range seedFiles(f) {
		seedRows(f, path, 20, func(_ []byte, cells []any) {
			for _, c := range cells {
				switch c := c.(type) {
				case int64:
					f.Add(uint8(0), c, 0.0, "", []byte(nil))
				case float64:
					f.Add(uint8(1), int64(0), c, "", []byte(nil))
				case string:
					f.Add(uint8(2), int64(0), 0.0, c, []byte(nil))
				case []byte:
					f.Add(uint8(3), int64(0), 0.0, "", c)
				}
			}
		})
	}
	f.Add(uint8(4), int64(1700000000), 0.0, "", []byte(nil))
	types := []mapcommons.AttrType{mapcommons.AttrString, mapcommons.AttrInteger, mapcommons.AttrFloat, mapcommons.AttrBoolean, mapcommons.AttrDate}
	f.Fuzz(func(t *testing.T, class uint8, n int64, x float64, s string, b []byte) {
		var cell any
		switch class % 6 {
		case 0:
			cell = n
		case 1:
			cell = x
		case 2:
			cell = s
		case 3:
			cell = b
		case 4:
			cell = time.Unix(n%(1<<40), 0)
		case 5:
			cell = n%2 == 0
		}
		for _, typ := range types {
			v, err := convert(typ, cell)
			if err != nil || v == nil {
				continue
			}
			ok := false
			switch v.(type) {
			case string:
				ok = typ == mapcommons.AttrString || typ == mapcommons.AttrDate
			case int64:
				ok = typ == mapcommons.AttrInteger
			case float64:
				f := v.(float64)
				ok = typ == mapcommons.AttrFloat && !math.IsNaN(f) && !math.IsInf(f, 0)
			case bool:
				ok = typ == mapcommons.AttrBoolean
			}
			if !ok {
				t.Fatalf("%T %v as %s: %T %v", cell, cell, typ, v, v)
			}
		}
	})
}
