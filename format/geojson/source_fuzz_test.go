package geojson

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
	"unicode/utf8"

	"mapcommons"
	"mapcommons/format/wkb"
)

// FuzzGeoJSONRead reads any bytes: features or an EINVALID error (the input
// is in memory, so there are no I/O errors), never a panic or a hang; pass
// 2 never fails once pass 1 passed; every feature fits the attributes and
// its geometry is valid WKB in range.
func FuzzGeoJSONRead(f *testing.F) {
	for _, s := range []string{mixed, "", "[]", "{}", "null", `{"type":"Feature"}`,
		`{"type":"Point","coordinates":[1,2]}`,
		`{"type":"GeometryCollection","geometries":[{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]]]}]}`,
		`[{"type":"Feature","properties":{"a":[{"b":null}],"c":"\u00e9\ud800"},"geometry":{"type":"MultiLineString","coordinates":[[[0,0],[1,1]]]}}]`,
		`{"type":"FeatureCollection","crs":{"type":"name","properties":{"name":"EPSG:4326"}},"features":[{"type":"Feature","properties":{"v":1},"geometry":null},{"type":"Feature","properties":{"v":1.5}}]}`,
		"\xEF\xBB\xBF{\"features\":[]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(data)()
		r, err := Open(bytes.NewReader(data))
		if err != nil {
			var e *mapcommons.Error
			if !errors.As(err, &e) || e.Code != mapcommons.EINVALID {
				t.Fatalf("error %v (%T) is not EINVALID", err, err)
			}
			return
		}
		attrs := r.Attributes()
		if len(attrs) > mapcommons.MaxAttributes {
			t.Fatalf("%d attributes", len(attrs))
		}
		for n := int64(0); ; n++ {
			feat, err := r.Next()
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("pass 2 failed after pass 1 passed: %v", err)
			}
			if feat.Position != n || n > int64(len(data)) {
				t.Fatalf("feature %d at position %d", n, feat.Position)
			}
			if len(feat.Values) != len(attrs) {
				t.Fatalf("%d values for %d attributes", len(feat.Values), len(attrs))
			}
			for i, v := range feat.Values {
				ok := v == nil
				switch attrs[i].Type {
				case mapcommons.AttrInteger:
					_, ok2 := v.(int64)
					ok = ok || ok2
				case mapcommons.AttrFloat:
					_, ok2 := v.(float64)
					ok = ok || ok2
				case mapcommons.AttrBoolean:
					_, ok2 := v.(bool)
					ok = ok || ok2
				case mapcommons.AttrString:
					s, ok2 := v.(string)
					ok = ok || ok2 && utf8.ValidString(s)
				}
				if !ok {
					t.Fatalf("value %#v in a %s column", v, attrs[i].Type)
				}
			}
			if feat.Geometry == nil {
				continue
			}
			g, err := wkb.Decode(feat.Geometry)
			if err != nil {
				t.Fatalf("geometry %x: %v", feat.Geometry, err)
			}
			if b, ok := g.Bounds(); ok && (b.MinX < -180 || b.MaxX > 180 || b.MinY < -90 || b.MaxY > 90) {
				t.Fatalf("geometry %x: bounds %v", feat.Geometry, b)
			}
		}
	})
}

// watchdog crashes the fuzzing worker, reporting the input, when a call
// takes 10 seconds; the fuzzer itself has no notion of a hang.
func watchdog(input []byte) (stop func()) {
	if len(input) > 200 {
		input = append(input[:200:200], "..."...)
	}
	t := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %q", input)) })
	return func() { t.Stop() }
}
