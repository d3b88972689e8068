package api_test

// Tests of the OGC API – Tiles routes on real data uploaded through the
// API: the documents, the tiles decoded (feature counts against
// features.json bbox queries, ids, properties, thinned points), GDAL's
// MVT driver reading fetched tiles (layer, counts, polygon validity),
// validators and the tile cache, permissions and refusals.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/internal/gdaltest"
	"mapcommons/mvt"
)

// tileFeature is one decoded MVT feature.
type tileFeature struct {
	id    uint64
	typ   uint64
	props map[string]any
	rings int // ClosePath commands (polygons)
}

// tileLayer is one decoded MVT layer.
type tileLayer struct {
	name     string
	extent   uint64
	features []tileFeature
}

// pbField walks the fields of a protobuf message: fn gets the field
// number, and the varint value or the bytes of a length-delimited field
// (fixed-size fields give their bytes too).
func pbField(b []byte, fn func(f int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		k, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("bad key")
		}
		b = b[n:]
		var v uint64
		var data []byte
		switch k & 7 {
		case 0:
			if v, n = binary.Uvarint(b); n <= 0 {
				return fmt.Errorf("bad varint")
			}
			b = b[n:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return fmt.Errorf("bad length")
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		case 1:
			if len(b) < 8 {
				return fmt.Errorf("short fixed64")
			}
			data, b = b[:8], b[8:]
		case 5:
			if len(b) < 4 {
				return fmt.Errorf("short fixed32")
			}
			data, b = b[:4], b[4:]
		default:
			return fmt.Errorf("wire type %d", k&7)
		}
		if err := fn(int(k>>3), v, data); err != nil {
			return err
		}
	}
	return nil
}

func pbPacked(b []byte) ([]uint64, error) {
	var out []uint64
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("bad packed varint")
		}
		out, b = append(out, v), b[n:]
	}
	return out, nil
}

// decodeMVT decodes a tile, checking what a client relies on: layer
// version 2, tags within the tables, geometry commands of the feature's
// type, polygon rings closed and not empty.
func decodeMVT(t testing.TB, b []byte) []tileLayer {
	t.Helper()
	var layers []tileLayer
	err := pbField(b, func(f int, _ uint64, lb []byte) error {
		if f != 3 {
			return fmt.Errorf("tile field %d", f)
		}
		l := tileLayer{extent: 4096}
		var keys []string
		var values []any
		var feats [][]byte
		version := uint64(0)
		err := pbField(lb, func(f int, v uint64, data []byte) error {
			switch f {
			case 15:
				version = v
			case 1:
				l.name = string(data)
			case 2:
				feats = append(feats, data)
			case 3:
				keys = append(keys, string(data))
			case 4:
				var val any
				err := pbField(data, func(f int, v uint64, d []byte) error {
					switch f {
					case 1:
						val = string(d)
					case 3:
						val = math.Float64frombits(binary.LittleEndian.Uint64(d))
					case 4, 5:
						val = int64(v)
					case 6:
						val = int64(v>>1) ^ -int64(v&1)
					case 7:
						val = v != 0
					default:
						return fmt.Errorf("value field %d", f)
					}
					return nil
				})
				values = append(values, val)
				return err
			case 5:
				l.extent = v
			}
			return nil
		})
		if err != nil {
			return err
		}
		if version != 2 || l.name == "" {
			return fmt.Errorf("layer version %d name %q", version, l.name)
		}
		for _, fb := range feats {
			ft := tileFeature{props: map[string]any{}}
			var tags, geom []uint64
			err := pbField(fb, func(f int, v uint64, data []byte) error {
				var err error
				switch f {
				case 1:
					ft.id = v
				case 2:
					tags, err = pbPacked(data)
				case 3:
					ft.typ = v
				case 4:
					geom, err = pbPacked(data)
				}
				return err
			})
			if err != nil {
				return err
			}
			for i := 0; i+1 < len(tags); i += 2 {
				if tags[i] >= uint64(len(keys)) || tags[i+1] >= uint64(len(values)) {
					return fmt.Errorf("tag out of range")
				}
				ft.props[keys[tags[i]]] = values[tags[i+1]]
			}
			if err := checkGeometry(&ft, geom); err != nil {
				return fmt.Errorf("feature %d: %v", ft.id, err)
			}
			l.features = append(l.features, ft)
		}
		layers = append(layers, l)
		return nil
	})
	if err != nil {
		t.Fatalf("tile does not decode: %v", err)
	}
	return layers
}

