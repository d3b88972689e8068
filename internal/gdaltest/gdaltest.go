// Package gdaltest opens the files our writers produce with GDAL's ogrinfo,
// the interoperability oracle of the tests. GDAL is not a dependency of
// mapcommons: tests skip the check when ogrinfo is missing, unless the
// environment sets MAPCOMMONS_REQUIRE_GDAL=1 (as CI does), where a missing
// ogrinfo fails the test.
package gdaltest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Layer is what ogrinfo -al -so says of one layer.
type Layer struct {
	Name     string
	Geometry string // "Point", "Multi Polygon", "Unknown (any)", …
	Count    int64
	Extent   [4]float64 // minx, miny, maxx, maxy
	HasExt   bool
	SRS      string   // the layer's SRS WKT, "(unknown)" when none
	Fields   []string // "name: Type (w.p)" lines, as printed
}

// Info is what ogrinfo -al -so says of a file.
type Info struct {
	Driver string
	Layers []Layer
	Output string // all of it, for failure messages
}

// Need skips the test when ogrinfo is missing (fails it under
// MAPCOMMONS_REQUIRE_GDAL=1) and returns the path of ogrinfo.
func Need(t testing.TB) string {
	t.Helper()
	return NeedTool(t, "ogrinfo")
}

// NeedTool is Need for any GDAL program (ogr2ogr, gdaltransform, …): it
// returns the program's path.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("MAPCOMMONS_REQUIRE_GDAL") == "1" {
			t.Fatalf("%s is not installed (apt-get install gdal-bin) and MAPCOMMONS_REQUIRE_GDAL=1", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

// Ogr2ogr runs ogr2ogr with args (see NeedTool), failing the test when it
// fails.
func Ogr2ogr(t testing.TB, args ...string) {
	t.Helper()
	bin := NeedTool(t, "ogr2ogr")
	if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("ogr2ogr %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

var (
	reDriver = regexp.MustCompile("using driver `([^']+)' successful")
	reExtent = regexp.MustCompile(`^Extent: \(([-0-9.e+]+), ([-0-9.e+]+)\) - \(([-0-9.e+]+), ([-0-9.e+]+)\)`)
)

// Ogrinfo runs ogrinfo -ro -al -so on path (with any extra arguments, such
// as open options) and parses its summary. A file ogrinfo cannot open
// fails the test.
func Ogrinfo(t testing.TB, path string, extra ...string) Info {
	t.Helper()
	bin := Need(t)
	args := append([]string{"-ro", "-al", "-so"}, extra...)
	args = append(args, path)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	info, perr := Parse(string(out))
	if perr != nil {
		t.Fatalf("ogrinfo %s: %v\n%s", strings.Join(args, " "), perr, out)
	}
	return info
}

// Parse reads the output of ogrinfo -al -so.
func Parse(out string) (Info, error) {
	info := Info{Output: out}
	if m := reDriver.FindStringSubmatch(out); m != nil {
		info.Driver = m[1]
	}
	var cur *Layer
	inSRS := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "Layer name: "):
			info.Layers = append(info.Layers, Layer{Name: strings.TrimPrefix(line, "Layer name: ")})
			cur, inSRS = &info.Layers[len(info.Layers)-1], false
		case cur == nil:
		case strings.HasPrefix(line, "Geometry: "):
			cur.Geometry = strings.TrimPrefix(line, "Geometry: ")
		case strings.HasPrefix(line, "Feature Count: "):
			n, err := strconv.ParseInt(strings.TrimPrefix(line, "Feature Count: "), 10, 64)
			if err != nil {
				return info, fmt.Errorf("feature count: %v", err)
			}
			cur.Count = n
		case strings.HasPrefix(line, "Extent: "):
			m := reExtent.FindStringSubmatch(line)
			if m == nil {
				return info, fmt.Errorf("extent line %q", line)
			}
			for i := 0; i < 4; i++ {
				cur.Extent[i], _ = strconv.ParseFloat(m[i+1], 64)
			}
			cur.HasExt = true
		case strings.HasPrefix(line, "Layer SRS WKT:"):
			inSRS = true
		case inSRS && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "(unknown)") || strings.HasPrefix(line, "GEOGCRS") || strings.HasPrefix(line, "PROJCRS") || strings.HasPrefix(line, "GEOGCS") || strings.HasPrefix(line, "PROJCS")):
			cur.SRS += line + "\n"
		default:
			inSRS = false
			if i := strings.Index(line, ": "); i > 0 && !strings.Contains(line[:i], " ") && strings.Contains(line, "(") {
				cur.Fields = append(cur.Fields, line)
			}
		}
	}
	if len(info.Layers) == 0 {
		return info, fmt.Errorf("no layer")
	}
	return info, nil
}

// Near reports whether two extents agree within tol in every coordinate.
func Near(a, b [4]float64, tol float64) bool {
	for i := range a {
		if d := a[i] - b[i]; d > tol || d < -tol {
			return false
		}
	}
	return true
}

// GeometryType returns how ogrinfo names a geometry type code (0 any, 1
// Point … 7 GeometryCollection).
func GeometryType(code int) string {
	switch code {
	case 1:
		return "Point"
	case 2:
		return "Line String"
	case 3:
		return "Polygon"
	case 4:
		return "Multi Point"
	case 5:
		return "Multi Line String"
	case 6:
		return "Multi Polygon"
	case 7:
		return "Geometry Collection"
	}
	return "Unknown (any)"
}

// Count runs ogrinfo -ro -so with extra arguments (such as -spat) on one
// layer and returns its feature count and the whole output.
func Count(t testing.TB, path, layer string, extra ...string) (int64, string) {
	t.Helper()
	bin := Need(t)
	args := append([]string{"-ro", "-so"}, extra...)
	args = append(args, path, layer)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %v: %v\n%s", args, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(line, "Feature Count: "); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n, string(out)
		}
	}
	t.Fatalf("ogrinfo %v: no feature count\n%s", args, out)
	return 0, ""
}

// Feature is one feature as ogrinfo prints it: its FID, fields (by name,
// as printed) and geometry WKT ("" when none).
type Feature struct {
	FID    string
	Fields map[string]string
	WKT    string
}

// Features runs ogrinfo -ro -q path with extra arguments (such as -sql)
// and returns the features it prints.
func Features(t testing.TB, path string, extra ...string) []Feature {
	t.Helper()
	bin := Need(t)
	args := append([]string{"-ro", "-q", path}, extra...)
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ogrinfo %v: %v\n%s", args, err, out)
	}
	var fs []Feature
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "OGRFeature(") {
			i := strings.Index(line, "):")
			fs = append(fs, Feature{FID: line[i+2:], Fields: map[string]string{}})
			continue
		}
		if len(fs) == 0 || !strings.HasPrefix(line, "  ") {
			continue
		}
		f := &fs[len(fs)-1]
		if i, j := strings.Index(line, " ("), strings.Index(line, ") = "); i > 0 && j > i {
			f.Fields[strings.TrimSpace(line[:i])] = line[j+4:]
		} else if s := strings.TrimSpace(line); s != "" {
			f.WKT = s
		}
	}
	return fs
}

// SQL runs the query q with ogrinfo -sql on path and returns the fields of
// each row of the result, as printed.
func SQL(t testing.TB, path, q string) []map[string]string {
	t.Helper()
	var rows []map[string]string
	for _, f := range Features(t, path, "-sql", q) {
		rows = append(rows, f.Fields)
	}
	return rows
}
