package proj

import (
	"testing"

	"mapcommons/format/wkb"
)

func benchForward(b *testing.B, file string, x, y float64) {
	tr := mustParse(b, readPRJ(b, file))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := float64(i%1000) * 100
		if _, _, err := tr.Forward(x+d, y+d); err != nil {
			b.Fatal(err)
		}
	}
}

// Transverse Mercator (UTM 33N, WGS 84: no datum shift).
func BenchmarkForwardTM(b *testing.B) { benchForward(b, "utm33n_wgs84.esri.prj", 450000, 4600000) }

// Lambert Conformal Conic 2SP (NC State Plane in US feet, NAD83).
func BenchmarkForwardLCC(b *testing.B) { benchForward(b, "nad83_nc_ftus.esri.prj", 2000000, 500000) }

// Transverse Mercator with a 7-parameter datum shift (OSGB36).
func BenchmarkForwardTMHelmert(b *testing.B) { benchForward(b, "osgb36_bng.esri.prj", 450000, 300000) }

// Albers (CONUS, NAD83).
func BenchmarkForwardAlbers(b *testing.B) { benchForward(b, "conus_albers.esri.prj", 500000, 1500000) }

// WKB of a 1000-vertex line in UTM.
func BenchmarkWKB(b *testing.B) {
	tr := mustParse(b, readPRJ(b, "utm33n_wgs84.esri.prj"))
	xy := make([]float64, 0, 2000)
	for i := 0; i < 1000; i++ {
		xy = append(xy, 400000+float64(i)*100, 4600000+float64(i)*50)
	}
	src := wkb.AppendLineString(nil, xy)
	var dst []byte
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if dst, err = tr.WKB(src, dst[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