// checkGeometry follows the command stream (spec 4.3): MoveTo, LineTo
// and ClosePath in the order the type allows, polygon rings of at least
// three points and a non-zero area.
func checkGeometry(f *tileFeature, g []uint64) error {
	var x, y, area int64
	pts := 0
	for i := 0; i < len(g); {
		cmd, n := g[i]&7, int(g[i]>>3)
		i++
		switch cmd {
		case 1, 2:
			if n == 0 || i+2*n > len(g) {
				return fmt.Errorf("command %d count %d", cmd, n)
			}
			if cmd == 1 {
				pts, area = 0, 0
			}
			for k := 0; k < n; k++ {
				dx, dy := int64(g[i]>>1)^-int64(g[i]&1), int64(g[i+1]>>1)^-int64(g[i+1]&1)
				i += 2
				area += x*(y+dy) - (x+dx)*y
				x, y = x+dx, y+dy
				pts++
			}
		case 7:
			if f.typ != 3 || pts < 3 || area == 0 {
				return fmt.Errorf("ClosePath after %d points, area %d", pts, area)
			}
			f.rings++
		default:
			return fmt.Errorf("command %d", cmd)
		}
	}
	if f.typ == 3 && f.rings == 0 {
		return fmt.Errorf("polygon without a closed ring")
	}
	if f.typ < 1 || f.typ > 3 || len(g) == 0 {
		return fmt.Errorf("type %d with %d commands", f.typ, len(g))
	}
	return nil
}

// uploadReal uploads a shapefile of testdata/real as alice and returns
// the dataset's id.
func uploadReal(t *testing.T, ts *testServer, name string) string {
	t.Helper()
	files := map[string]string{}
	for _, ext := range []string{"shp", "shx", "dbf", "prj", "cpg"} {
		if _, err := os.Stat(realData + name + "." + ext); err == nil {
			files["dataset["+ext+"]"] = realData + name + "." + ext
		}
	}
	body, ct := multipartBody(t, files, nil)
	return strings.TrimPrefix(ts.createFrom(t, ct, body), "/datasets/")
}

// tilePath is the path of tile z/y/x of dataset id.
func tilePath(id string, z, y, x int) string {
	return fmt.Sprintf("/ogc/collections/%s/tiles/WebMercatorQuad/%d/%d/%d", id, z, y, x)
}

// getTile fetches and decodes a tile, which must have one layer named id.
func getTile(t *testing.T, ts *testServer, id string, z, y, x int, query string) ([]byte, []tileFeature) {
	t.Helper()
	w := ts.get(tilePath(id, z, y, x)+query, "")
	body := must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); ct != "application/vnd.mapbox-vector-tile" {
		t.Fatalf("Content-Type %q", ct)
	}
	layers := decodeMVT(t, body)
	if len(layers) != 1 || layers[0].name != id || layers[0].extent != 4096 {
		t.Fatalf("tile %d/%d/%d: layers %+v", z, y, x, layers)
	}
	return body, layers[0].features
}

// bboxNames runs features.json with the box of tile z/y/x (its buffer
// included) and returns the values of attr of the features found.
func bboxNames(t *testing.T, ts *testServer, id string, z, y, x int, attr string) map[string]bool {
	t.Helper()
	b := mvt.TileBounds(z, x, y, mvt.DefaultOptions().Buffer, mvt.DefaultOptions().Extent)
	u := fmt.Sprintf("/datasets/%s/features.json?bbox=%v,%v,%v,%v&limit=10000", id, b.MinX, b.MinY, b.MaxX, b.MaxY)
	out := map[string]bool{}
	for _, f := range decode[[]map[string]any](t, must(t, ts.get(u, ""), 200)) {
		out[fmt.Sprint(f[attr])] = true
	}
	return out
}

// allValues returns attr of every feature of a dataset, by position.
func allValues(t *testing.T, ts *testServer, id, attr string) []string {
	t.Helper()
	var out []string
	for _, f := range decode[[]map[string]any](t, must(t, ts.get("/datasets/"+id+"/features.json?limit=10000", ""), 200)) {
		out = append(out, fmt.Sprint(f[attr]))
	}
	return out
}

// tileError asserts an error answer under /ogc: the status, and a JSON
// body whose message ("error" of the GeoCommons routes, "description" of
// an OGC exception) says want.
func tileError(t *testing.T, w *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	body := must(t, w, status)
	m := decode[map[string]any](t, body)
	msg, _ := m["error"].(string)
	if d, ok := m["description"].(string); ok {
		msg = d
	}
	if m["code"] == nil || msg == "" || !strings.Contains(msg, want) {
		t.Fatalf("error body %s does not say %q", body, want)
	}
}

