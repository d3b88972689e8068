// lang.go: what the OGC API routes need around the parsers: the filter-lang
// values and the conformance classes this package implements.
package cql2

import (
	"slices"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Values of the filter-lang parameter.
const (
	LangText = "cql2-text"
	LangJSON = "cql2-json"
)

// ConformanceClasses are the CQL2 classes the parsers and the stores'
// evaluator (package feature) implement together: Basic CQL2
// (comparisons of a property with a literal, IS NULL, AND, OR, NOT, TRUE,
// FALSE), the advanced comparison operators (LIKE, BETWEEN, IN), the basic
// spatial functions (S_INTERSECTS with a point or a BBOX), Basic Spatial
// Functions Plus (S_INTERSECTS with every geometry literal type: points,
// lines, polygons with holes, their multi- forms and collections) and
// Spatial Functions (S_DISJOINT, S_EQUALS, S_TOUCHES, S_CROSSES, S_WITHIN,
// S_CONTAINS, S_OVERLAPS of the geometry with any literal, by DE-9IM) and
// Temporal Functions (T_AFTER … T_STARTS of instants and intervals, by
// Allen's interval algebra, rewritten into comparisons: temporal.go),
// case-insensitive and accent-insensitive comparisons (CASEI and ACCENTI
// of a property, which the evaluator folds, or of a string, folded here,
// in comparisons, LIKE, BETWEEN and IN: mapcommons.FoldText),
// property-property comparisons and arithmetic (comparisons and BETWEEN
// of properties, literals and + - * / % ^ DIV of numbers, as
// mapcommons.Operands; literal parts folded, a spatial function of two
// literals too: scalar.go), Functions (mapcommons.Functions, listed at
// /ogc/functions: funcs.go) and Array Functions (A_EQUALS, A_CONTAINS,
// A_CONTAINEDBY, A_OVERLAPS of JSON-array properties and array literals),
// in both encodings.
var ConformanceClasses = []string{
	"http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
	"http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
	"http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions-plus",
	"http://www.opengis.net/spec/cql2/1.0/conf/spatial-functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/temporal-functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/case-insensitive-comparison",
	"http://www.opengis.net/spec/cql2/1.0/conf/accent-insensitive-comparison",
	"http://www.opengis.net/spec/cql2/1.0/conf/property-property",
	"http://www.opengis.net/spec/cql2/1.0/conf/arithmetic",
	"http://www.opengis.net/spec/cql2/1.0/conf/functions",
	"http://www.opengis.net/spec/cql2/1.0/conf/array-functions",
}

// Parse parses a filter in the language lang names (a filter-lang value;
// "" is cql2-text, the default of OGC API Features Part 3). EINVALID for
// another language.
func Parse(lang, filter string) (*mapcommons.Expr, error) {
	return ParseIn(lang, filter, nil)
}

// ToCRS84 maps a list of x, y pairs of a CRS onto longitude, latitude
// (CRS84) in place: an EINVALID error for a point outside the CRS.
type ToCRS84 func(xy []float64) error

// ParseIn parses a filter as Parse does, its geometry literals (BBOX and
// geometries) in the CRS that toCRS84 maps onto longitude, latitude (the
// filter-crs parameter; nil: CRS84). The expression holds them in CRS84.
func ParseIn(lang, filter string, toCRS84 ToCRS84) (*mapcommons.Expr, error) {
	switch lang {
	case "", LangText:
		return parseText(filter, toCRS84)
	case LangJSON:
		return parseJSON([]byte(filter), toCRS84)
	}
	return nil, mapcommons.Errorf(mapcommons.EINVALID, "filter-lang: %q is not %s or %s", lang, LangText, LangJSON)
}

// bboxIn reads the numbers of a BBOX in the filter's CRS (bboxOf's rule
// once they are in CRS84): the corners are mapped; a west edge that maps
// onto 180 is -180 and an east edge onto -180 is 180, which keeps the
// box's sides (the edges of Web Mercator's square map onto the
// antimeridian).
func bboxIn(xs []float64, toCRS84 ToCRS84) (*mapcommons.BBox, error) {
	if toCRS84 == nil {
		return bboxOf(xs)
	}
	var c []float64
	switch len(xs) {
	case 4:
		c = slices.Clone(xs)
	case 6:
		c = []float64{xs[0], xs[1], xs[3], xs[4]}
	default:
		return bboxOf(xs)
	}
	if err := toCRS84(c); err != nil {
		return nil, err
	}
	const edge = 180 - 1e-9 // the square's edges map onto ±180 give or take a rounding
	if c[0] >= edge {
		c[0] = -180
	}
	if c[2] <= -edge {
		c[2] = 180
	}
	return bboxOf(c)
}

// geometryIn maps a geometry literal (stored WKB) in the filter's CRS onto
// CRS84.
func geometryIn(b []byte, toCRS84 ToCRS84) ([]byte, error) {
	if toCRS84 == nil {
		return b, nil
	}
	g, err := wkb.Decode(b)
	if err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "%v", err)
	}
	var walk func(g *wkb.Geom) error
	walk = func(g *wkb.Geom) error {
		if err := toCRS84(g.Coords); err != nil {
			return err
		}
		for _, r := range g.Rings {
			if err := toCRS84(r); err != nil {
				return err
			}
		}
		for i := range g.Parts {
			if err := walk(&g.Parts[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(&g); err != nil {
		return nil, err
	}
	return g.AppendWKB(nil), nil
}
