package basemap

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEmbedded checks the embedded data: every country of the 1:110m
// file and every place of the 1:10m one, with names, closed rings,
// coordinates in range; each layer in each band, each band simpler than
// the next.
func TestEmbedded(t *testing.T) {
	d := Load()
	if len(d.Countries) != 177 || len(d.Places) != 7343 {
		t.Fatalf("%d countries, %d places", len(d.Countries), len(d.Places))
	}
	byName := map[string]*Country{}
	for i := range d.Countries {
		c := &d.Countries[i]
		byName[c.Name] = c
		if c.Name == "" || c.Continent == "" || len(c.Polygons) == 0 {
			t.Errorf("country %d: %+v", i, c.Name)
		}
		for _, p := range c.Polygons {
			for _, r := range p {
				checkRing(t, c.Name, r, true)
			}
		}
	}
	if f := byName["France"]; f == nil || f.Continent != "Europe" || !(f.bounds.MinX < 2.35 && f.bounds.MaxX > 2.35 && f.bounds.MinY < 48.86 && f.bounds.MaxY > 48.86) {
		t.Errorf("France: %+v", f)
	}
	// Load keeps the shapes only in pieces: the layers as decoded.
	shapes, err := Decode(bytes.NewReader(embedded))
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]*Layer{"land": &shapes.Land, "lakes": &shapes.Lakes, "rivers": &shapes.Rivers, "borders": &shapes.Borders} {
		prev := 0
		for b, shapes := range l {
			n := 0
			for _, s := range shapes {
				for _, r := range s.Rings {
					checkRing(t, name, r, name == "land" || name == "lakes")
					n += len(r) / 2
				}
			}
			if n == 0 || n <= prev {
				t.Errorf("%s: band %d: %d points (the band before: %d)", name, b, n, prev)
			}
			prev = n
		}
	}
	places := map[string]Place{}
	for _, p := range d.Places {
		if p.Name == "" || p.Lon < -180 || p.Lon > 180 || p.Lat < -90 || p.Lat > 90 || p.Rank > 10 {
			t.Fatalf("place %+v", p)
		}
		if _, ok := places[p.Name]; !ok {
			places[p.Name] = p
		}
	}
	if p := places["Paris"]; !(p.Lon > 2.2 && p.Lon < 2.5 && p.Lat > 48.7 && p.Lat < 49) || !p.Capital || p.Population < 5e6 || p.MinZoom10 > 0 {
		t.Errorf("Paris: %+v", p)
	}
	if p := places["Olinda"]; !(p.Lon > -34.9 && p.Lon < -34.8 && p.Lat > -8.1 && p.Lat < -7.9) || p.Capital || p.MinZoom10 < 30 {
		t.Errorf("Olinda: %+v", p)
	}
	if len(embedded) > 8<<20 {
		t.Errorf("the embedded file is %d bytes", len(embedded))
	}
}

// checkRing checks a ring (closed) or a line of a shape: long enough,
// coordinates in range.
func checkRing(t *testing.T, name string, r []float64, closed bool) {
	t.Helper()
	n := len(r)
	if n < 4 || (closed && (n < 8 || r[0] != r[n-2] || r[1] != r[n-1])) {
		t.Errorf("%s: a ring or line of %d coordinates, open or too short", name, n)
	}
	for i := 0; i+1 < n; i += 2 {
		if r[i] < -180 || r[i] > 180 || r[i+1] < -90 || r[i+1] > 90 {
			t.Fatalf("%s: %v %v", name, r[i], r[i+1])
		}
	}
}

// TestGenerated runs the generator on testdata/real and the Natural Earth
// 1:10m GeoJSON files of $NATURALEARTH10M (not in the repository: see the
// package doc; skipped without) and compares its data with the embedded
// file's: the file is what go generate makes.
func TestGenerated(t *testing.T) {
	ne10 := os.Getenv("NATURALEARTH10M")
	if ne10 == "" {
		t.Skip("NATURALEARTH10M is not set")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "ne.bin.gz")
	cmd := exec.Command(gobin, "run", "./gen", "-out", out, "../testdata/real", ne10)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Decode(bytes.NewReader(embedded))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("naturalearth.bin.gz is not what the generator makes: run go generate ./basemap")
	}
}