// TestTileDocuments checks the tilesets, tileset, TileJSON and tile
// matrix set documents.
func TestTileDocuments(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadReal(t, ts, "nc")
	coll := base + "/ogc/collections/" + id + "/tiles"

	sets := decode[map[string][]map[string]any](t, must(t, ts.get("/ogc/collections/"+id+"/tiles", ""), 200))["tilesets"]
	if len(sets) != 1 || sets[0]["dataType"] != "vector" || sets[0]["crs"] != "http://www.opengis.net/def/crs/EPSG/0/3857" ||
		sets[0]["tileMatrixSetURI"] != "http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad" || sets[0]["title"] != "nc" {
		t.Fatalf("tilesets %v", sets)
	}

	ts1 := decode[map[string]any](t, must(t, ts.get("/ogc/collections/"+id+"/tiles/WebMercatorQuad", ""), 200))
	links := map[string]map[string]any{}
	for _, l := range ts1["links"].([]any) {
		links[l.(map[string]any)["rel"].(string)] = l.(map[string]any)
	}
	if links["self"]["href"] != coll+"/WebMercatorQuad" ||
		links["http://www.opengis.net/def/rel/ogc/1.0/tiling-scheme"]["href"] != base+"/ogc/tileMatrixSets/WebMercatorQuad" ||
		links["item"]["href"] != coll+"/WebMercatorQuad/{tileMatrix}/{tileRow}/{tileCol}" || links["item"]["templated"] != true ||
		links["item"]["type"] != "application/vnd.mapbox-vector-tile" {
		t.Fatalf("tileset links %v", links)
	}
	layer := ts1["layers"].([]any)[0].(map[string]any)
	props := layer["propertiesSchema"].(map[string]any)["properties"].(map[string]any)
	if layer["id"] != id || layer["geometryDimension"] != 2.0 || props["NAME"].(map[string]any)["type"] != "string" ||
		props["CRESS_ID"].(map[string]any)["type"] != "integer" || len(props) != 14 {
		t.Fatalf("tileset layer %v", layer)
	}
	bb := ts1["boundingBox"].(map[string]any)
	if ll := bb["lowerLeft"].([]any); math.Abs(ll[0].(float64)+84.32) > 0.01 || math.Abs(ll[1].(float64)-33.88) > 0.01 {
		t.Fatalf("boundingBox %v", bb)
	}
	// The limits hold the dataset: the tile of zoom 6 NC's middle is in.
	for _, l := range ts1["tileMatrixSetLimits"].([]any) {
		m := l.(map[string]any)
		if m["tileMatrix"] == "6" && (m["minTileRow"] != 25.0 || m["maxTileRow"] != 25.0 || m["minTileCol"] != 17.0 || m["maxTileCol"] != 18.0) {
			t.Fatalf("limits of zoom 6: %v", m)
		}
	}

	for _, p := range []string{"/tilejson", "/tilejson.json"} {
		tj := decode[map[string]any](t, must(t, ts.get("/ogc/collections/"+id+"/tiles/WebMercatorQuad"+p, ""), 200))
		vl := tj["vector_layers"].([]any)[0].(map[string]any)
		fields := vl["fields"].(map[string]any)
		if tj["tilejson"] != "3.0.0" || tj["tiles"].([]any)[0] != coll+"/WebMercatorQuad/{z}/{y}/{x}" || vl["id"] != id ||
			fields["NAME"] != "String" || fields["AREA"] != "Number" || len(fields) != 14 || len(tj["bounds"].([]any)) != 4 ||
			len(tj["center"].([]any)) != 3 || tj["minzoom"] != 0.0 || tj["maxzoom"] != 22.0 {
			t.Fatalf("%s: %v", p, tj)
		}
	}
	tj := decode[map[string]any](t, must(t, ts.get("/ogc/collections/"+id+"/tiles/WebMercatorQuad/tilejson.json?properties=NAME,FIPS", ""), 200))
	if tj["tiles"].([]any)[0] != coll+"/WebMercatorQuad/{z}/{y}/{x}?properties=NAME,FIPS" ||
		len(tj["vector_layers"].([]any)[0].(map[string]any)["fields"].(map[string]any)) != 2 {
		t.Fatalf("tilejson with properties: %v", tj)
	}

	list := decode[map[string][]map[string]any](t, must(t, ts.get("/ogc/tileMatrixSets", ""), 200))["tileMatrixSets"]
	if len(list) != 1 || list[0]["id"] != "WebMercatorQuad" {
		t.Fatalf("tileMatrixSets %v", list)
	}
	tms := decode[map[string]any](t, must(t, ts.get("/ogc/tileMatrixSets/WebMercatorQuad", ""), 200))
	ms := tms["tileMatrices"].([]any)
	m0, m24 := ms[0].(map[string]any), ms[24].(map[string]any)
	near := func(a any, b float64) bool { return math.Abs(a.(float64)-b) <= 1e-9*b }
	o := m0["pointOfOrigin"].([]any)
	if len(ms) != 25 || tms["crs"] != "http://www.opengis.net/def/crs/EPSG/0/3857" || !near(m0["cellSize"], 156543.03392804097) ||
		!near(m0["scaleDenominator"], 559082264.0287178) || !near(-o[0].(float64), 20037508.3427892) || !near(o[1], 20037508.3427892) || m24["matrixWidth"] != float64(1<<24) || m24["id"] != "24" || m0["tileWidth"] != 256.0 ||
		m0["cornerOfOrigin"] != "topLeft" || !near(m24["scaleDenominator"], 33.32389974765287) {
		t.Fatalf("WebMercatorQuad: %v %v", m0, m24)
	}

	// Refusals.
	tileError(t, ts.get("/ogc/tileMatrixSets/WorldCRS84Quad", ""), 404, "WorldCRS84Quad")
	tileError(t, ts.get("/ogc/collections/"+id+"/tiles/WorldCRS84Quad", ""), 404, "WorldCRS84Quad")
	tileError(t, ts.get("/ogc/collections/999/tiles/WebMercatorQuad", ""), 404, "999")
	tileError(t, ts.get("/ogc/collections/"+id+"/tiles/WebMercatorQuad.xml", ""), 404, "xml")
	tileError(t, ts.get("/ogc/collections/"+id+"/tiles/WebMercatorQuad/tilejson?properties=nope", ""), 400, "nope")
	tileError(t, ts.do(req{method: "POST", path: "/ogc/collections/" + id + "/tiles/WebMercatorQuad/0/0/0", user: "alice"}), 405, "POST")
}

