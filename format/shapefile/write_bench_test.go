package shapefile

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// wtPointScan streams n points with 5 attributes (integer, float, string,
// boolean, date) through one reused Feature, as the store does.
func wtPointScan(n int) (format.Meta, format.Scan) {
	attrs := wtAttrs("id:integer", "value:float", "name:string", "flag:boolean", "day:date")
	m := format.Meta{Name: "points", Attributes: attrs, GeometryMask: 1 << wkb.Point, Count: int64(n)}
	names := make([]string, 100)
	for i := range names {
		names[i] = "city number " + strconv.Itoa(i*7919)
	}
	// The values boxed up front, so that the benchmark counts the writer's
	// allocations only.
	ids, floats, texts := make([]any, n), make([]any, n), make([]any, len(names))
	for i := range n {
		ids[i], floats[i] = int64(i), float64(i)/7
	}
	for i, s := range names {
		texts[i] = s
	}
	scan := func(fn func(*mapcommons.Feature) error) error {
		f := mapcommons.Feature{Values: make([]any, 5)}
		for i := range n {
			f.Position = int64(i)
			f.Geometry = wkb.AppendPoint(f.Geometry[:0], -180+float64(i%36000)/100, -90+float64(i%18000)/100+1e-7*float64(i%1000))
			f.Values[0] = ids[i]
			f.Values[1] = floats[i]
			f.Values[2] = texts[i%len(texts)]
			f.Values[3] = i%3 == 0
			f.Values[4] = "2024-05-06"
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
	return m, scan
}

// BenchmarkWriteZip writes 1,000,000 points with 5 attributes; MB/s counts
// the shapefile's bytes (the zip entries uncompressed).
func BenchmarkWriteZip(b *testing.B) {
	for _, level := range []int{flate.BestSpeed, flate.DefaultCompression} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			defer func(l int) { wCompression = l }(wCompression)
			wCompression = level
			const n = 1_000_000
			m, scan := wtPointScan(n)
			tmp := b.TempDir()
			var buf bytes.Buffer
			if err := WriteZip(&buf, m, scan, tmp); err != nil {
				b.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				b.Fatal(err)
			}
			var size uint64
			for _, f := range zr.File {
				size += f.UncompressedSize64
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if err := WriteZip(&wtCountWriter{}, m, scan, tmp); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len())/1e6, "zipMB")
			b.ReportMetric(float64(size)/1e6, "shpMB")
		})
	}
}