// TestCodec round-trips data through Encode and Decode, and refuses
// damaged files.
func TestCodec(t *testing.T) {
	d := &Data{
		Countries: []Country{{Name: "Ruritania", ISO: "RUR", Continent: "Europe",
			Polygons: [][][]float64{{{10, 45, 11, 45, 11, 46, 10, 45}, {10.2, 45.2, 10.4, 45.2, 10.3, 45.4, 10.2, 45.2}}, {{-179.99999, -89.5, 180, -89.5, 0, 0, -179.99999, -89.5}}}}},
		Places: []Place{{Name: "Strelsau", Lon: 10.5, Lat: 45.5, MinZoom10: 37, Rank: 2, Population: 40_000_000, Capital: true},
			{Name: "Zenda", Lon: -0.00001, Lat: 0, MinZoom10: 0, Rank: 10}},
		Regions: []Place{{Name: "Zenda province", Lon: 10.25, Lat: 45.75, MinZoom10: 30, Rank: 1}},
	}
	d.Land[0] = []Shape{{Rings: [][]float64{{10, 45, 11, 45, 11, 46, 10, 45}}}}
	d.Land[2] = []Shape{{MinZoom10: 50, Rank: 3, Rings: [][]float64{{10, 45, 11, 45, 11, 46, 10.5, 46.00001, 10, 45}}}}
	d.Urban[1] = []Shape{{MinZoom10: 40, Rings: [][]float64{{10.4, 45.4, 10.6, 45.4, 10.6, 45.6, 10.4, 45.4}}}}
	d.Divisions[0] = []Shape{{MinZoom10: 20, Rank: 2, Rings: [][]float64{{10, 45.5, 11, 45.5}}}}
	d.Rivers[1] = []Shape{{MinZoom10: 31, Rank: 9, Name: "Ruritanian river", Rings: [][]float64{{10.1, 45.1, 10.9, 45.9}}}, {Name: "Zend", Rings: [][]float64{{0, 0, 1, 1, 2, 0}}}}
	var buf bytes.Buffer
	if err := Encode(&buf, d); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("round trip:\n%+v\n%+v", got, d)
	}
	// Damaged: not gzip, a bad magic, a truncated body, trailing bytes.
	body := gunzip(t, buf.Bytes())
	for name, b := range map[string][]byte{
		"not gzip":   []byte("mapcommons-basemap-3\n"),
		"magic":      gz(t, append([]byte("mapcommons-basemap-2\n"), body[len(magic):]...)),
		"truncated":  gz(t, body[:len(body)-3]),
		"trailing":   gz(t, append(append([]byte{}, body...), 0)),
		"huge count": gz(t, append([]byte(magic), 0xff, 0xff, 0xff, 0xff, 0x7f)),
	} {
		if _, err := Decode(bytes.NewReader(b)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func gunzip(t *testing.T, b []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := out.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestParseRasters(t *testing.T) {
	got, err := ParseRasters(" osm=https://tile.openstreetmap.org/{z}/{x}/{y}.png,topo=http://10.0.0.5:8080/t/{z}/{x}/{y}.jpg?key=1 ")
	if _, err := ParseRaster("v6=http://[::1]:8080/{z}/{x}/{y}.png"); err != nil {
		t.Errorf("an IPv6 host: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []Raster{{Name: "osm", URL: "https://tile.openstreetmap.org/{z}/{x}/{y}.png", Attribution: "© OpenStreetMap contributors"},
		{Name: "topo", URL: "http://10.0.0.5:8080/t/{z}/{x}/{y}.jpg?key=1", Attribution: "10.0.0.5"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%+v", got)
	}
	if l, err := ParseRasters(""); err != nil || l != nil {
		t.Errorf("empty: %v %v", l, err)
	}
	for spec, msg := range map[string]string{
		"osm":                                            "NAME=URLTEMPLATE",
		"=https://a/{z}/{x}/{y}":                         "NAME=URLTEMPLATE",
		"o/s=https://a/{z}/{x}/{y}":                      "NAME=URLTEMPLATE",
		"builtin=https://a/{z}/{x}/{y}":                  "built-in",
		"osm=ftp://a/{z}/{x}/{y}":                        "http or https",
		"osm=/tiles/{z}/{x}/{y}":                         "http or https",
		"osm=https://a/{z}/{x}.png":                      "no {y}",
		"a=https://a/{z}/{x}/{y} A=http://b/{z}/{x}/{y}": "twice",
		// Hosts go into the pages' policy: no wildcard, no odd names.
		"any=https://*/{z}/{x}/{y}.png":         "not a plain host",
		"any=https://*.example.org/{z}/{x}/{y}": "not a plain host",
		"x=https://a_b.example/{z}/{x}/{y}":     "not a plain host",
	} {
		if _, err := ParseRasters(spec); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", spec, err, msg)
		}
	}
	if r := Find(want, "TOPO"); r == nil || r.Name != "topo" {
		t.Errorf("Find TOPO: %v", r)
	}
	for _, n := range []string{"", "builtin", "nosuch"} {
		if r := Find(want, n); r != nil {
			t.Errorf("Find %q: %v", n, r)
		}
	}
}

// BenchmarkTile encodes tiles of the built-in basemap: zoom 0 (the world),
// zoom 5 over Paris and zoom 9 over New York.
func BenchmarkTile(b *testing.B) {
	Load()
	for _, tc := range []struct {
		name    string
		z, x, y int
	}{{"z0", 0, 0, 0}, {"z5", 5, 16, 11}, {"z9", 9, 150, 192}} {
		b.Run(tc.name, func(b *testing.B) {
			size := 0
			for b.Loop() {
				t, err := Tile(tc.z, tc.x, tc.y)
				if err != nil {
					b.Fatal(err)
				}
				size = len(t)
			}
			b.ReportMetric(float64(size)/1024, "KB")
		})
	}
}