// TestTileContent fetches every tile of the NC counties at zooms 6 and 8
// and of the countries at zooms 0 to 2: each tile holds, by name, the
// features a features.json bbox query of the tile finds (a polygon whose
// box reaches into the buffer without the polygon may be missing, so the
// tile's names are a subset), with the stable id as MVT id, valid
// polygons, and every feature in some tile of each zoom.
func TestTileContent(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, tc := range []struct {
		name, attr string
		zooms      []int
	}{{"nc", "NAME", []int{6, 8}}, {"naturalearth_lowres", "name", []int{0, 1, 2}}} {
		t.Run(tc.name, func(t *testing.T) {
			id := uploadReal(t, ts, tc.name)
			names := allValues(t, ts, id, tc.attr)
			ext := tileBoundsOf(t, ts, id)
			for _, z := range tc.zooms {
				seen := map[string]bool{}
				for y := tileRowOf(ext[3], z); y <= tileRowOf(ext[1], z); y++ {
					for x := tileColOf(ext[0], z); x <= tileColOf(ext[2], z); x++ {
						_, feats := getTile(t, ts, id, z, y, x, "")
						want := bboxNames(t, ts, id, z, y, x, tc.attr)
						ids := map[uint64]bool{}
						for _, f := range feats {
							name := fmt.Sprint(f.props[tc.attr])
							if f.typ != 3 || f.id < 1 || f.id > uint64(len(names)) || names[f.id-1] != name || ids[f.id] {
								t.Fatalf("tile %d/%d/%d: feature id %d type %d %q (position %d is %q)", z, y, x, f.id, f.typ, name, f.id-1, names[min(int(f.id), len(names))-1])
							}
							if !want[name] {
								t.Errorf("tile %d/%d/%d has %q, which its bbox query does not find", z, y, x, name)
							}
							ids[f.id] = true
							seen[name] = true
						}
						if len(feats) > len(want) || len(feats) < len(want)*3/4 {
							t.Errorf("tile %d/%d/%d: %d features, the bbox query %d", z, y, x, len(feats), len(want))
						}
					}
				}
				if z == tc.zooms[len(tc.zooms)-1] && len(seen) != len(names) {
					t.Errorf("zoom %d: %d of %d features in the tiles", z, len(seen), len(names))
				}
			}
		})
	}
}

// tileBoundsOf is the dataset's extent as its tileset says.
func tileBoundsOf(t *testing.T, ts *testServer, id string) [4]float64 {
	tj := decode[map[string]any](t, must(t, ts.get("/ogc/collections/"+id+"/tiles/WebMercatorQuad/tilejson", ""), 200))
	var b [4]float64
	for i, v := range tj["bounds"].([]any) {
		b[i] = v.(float64)
	}
	return b
}

func tileColOf(lon float64, z int) int {
	return max(0, min(1<<z-1, int(math.Floor((lon+180)/360*float64(int(1)<<z)))))
}

func tileRowOf(lat float64, z int) int {
	s := math.Sin(lat * math.Pi / 180)
	y := 0.5 - math.Log((1+s)/(1-s))/(4*math.Pi)
	return max(0, min(1<<z-1, int(math.Floor(y*float64(int(1)<<z)))))
}

