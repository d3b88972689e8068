package api

import (
	"net/http"
	"strconv"
)

// handleOGCSchema answers GET /ogc/collections/{id}/schema: the schema of
// the collection's features as JSON Schema 2020-12 (OGC API Features
// Part 5 / Common Part 3, Schemas: the returnables and receivables). Its
// properties are the feature id (x-ogc-role id), the geometry
// (primary-geometry, of the format its geometry types allow) and every
// attribute, the first date attribute being the primary-instant when its
// values are dates or date-times. It is guarded and cached as the
// queryables are: who may not view the dataset gets what an unknown id
// gets.
func (s *Server) handleOGCSchema(w http.ResponseWriter, r *http.Request) error {
	ds, f, done, err := s.ogcCollectionRequest(w, r, "ogc-schema")
	if done || err != nil {
		return err
	}
	self := s.ogcBase(r) + "/collections/" + ds.ReadableName() + "/schema"
	page := &ogcPage{Title: "Schema of " + ds.Metadata.Title, Columns: []string{"property", "type", "role"}}
	props := map[string]any{}
	taken := map[string]bool{"geometry": true}
	for _, a := range ds.Attributes {
		taken[a.Name] = true
	}
	idName := "id" // the feature id's, unless an attribute is named so
	for n := 2; taken[idName]; n++ {
		idName = "id_" + strconv.Itoa(n)
	}
	props[idName] = map[string]any{"title": "feature id", "type": "integer", "x-ogc-role": "id", "readOnly": true}
	page.Rows = append(page.Rows, []string{idName, "integer", "id"})
	geom := geometryFormat(ds.GeometryMask)
	props["geometry"] = map[string]any{"title": "geometry", "format": geom, "x-ogc-role": "primary-geometry"}
	page.Rows = append(page.Rows, []string{"geometry", geom, "primary-geometry"})
	instant := dateAttr(ds.Attributes)
	for i, a := range ds.Attributes {
		p, err := s.attrSchema(r, ds, a)
		if err != nil {
			return err
		}
		prop := map[string]any{}
		for k, v := range p {
			prop[k] = v
		}
		// Any attribute may be null in a feature (a JSON null), which
		// the schema of what is returned has to allow.
		prop["type"] = []string{p["type"], "null"}
		role := ""
		// The primary instant is a temporal property: a date attribute
		// whose values are all dates or date-times.
		if i == instant && p["format"] != "" {
			role = "primary-instant"
			prop["x-ogc-role"] = role
		}
		props[a.Name] = prop
		typ := p["type"]
		if p["format"] != "" {
			typ += " (" + p["format"] + ")"
		}
		page.Rows = append(page.Rows, []string{a.Name, typ, role})
	}
	doc := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": self, "type": "object",
		"title": ds.Metadata.Title, "properties": props}
	return s.ogcAnswer(w, r, f, ogcSchema, doc, page)
}

// geometryFormat is the Part 5 format of a geometry property whose values
// are of the WKB types of mask (bit 1<<t for type code t): the one type,
// a type and its multi form ("geometry-point-or-multipoint"), else
// "geometry-any" (no geometry yet, or types of more than one family).
func geometryFormat(mask uint32) string {
	names := map[uint32]string{
		1 << 1: "geometry-point", 1 << 2: "geometry-linestring", 1 << 3: "geometry-polygon",
		1 << 4: "geometry-multipoint", 1 << 5: "geometry-multilinestring", 1 << 6: "geometry-multipolygon",
		1 << 7:      "geometry-geometrycollection",
		1<<1 | 1<<4: "geometry-point-or-multipoint", 1<<2 | 1<<5: "geometry-linestring-or-multilinestring",
		1<<3 | 1<<6: "geometry-polygon-or-multipolygon",
	}
	if n, ok := names[mask]; ok {
		return n
	}
	return "geometry-any"
}
