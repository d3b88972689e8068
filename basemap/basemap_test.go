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

// TestEmbedded checks the embedded data: every country and place of the
// Natural Earth files, with names, closed rings, coordinates in range.
func TestEmbedded(t *testing.T) {
	d := Load()
	if len(d.Countries) != 177 || len(d.Places) != 243 {
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
				n := len(r)
				if n < 8 || r[0] != r[n-2] || r[1] != r[n-1] {
					t.Errorf("%s: a ring of %d coordinates, open or too short", c.Name, n)
				}
				for i := 0; i+1 < n; i += 2 {
					if r[i] < -180 || r[i] > 180 || r[i+1] < -90 || r[i+1] > 90 {
						t.Fatalf("%s: %v %v", c.Name, r[i], r[i+1])
					}
				}
			}
		}
	}
	if f := byName["France"]; f == nil || f.Continent != "Europe" || !(f.bounds.MinX < 2.35 && f.bounds.MaxX > 2.35 && f.bounds.MinY < 48.86 && f.bounds.MaxY > 48.86) {
		t.Errorf("France: %+v", f)
	}
	found := false
	for _, p := range d.Places {
		if p.Name == "Paris" {
			found = p.Lon > 2.2 && p.Lon < 2.5 && p.Lat > 48.7 && p.Lat < 49
		}
	}
	if !found {
		t.Error("no Paris at 2.35E 48.86N")
	}
	if len(embedded) > 100<<10 {
		t.Errorf("the embedded file is %d bytes", len(embedded))
	}
}

// TestGenerated runs the generator on testdata/real and compares its data
// with the embedded file's: the file is what go generate makes.
func TestGenerated(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out := filepath.Join(t.TempDir(), "ne.bin.gz")
	cmd := exec.Command(gobin, "run", "./gen", "-out", out, "../testdata/real")
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
			Polygons: [][][]float64{{{10, 45, 11, 45, 11, 46, 10, 45}, {10.2, 45.2, 10.4, 45.2, 10.3, 45.4, 10.2, 45.2}}, {{-179.999999, -89.5, 180, -89.5, 0, 0, -179.999999, -89.5}}}}},
		Places: []Place{{Name: "Strelsau", Lon: 10.5, Lat: 45.5}, {Name: "Zenda", Lon: -0.000001, Lat: 0}},
	}
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
		"not gzip":   []byte("mapcommons-basemap-1\n"),
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

// BenchmarkTile encodes tiles of the built-in basemap: zoom 0 (the world)
// and zoom 5 over Paris.
func BenchmarkTile(b *testing.B) {
	Load()
	for _, tc := range []struct {
		name    string
		z, x, y int
	}{{"z0", 0, 0, 0}, {"z5", 5, 16, 11}} {
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
