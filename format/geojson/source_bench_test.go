package geojson

import (
	"bytes"
	"fmt"
	"testing"

	"mapcommons/internal/formattest"
)

// bigCollection is a FeatureCollection of n polygons with 4 properties.
func bigCollection(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"Feature","properties":{"name":"Feature %d","pop":%d,"area":%d.5,"ok":true},"geometry":{"type":"Polygon","coordinates":[[`, i, i*7, i)
		for j := 0; j < 50; j++ {
			fmt.Fprintf(&b, "[%d.123456,%d.654321],", j%180, j%90)
		}
		b.WriteString("[0.123456,0.654321]]]}}")
	}
	b.WriteString("]}")
	return b.Bytes()
}

func BenchmarkSourceRead(b *testing.B) {
	formattest.BenchmarkRead(b, bigCollection(5000), Open)
}