// TestTilePoints: the cities at zoom 0 are thinned, and the point_count
// of the tile's points adds up to the cities the bbox query finds; at
// zoom 10 a tile holds its cities one by one with their properties.
func TestTilePoints(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadReal(t, ts, "naturalearth_cities")
	_, feats := getTile(t, ts, id, 0, 0, 0, "")
	total := 0
	for _, f := range feats {
		n, ok := f.props["point_count"].(int64)
		if f.typ != 1 || !ok || n < 1 {
			t.Fatalf("thinned point %+v", f)
		}
		if n == 1 && f.props["name"] == nil {
			t.Fatalf("a point alone lost its name: %+v", f)
		}
		total += int(n)
	}
	want := len(bboxNames(t, ts, id, 0, 0, 0, "name"))
	all := len(allValues(t, ts, id, "name"))
	if total != want || total < all-2 || len(feats) >= total {
		t.Fatalf("zoom 0: point_count adds up to %d, the bbox finds %d of %d, %d points", total, want, all, len(feats))
	}
	// Paris at zoom 10, not thinned.
	z := 10
	y, x := tileRowOf(48.8566, z), tileColOf(2.3522, z)
	_, feats = getTile(t, ts, id, z, y, x, "")
	want = len(bboxNames(t, ts, id, z, y, x, "name"))
	if len(feats) != want || want == 0 || feats[0].props["name"] != "Paris" {
		t.Fatalf("zoom 10 tile of Paris: %+v, the bbox finds %d", feats, want)
	}
	if _, ok := feats[0].props["point_count"]; ok {
		t.Fatalf("a point at zoom 10 is thinned: %+v", feats[0])
	}
	// properties= picks the attributes; empty keeps none.
	_, feats = getTile(t, ts, id, z, y, x, "?properties=name")
	if len(feats[0].props) != 1 || feats[0].props["name"] != "Paris" {
		t.Fatalf("properties=name: %v", feats[0].props)
	}
	_, feats = getTile(t, ts, id, z, y, x, "?properties=")
	if len(feats) == 0 || len(feats[0].props) != 0 {
		t.Fatalf("properties=: %v", feats)
	}
	// A tile with nothing, inside the tileset's limits (the Pacific west
	// of the Galápagos): 200 with the empty layer, which every client reads.
	body, feats := getTile(t, ts, id, 12, tileRowOf(0, 12), tileColOf(-120, 12), "")
	if len(feats) != 0 || len(body) == 0 {
		t.Fatalf("empty tile: %d features, %d bytes", len(feats), len(body))
	}
}

// TestTileRefusals: tiles outside WebMercatorQuad, numbers that are not,
// unknown attributes and datasets.
func TestTileRefusals(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := ts.createCSV("?title=pts", "lat,lon,name\n1,2,a\n")
	id = strings.TrimPrefix(id, "/datasets/")
	for _, p := range []string{"25/0/0", "1/2/0", "1/0/2", "-1/0/0", "3/-1/0", "a/0/0", "0/0/b", "0/0.5/0"} {
		tileError(t, ts.get("/ogc/collections/"+id+"/tiles/WebMercatorQuad/"+p, ""), 400, "")
	}
	tileError(t, ts.get(tilePath(id, 0, 0, 0)+"?properties=name,nope", ""), 400, "nope")
	// Inside WebMercatorQuad but outside the tileset's tileMatrixSetLimits
	// (the rows and columns of its extent, tile matrices 0 to 22): 404.
	z, y, x := 22, tileRowOf(1, 22), tileColOf(2, 22)
	must(t, ts.get(tilePath(id, z, y, x), ""), 200)
	for _, p := range [][3]int{{10, 0, 0}, {z, y + 1, x}, {z, y, x - 1}, {23, 0, 0}, {24, 2 * y, 2 * x}} {
		tileError(t, ts.get(tilePath(id, p[0], p[1], p[2]), ""), 404, "tileset")
	}
	tileError(t, ts.get(tilePath("999", 0, 0, 0), ""), 404, "999")
	tileError(t, ts.get(tilePath("abc", 0, 0, 0), ""), 404, "abc")
	tileError(t, ts.get("/ogc/collections/"+id+"/tiles/WorldCRS84Quad/0/0/0", ""), 404, "WorldCRS84Quad")
	// The .pbf and .mvt suffixes name the same tile.
	a := must(t, ts.get(tilePath(id, 0, 0, 0), ""), 200)
	for _, ext := range []string{".pbf", ".mvt"} {
		if b := must(t, ts.get(tilePath(id, 0, 0, 0)+ext, ""), 200); !bytes.Equal(a, b) {
			t.Fatalf("%s differs", ext)
		}
	}
}

// TestTilePermissions: on an appliance, a private dataset's tiles and
// documents answer exactly as its features.json does (401 to anonymous
// callers, 404 to other users, as for a dataset that does not exist), and
// its owner gets them as private answers. (TestAccessMatrix walks every
// role and sharing setting.)
func TestTilePermissions(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	id := strings.TrimPrefix(ts.createCSV("?title=pts", "lat,lon,name\n1,2,a\n"), "/datasets/")
	n, _ := strconv.ParseInt(id, 10, 64)
	if _, err := ts.svc.Datasets.UpdateDataset(t.Context(), n, mapcommons.MetadataUpdate{Permissions: &[]mapcommons.Permission{}}); err != nil {
		t.Fatal(err)
	}
	paths := []string{tilePath(id, 0, 0, 0), "/ogc/collections/" + id + "/tiles", "/ogc/collections/" + id + "/tiles/WebMercatorQuad",
		"/ogc/collections/" + id + "/tiles/WebMercatorQuad/tilejson.json"}
	for _, user := range []string{"", "bob"} {
		want := ts.get("/datasets/"+id+"/features.json", user)
		missing := ts.get("/datasets/999/features.json", user)
		if want.Code != missing.Code || want.Code != 404 && want.Code != 401 {
			t.Fatalf("%q: features.json %d, a missing dataset %d", user, want.Code, missing.Code)
		}
		for _, p := range paths {
			if w := ts.get(p, user); w.Code != want.Code || strings.Contains(w.Body.String(), "pts") {
				t.Errorf("%q: %s answers %d %s, features.json %d", user, p, w.Code, w.Body, want.Code)
			}
		}
	}
	for _, p := range paths {
		w := ts.get(p, "alice")
		must(t, w, 200)
		if cc := w.Header().Get("Cache-Control"); !strings.HasPrefix(cc, "private") {
			t.Errorf("%s: Cache-Control %q", p, cc)
		}
	}
}

