package render

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"mapcommons/style"
)

// BenchmarkCountiesVsMapServer draws the same 1024×768 CHOROPLETH map of
// North Carolina's 100 counties (BIR74 in five quantile classes, a
// one-pixel outline at 75 %, in Web Mercator) to a PNG with this package
// and with MapServer's map2img (Debian's mapserver-bin, AGG, from a
// GeoPackage of the same counties made by ogr2ogr), in one run. Each
// reports cpu-ns/op, the CPU time (user and system) per image: ours from
// the process's rusage around the loop, MapServer's from its own, with
// map2img drawing the map b.N times in one process (-c), so that its
// start-up is spread over them. Skips MapServer without map2img and
// ogr2ogr.
//
//	go test -run '^$' -bench CountiesVsMapServer -count 5 ./render/
func BenchmarkCountiesVsMapServer(b *testing.B) {
	ctx := context.Background()
	s, ds := counties(b)
	classifier := style.NewClassifier(s.Features)
	layer := choropleth("BIR74")
	classes, err := classifier.Classify(ctx, &layer, ds)
	if err != nil {
		b.Fatal(err)
	}
	e := ds.Extent
	req := Request{Layers: []Layer{{Layer: layer, Dataset: ds}}, BBox: [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, Width: 1024, Height: 768}

	b.Run("mapcommons", func(b *testing.B) {
		var buf bytes.Buffer
		start := cpuTime()
		for b.Loop() {
			res, err := Draw(ctx, s.Features, classifier, req)
			if err != nil {
				b.Fatal(err)
			}
			buf.Reset()
			if err := EncodePNG(&buf, res.Image); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	})

	b.Run("mapserver", func(b *testing.B) {
		map2img, err1 := exec.LookPath("map2img")
		ogr2ogr, err2 := exec.LookPath("ogr2ogr")
		if err1 != nil || err2 != nil {
			b.Skip("map2img or ogr2ogr not installed (apt-get install mapserver-bin gdal-bin)")
		}
		dir := b.TempDir()
		gpkg := filepath.Join(dir, "nc.gpkg")
		if out, err := exec.Command(ogr2ogr, "-f", "GPKG", "-t_srs", "EPSG:4326", "-nln", "nc", gpkg, "../testdata/real/nc.shp").CombinedOutput(); err != nil {
			b.Fatalf("ogr2ogr: %v\n%s", err, out)
		}
		mapfile := filepath.Join(dir, "nc.map")
		if err := os.WriteFile(mapfile, []byte(countiesMapfile(gpkg, req, classes)), 0o644); err != nil {
			b.Fatal(err)
		}
		png := filepath.Join(dir, "nc.png")
		b.ResetTimer()
		cmd := exec.Command(map2img, "-m", mapfile, "-o", png, "-c", fmt.Sprint(b.N))
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("map2img: %v\n%s", err, out)
		}
		b.StopTimer()
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		if fi, err := os.Stat(png); err != nil || fi.Size() < 1000 {
			b.Fatalf("map2img drew no image: %v", err)
		}
	})
}

// cpuTime is the process's CPU time so far, user and system, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// countiesMapfile is a MapServer map of req's box and size drawing the
// counties of gpkg in the classes' colours, outlined as the layer is.
func countiesMapfile(gpkg string, req Request, classes *style.Classes) string {
	merc := func(lon, lat float64) (float64, float64) {
		const r = 6378137.0
		return r * lon * math.Pi / 180, r * math.Log(math.Tan(math.Pi/4+lat*math.Pi/360))
	}
	x0, y0 := merc(req.BBox[0], req.BBox[1])
	x1, y1 := merc(req.BBox[2], req.BBox[3])
	var cls strings.Builder
	n := len(classes.Breaks) - 1
	for i := 0; i < n; i++ {
		op := "<"
		if i == n-1 {
			op = "<="
		}
		c := classes.Colors[i]
		fmt.Fprintf(&cls, `    CLASS
      EXPRESSION ([BIR74] >= %v AND [BIR74] %s %v)
      STYLE COLOR %d %d %d END
      STYLE OUTLINECOLOR 51 51 51 WIDTH 1 OPACITY 75 END
    END
`, classes.Breaks[i], op, classes.Breaks[i+1], c>>16&0xff, c>>8&0xff, c&0xff)
	}
	return fmt.Sprintf(`MAP
  SIZE %d %d
  EXTENT %v %v %v %v
  UNITS METERS
  IMAGETYPE png
  PROJECTION "init=epsg:3857" END
  OUTPUTFORMAT NAME "png" DRIVER AGG/PNG MIMETYPE "image/png" IMAGEMODE RGBA TRANSPARENT ON EXTENSION "png" END
  LAYER
    NAME "nc"
    TYPE POLYGON
    STATUS DEFAULT
    CONNECTIONTYPE OGR
    CONNECTION "%s"
    DATA "nc"
    PROJECTION "init=epsg:4326" END
%s  END
END
`, req.Width, req.Height, x0, y0, x1, y1, gpkg, cls.String())
}
