package geojson

import (
	"testing"

	"mapcommons/internal/formattest"
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
		formattest.CheckRead(t, data, Open, formattest.Rules{MaxFeatures: int64(len(data)) + 1, Booleans: true, EmptyStrings: true, EmptyGeometry: true})
	})
}