// withCounter rebuilds ts's server with feature queries counted
// (countingFeatures) and the tile cache of tileCache bytes.
func withCounter(ts *testServer, tileCache int64) *countingFeatures {
	cf := &countingFeatures{}
	ts.rebuild(func(c *api.Config) { c.TileCache = tileCache }, func(s *mapcommons.Services) { cf.FeatureService = s.Features; s.Features = cf })
	return cf
}

// TestTileCaching: the ETag is the dataset's version (304 on
// If-None-Match, a new tag after a change), a tile fetched again comes
// from the cache without a query, gzip when the client takes it, and a
// change of the dataset makes the tile again.
func TestTileCaching(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadReal(t, ts, "naturalearth_lowres")
	cf := withCounter(ts, 0)
	p := tilePath(id, 1, 0, 0)
	w := ts.get(p, "")
	plain := must(t, w, 200)
	etag := w.Header().Get("ETag")
	if !strings.HasPrefix(etag, `W/"d`+id+"-") || w.Header().Get("Cache-Control") != "public, max-age=0, must-revalidate" || cf.scans.Load() != 1 {
		t.Fatalf("ETag %q, Cache-Control %q, %d queries", etag, w.Header().Get("Cache-Control"), cf.scans.Load())
	}
	must(t, ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": etag}}), 304)
	// Again, gzip-encoded: from the cache.
	w = ts.do(req{method: "GET", path: p, header: map[string]string{"Accept-Encoding": "gzip"}})
	gz := must(t, w, 200)
	if w.Header().Get("Content-Encoding") != "gzip" || cf.scans.Load() != 1 {
		t.Fatalf("Content-Encoding %q, %d queries", w.Header().Get("Content-Encoding"), cf.scans.Load())
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); !bytes.Equal(b, plain) || len(gz) >= len(plain) {
		t.Fatalf("gzip form: %d bytes of %d, equal %v", len(gz), len(plain), bytes.Equal(b, plain))
	}
	// A tile made for a client that takes gzip goes out gzip-encoded too.
	w = ts.do(req{method: "GET", path: tilePath(id, 1, 1, 1), header: map[string]string{"Accept-Encoding": "gzip"}})
	must(t, w, 200)
	if w.Header().Get("Content-Encoding") != "gzip" || cf.scans.Load() != 2 {
		t.Fatalf("a new tile: Content-Encoding %q, %d queries", w.Header().Get("Content-Encoding"), cf.scans.Load())
	}
	// Another selection of properties is another tile.
	must(t, ts.get(p+"?properties=name", ""), 200)
	must(t, ts.get(p+"?properties=name", ""), 200)
	if cf.scans.Load() != 3 {
		t.Fatalf("%d queries", cf.scans.Load())
	}
	// A change of the dataset: a new tag, a new tile.
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + id + ".json?title=changed", user: "alice"}), 201)
	w = ts.do(req{method: "GET", path: p, header: map[string]string{"If-None-Match": etag}})
	must(t, w, 200)
	if w.Header().Get("ETag") == etag || cf.scans.Load() != 4 {
		t.Fatalf("after a change: ETag %q, %d queries", w.Header().Get("ETag"), cf.scans.Load())
	}
	// A tile past the server's limit of features is refused.
	ts.rebuild(func(c *api.Config) { c.MaxTileFeatures = 10 }, nil)
	tileError(t, ts.get(p, ""), 413, "more than 10 features")
	must(t, ts.get(tilePath(id, 6, tileRowOf(0, 6), tileColOf(-140, 6)), ""), 200) // the Pacific
	// Without the cache every fetch queries.
	cf = withCounter(ts, -1)
	must(t, ts.get(p, ""), 200)
	must(t, ts.get(p, ""), 200)
	if cf.scans.Load() != 2 {
		t.Fatalf("cache off: %d queries", cf.scans.Load())
	}
}

