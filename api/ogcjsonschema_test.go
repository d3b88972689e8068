package api_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The OGC's JSON Schemas kept as test data: the Tile Matrix Set
// standard's (testdata/ogc/tms, with the registry's WebMercatorQuad),
// TileJSON 3.0.0's (testdata/ogc/tilejson) and CQL2's list of functions
// (testdata/ogc/cql2-functions.json, its functions.yml as JSON).

// schemaBase is where the test data's schemas are put, so that their
// relative $refs ("crs.json") find each other.
const schemaBase = "https://schemas.test/"

// officialSchema compiles the schema file name of testdata/ogc/dir, with
// every other .json file of that directory as a resource it may refer to.
func officialSchema(t *testing.T, dir, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	files, err := filepath.Glob(filepath.Join("../testdata/ogc", dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v", dir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := c.AddResource(schemaBase+dir+"/"+filepath.Base(f), doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	s, err := c.Compile(schemaBase + dir + "/" + name)
	if err != nil {
		t.Fatalf("%s/%s: %v", dir, name, err)
	}
	return s
}

// fitsSchema checks a JSON body against a schema.
func fitsSchema(s *jsonschema.Schema, body []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// TestOGCAnswersFitTheOfficialSchemas: the tile matrix set, the tilesets
// (vector and map) and TileJSON answers fit the standards' JSON Schemas,
// WebMercatorQuad is the registry's, and /ogc/functions fits CQL2's
// functions schema; a spoiled answer does not fit.
func TestOGCAnswersFitTheOfficialSchemas(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	tms := officialSchema(t, "tms", "tileMatrixSet.json")
	tileset := officialSchema(t, "tms", "tileSet.json")
	tilejson := officialSchema(t, "tilejson", "schema.json")
	functions := officialSchema(t, ".", "cql2-functions.json")
	for _, c := range []struct {
		path   string
		schema *jsonschema.Schema
	}{
		{"/ogc/tileMatrixSets/WebMercatorQuad", tms},
		{"/ogc/collections/" + id + "/tiles/WebMercatorQuad", tileset},
		{"/ogc/collections/" + id + "/map/tiles/WebMercatorQuad", tileset},
		{"/ogc/collections/" + id + "/tiles/WebMercatorQuad/tilejson", tilejson},
		{"/ogc/functions", functions},
	} {
		body := must(t, ts.get(c.path, "alice"), 200)
		if err := fitsSchema(c.schema, body); err != nil {
			t.Errorf("GET %s does not fit its schema: %v; body %.300s", c.path, err, body)
		}
		var d map[string]any
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		// The check can fail: the answer with a required member spoiled.
		for _, k := range []string{"tileMatrices", "crs", "tiles", "functions"} {
			if _, ok := d[k]; ok {
				d[k] = 42
				spoiled, _ := json.Marshal(d)
				if fitsSchema(c.schema, spoiled) == nil {
					t.Errorf("GET %s with %s spoiled still fits", c.path, k)
				}
				break
			}
		}
	}

	// The queryables and the schema are JSON Schemas 2020-12 (compiling
	// checks them against its meta-schema), and every feature, its id and
	// geometry with its properties, fits the schema: counties, and points
	// with dates and nulls.
	dated := createDated(t, ts, "towns", "2021-04-16", nil, "1999-12-31")
	for _, coll := range []string{id, dated} {
		var schema *jsonschema.Schema
		for _, doc := range []string{"queryables", "schema"} {
			path := "/ogc/collections/" + coll + "/" + doc
			body := must(t, ts.get(path, "alice"), 200)
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource(schemaBase+"doc.json", v); err != nil {
				t.Fatal(err)
			}
			s, err := c.Compile(schemaBase + "doc.json")
			if err != nil {
				t.Errorf("GET %s is not a JSON Schema: %v", path, err)
				continue
			}
			if d := decode[map[string]any](t, body); d["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
				t.Errorf("GET %s: $schema %v", path, d["$schema"])
			}
			schema = s
		}
		fc := decode[struct {
			Features []struct {
				ID         any
				Geometry   any
				Properties map[string]any
			}
		}](t, must(t, ts.get("/ogc/collections/"+coll+"/items?limit=200", "alice"), 200))
		if schema == nil || len(fc.Features) == 0 {
			t.Fatalf("collection %s: no schema or no features", coll)
		}
		for _, f := range fc.Features {
			obj := map[string]any{"id": f.ID, "geometry": f.Geometry}
			for k, v := range f.Properties {
				obj[k] = v
			}
			b, _ := json.Marshal(obj)
			if err := fitsSchema(schema, b); err != nil {
				t.Errorf("collection %s: feature %v does not fit its schema: %v", coll, f.ID, err)
				break
			}
		}
	}

	// WebMercatorQuad is the registry's definition of it.
	type matrix struct {
		ID                        string
		ScaleDenominator          float64
		CellSize                  float64
		PointOfOrigin             []float64
		TileWidth, TileHeight     int
		MatrixWidth, MatrixHeight int
	}
	type set struct {
		ID, URI, CRS string
		TileMatrices []matrix
	}
	reg, err := os.ReadFile("../testdata/ogc/tms/WebMercatorQuad.registry.json")
	if err != nil {
		t.Fatal(err)
	}
	want := decode[set](t, reg)
	got := decode[set](t, must(t, ts.get("/ogc/tileMatrixSets/WebMercatorQuad", ""), 200))
	if got.ID != want.ID || got.URI != want.URI || !strings.HasSuffix(got.CRS, "/EPSG/0/3857") || len(got.TileMatrices) == 0 {
		t.Fatalf("WebMercatorQuad: %+v, want the registry's %s %s %s", got, want.ID, want.URI, want.CRS)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
	for i, m := range got.TileMatrices {
		if i >= len(want.TileMatrices) {
			t.Fatalf("tile matrix %s: the registry has %d", m.ID, len(want.TileMatrices))
		}
		r := want.TileMatrices[i]
		if m.ID != r.ID || !near(m.ScaleDenominator, r.ScaleDenominator) || !near(m.CellSize, r.CellSize) ||
			len(m.PointOfOrigin) != 2 || !near(m.PointOfOrigin[0], r.PointOfOrigin[0]) || !near(m.PointOfOrigin[1], r.PointOfOrigin[1]) ||
			m.TileWidth != r.TileWidth || m.TileHeight != r.TileHeight || m.MatrixWidth != r.MatrixWidth || m.MatrixHeight != r.MatrixHeight {
			t.Errorf("tile matrix %d: %+v, the registry's %+v", i, m, r)
		}
	}
}
