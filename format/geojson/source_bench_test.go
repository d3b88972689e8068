package geojson

import (
	"bytes"
	"fmt"
	"io"
	"testing"
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
	data := bigCollection(5000)
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		r, err := Open(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}