// TestTileGDAL has GDAL's MVT driver read fetched tiles of the counties
// (zoom 7) and the countries (zoom 1): the driver, the layer named by the
// dataset id, the feature count of our decoder, the attributes, and every
// polygon valid for SpatiaLite (through GDAL's SQLite dialect).
func TestTileGDAL(t *testing.T) {
	t.Parallel()
	bin := gdaltest.Need(t)
	ts := newServer(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, attr string
		z          int
	}{{"nc", "NAME", 7}, {"naturalearth_lowres", "iso_a3", 1}} {
		id := uploadReal(t, ts, tc.name)
		ext := tileBoundsOf(t, ts, id)
		for y := tileRowOf(ext[3], tc.z); y <= tileRowOf(ext[1], tc.z); y++ {
			for x := tileColOf(ext[0], tc.z); x <= tileColOf(ext[2], tc.z); x++ {
				body, feats := getTile(t, ts, id, tc.z, y, x, "")
				// The name GDAL reads z/x/y from (the XYZ order of a tile tree).
				path := filepath.Join(dir, id, strconv.Itoa(tc.z), strconv.Itoa(x), strconv.Itoa(y)+".pbf")
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, body, 0o644); err != nil {
					t.Fatal(err)
				}
				info := gdaltest.Ogrinfo(t, path)
				if info.Driver != "MVT" || len(info.Layers) != 1 || info.Layers[0].Name != id || int(info.Layers[0].Count) != len(feats) {
					t.Fatalf("%s: %d features decoded, GDAL says\n%s", path, len(feats), info.Output)
				}
				if len(feats) > 0 && !strings.Contains(strings.Join(info.Layers[0].Fields, "\n"), tc.attr+": String") {
					t.Errorf("%s: no %s field: %v", path, tc.attr, info.Layers[0].Fields)
				}
				// The tile's geographic extent: GDAL places it from the path.
				if ext := info.Layers[0].Extent; len(feats) > 0 && (ext[0] < -20037509 || ext[2] > 20037509) {
					t.Errorf("%s: extent %v", path, ext)
				}
				out, err := exec.Command(bin, "-ro", "-q", "-oo", "CLIP=NO", "-dialect", "sqlite", "-sql",
					`SELECT mvt_id, ST_IsValidReason(GEOMETRY) AS reason FROM "`+id+`"`, path).CombinedOutput()
				if err != nil {
					t.Fatalf("ogrinfo: %v\n%s", err, out)
				}
				reasons := regexp.MustCompile(`reason \(String\) = (.*)`).FindAllStringSubmatch(string(out), -1)
				if len(reasons) != len(feats) {
					t.Fatalf("%s: %d rows for %d features\n%s", path, len(reasons), len(feats), out)
				}
				for _, r := range reasons {
					if r[1] != "Valid Geometry" {
						t.Errorf("%s: %s", path, r[1])
					}
				}
			}
		}
	}
}

