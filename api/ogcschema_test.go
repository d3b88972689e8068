package api_test

import (
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// ogcSchemaDoc is the part of a Part 5 schema the tests read.
type ogcSchemaDoc struct {
	Schema     string `json:"$schema"`
	ID         string `json:"$id"`
	Type       string
	Properties map[string]map[string]any
}

// TestOGCSchema: Part 5 (Schemas, returnables and receivables) wants the
// collection to link its schema (rel .../schema), and the schema to be a
// JSON Schema 2020-12 object of $id its URL whose properties have their
// types, the spatial one a format and no type, and the roles: id for the
// feature id, primary-geometry, and primary-instant for the first date
// attribute when it holds dates.
func TestOGCSchema(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	for _, c := range []struct {
		name    string
		values  []any
		format  string
		instant bool
	}{
		{"dates", []any{"2021-06-01", nil, "2021-04-16"}, "date", true},
		{"timestamps", []any{"2021-04-16T08:30:00Z"}, "date-time", true},
		{"text", []any{"2021-04-16", "soon"}, "", false},
	} {
		id := createDated(t, ts, c.name, c.values...)
		coll := decode[struct{ Links []ogcLink }](t, must(t, ts.get("/ogc/collections/"+id, ""), 200))
		href := base + "/ogc/collections/" + c.name + "-" + id + "/schema"
		if got := link(coll.Links, "http://www.opengis.net/def/rel/ogc/1.0/schema", "application/schema+json"); got != href {
			t.Fatalf("%s: schema link %q, want %s", c.name, got, href)
		}
		w := ts.get(pathOf(t, href), "")
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/schema+json") {
			t.Errorf("%s: Content-Type %q", c.name, ct)
		}
		s := decode[ogcSchemaDoc](t, must(t, w, 200))
		if s.Schema != "https://json-schema.org/draft/2020-12/schema" || s.ID != href || s.Type != "object" {
			t.Errorf("%s: $schema %q, $id %q, type %q", c.name, s.Schema, s.ID, s.Type)
		}
		roles := map[string]string{}
		for name, p := range s.Properties {
			if role, _ := p["x-ogc-role"].(string); role != "" {
				if roles[role] != "" {
					t.Errorf("%s: role %s twice", c.name, role)
				}
				roles[role] = name
			}
			if _, typed := p["type"]; typed == (name == "geometry") {
				t.Errorf("%s: property %s: %v", c.name, name, p)
			}
		}
		if p := s.Properties["id"]; roles["id"] != "id" || p["type"] != "integer" || p["readOnly"] != true {
			t.Errorf("%s: id %v, roles %v", c.name, p, roles)
		}
		if p := s.Properties["geometry"]; roles["primary-geometry"] != "geometry" || p["format"] != "geometry-point" {
			t.Errorf("%s: geometry %v", c.name, p)
		}
		if p := s.Properties["name"]; !nullableOf(p, "string") {
			t.Errorf("%s: name %v", c.name, p)
		}
		when := s.Properties["when"]
		if f, _ := when["format"].(string); !nullableOf(when, "string") || f != c.format {
			t.Errorf("%s: when %v, want format %q", c.name, when, c.format)
		}
		if got := roles["primary-instant"] == "when"; got != c.instant {
			t.Errorf("%s: when primary-instant %v, want %v (%v)", c.name, got, c.instant, when)
		}
		// Cached as the queryables: an ETag that answers 304.
		etag := w.Header().Get("ETag")
		if etag == "" || w.Header().Get("Cache-Control") == "" {
			t.Fatalf("%s: ETag %q, Cache-Control %q", c.name, etag, w.Header().Get("Cache-Control"))
		}
		if got := ts.do(req{method: "GET", path: pathOf(t, href), header: map[string]string{"If-None-Match": etag}}).Code; got != 304 {
			t.Errorf("%s: If-None-Match: %d, want 304", c.name, got)
		}
		if w := ts.get("/ogc/collections/"+id+"/schema?f=html", ""); !strings.Contains(string(must(t, w, 200)), "primary-geometry") {
			t.Errorf("%s: HTML form lacks the roles", c.name)
		}
	}
}

// TestOGCSchemaPolygons: the geometry's format is that of the features'
// geometry types (the counties are polygons or multipolygons).
func TestOGCSchemaPolygons(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := uploadNC(t, ts, "")
	s := decode[ogcSchemaDoc](t, must(t, ts.get("/ogc/collections/"+id+"/schema", ""), 200))
	switch f := s.Properties["geometry"]["format"]; f {
	case "geometry-polygon", "geometry-multipolygon", "geometry-polygon-or-multipolygon":
	default:
		t.Errorf("geometry format %v", f)
	}
}

// TestOGCSchemaIDAttribute: an attribute named id keeps its name; the
// feature id takes the first free of id_2, id_3, … and is the one
// property of role id.
func TestOGCSchemaIDAttribute(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	id := createOfAlice(t, ts, "ids", []mapcommons.Attribute{{Name: "id", Type: mapcommons.AttrString}, {Name: "id_2", Type: mapcommons.AttrFloat}},
		[]mapcommons.Feature{{Values: []any{"a", 1.5}, Geometry: wkb.AppendPoint(nil, 1, 1)}})
	s := decode[ogcSchemaDoc](t, must(t, ts.get("/ogc/collections/"+id+"/schema", ""), 200))
	if p := s.Properties["id"]; !nullableOf(p, "string") || p["x-ogc-role"] != nil {
		t.Errorf("id %v", p)
	}
	if p := s.Properties["id_2"]; !nullableOf(p, "number") || p["x-ogc-role"] != nil {
		t.Errorf("id_2 %v", p)
	}
	if p := s.Properties["id_3"]; p["type"] != "integer" || p["x-ogc-role"] != "id" {
		t.Errorf("id_3 %v", p)
	}
}

// nullableOf reports whether a property of a schema is of type t or null
// (an attribute's, which any feature may leave null).
func nullableOf(p map[string]any, t string) bool {
	ts, ok := p["type"].([]any)
	return ok && len(ts) == 2 && ts[0] == t && ts[1] == "null"
}