// tilePointsCSV is n deterministic random points: four in five over the
// Web Mercator world, one in five in the square degree east of 10°E 45°N
// (a city's density: a few hundred points a zoom 12 tile).
func tilePointsCSV(n int) string {
	r := rand.New(rand.NewPCG(7, 11))
	var b strings.Builder
	b.WriteString("lon,lat,n,cat\n")
	for i := 0; i < n; i++ {
		lon, lat := -180+360*r.Float64(), -85+170*r.Float64()
		if i%5 == 0 {
			lon, lat = 10+r.Float64(), 45+r.Float64()
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%d,c%d\n", lon, lat, r.IntN(1000), r.IntN(10))
	}
	return b.String()
}

// BenchmarkTile makes (tile cache off) tiles of zooms 0 to 4 and a zoom
// 12 tile of 200,000 random points (tilePointsCSV) through the API.
func BenchmarkTile(b *testing.B) {
	ts := newServer(b, func(c *api.Config) { c.TileCache = -1; c.ResponseCache = -1 })
	id := strings.TrimPrefix(ts.createCSV("?title=points", tilePointsCSV(200_000)), "/datasets/")
	for _, tc := range []struct {
		name    string
		z, y, x int
	}{{"z0", 0, 0, 0}, {"z1", 1, 0, 1}, {"z2", 2, 1, 2}, {"z4", 4, 5, 8}, {"z12", 12, tileRowOf(45.5, 12), tileColOf(10.5, 12)}} {
		b.Run(tc.name, func(b *testing.B) {
			p := tilePath(id, tc.z, tc.y, tc.x)
			size := 0
			for b.Loop() {
				w := ts.get(p, "")
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "bytes/tile")
		})
	}
}

// TestTileMatrixSetGDAL: GDAL's own reader of tile matrix sets (that of
// its OGC API and COG drivers; GDAL 3.6 reads the TMS 1.0 names only)
// takes our WebMercatorQuad document: a COG tiled by it has the pixel size
// of the document's cell size at the zoom GDAL picks.
func TestTileMatrixSetGDAL(t *testing.T) {
	t.Parallel()
	create := gdaltest.NeedTool(t, "gdal_create")
	translate := gdaltest.NeedTool(t, "gdal_translate")
	info := gdaltest.NeedTool(t, "gdalinfo")
	ts := newServer(t)
	doc := must(t, ts.get("/ogc/tileMatrixSets/WebMercatorQuad", ""), 200)
	dir := t.TempDir()
	tms, in, out := filepath.Join(dir, "tms.json"), filepath.Join(dir, "in.tif"), filepath.Join(dir, "out.tif")
	if err := os.WriteFile(tms, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{create, "-of", "GTiff", "-outsize", "10", "10", "-bands", "1", "-a_srs", "EPSG:4326", "-a_ullr", "-80", "36", "-79", "35", in},
		{translate, "-q", "-of", "COG", "-co", "TILING_SCHEME=" + tms, in, out},
	} {
		if b, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", filepath.Base(c[0]), err, b)
		}
	}
	b, err := exec.Command(info, out).CombinedOutput()
	if err != nil {
		t.Fatalf("gdalinfo: %v\n%s", err, b)
	}
	m := regexp.MustCompile(`(?s)Pixel Size = \(([0-9.]+),.*ZOOM_LEVEL=(\d+)`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("gdalinfo:\n%s", b)
	}
	var set struct {
		TileMatrices []struct {
			ID       string  `json:"id"`
			CellSize float64 `json:"cellSize"`
		} `json:"tileMatrices"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		t.Fatal(err)
	}
	z, _ := strconv.Atoi(m[2])
	px, _ := strconv.ParseFloat(m[1], 64)
	if z < 1 || z >= len(set.TileMatrices) || math.Abs(px-set.TileMatrices[z].CellSize) > 1e-6 {
		t.Fatalf("GDAL tiles at zoom %d with pixels of %v\n%s", z, px, b)
	}
}

// orderedFeatures strips what lets a store read a tile's points in two
// passes, out of order (FeatureQuery.AnyOrder, NoValues, Then): every
// query comes in position order with its values.
type orderedFeatures struct {
	mapcommons.FeatureService
	twoPass atomic.Int32 // queries that asked for two passes
}

func (f *orderedFeatures) ScanFeatures(ctx context.Context, id int64, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	if q.Then != nil {
		f.twoPass.Add(1)
	}
	cp := *q
	cp.AnyOrder, cp.NoValues, cp.Then = false, false, nil
	return f.FeatureService.ScanFeatures(ctx, id, &cp, fn)
}

// TestTilePointsTwoPasses: a thinned tile of points made the quick way
// (read out of order without values, then the values of the points alone
// in their cells, in the same snapshot) is byte for byte the tile read in
// position order with every value, on a dataset with edits in place (on
// PostgreSQL, its positions have holes): clusters, points alone with
// their values, edges of tiles.
func TestTilePointsTwoPasses(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	var b strings.Builder
	b.WriteString("lat,lon,name,n,x\n")
	r := rand.New(rand.NewPCG(4, 4))
	for i := range 3000 {
		lat, lon := -80+160*r.Float64(), -180+360*r.Float64()
		if i%3 == 0 {
			lat, lon = 10+r.Float64()/100, 10+r.Float64()/100
		}
		fmt.Fprintf(&b, "%.6f,%.6f,p%d,%d,%g\n", lat, lon, i, i, float64(i)/7)
	}
	ds := ts.createCSV("?title=pts", b.String())
	id := strings.TrimPrefix(ds, "/datasets/")
	must(t, ts.do(req{method: "DELETE", path: ds + "/features.json?ids=5", user: "alice"}), 204)
	must(t, ts.do(req{method: "PATCH", path: ds + "/features/8.json", user: "alice", ctype: "application/merge-patch+json",
		body: []byte(`{"name": "patched"}`)}), 200)
	tiles := [][3]int{{0, 0, 0}, {1, 0, 1}, {2, 1, 2}, {3, 3, 4}, {4, 7, 8}, {5, 15, 16}, {6, 31, 33}}
	quick := map[[3]int][]byte{}
	alone := 0
	for _, zyx := range tiles {
		body, feats := getTile(t, ts, id, zyx[0], zyx[1], zyx[2], "")
		quick[zyx] = body
		for _, f := range feats {
			if f.props["point_count"] == int64(1) {
				if f.props["name"] == nil {
					t.Fatalf("tile %v: a point alone without its values: %+v", zyx, f)
				}
				alone++
			}
		}
	}
	if alone < 50 {
		t.Fatalf("%d points alone in their cells", alone)
	}
	ordered := &orderedFeatures{}
	ts.rebuild(nil, func(s *mapcommons.Services) { ordered.FeatureService = s.Features; s.Features = ordered })
	for _, zyx := range tiles {
		body, _ := getTile(t, ts, id, zyx[0], zyx[1], zyx[2], "")
		if !bytes.Equal(body, quick[zyx]) {
			t.Fatalf("tile %v: %d bytes the quick way, %d in order", zyx, len(quick[zyx]), len(body))
		}
	}
	if ordered.twoPass.Load() == 0 {
		t.Fatal("no tile asked for two passes")
	}
}
