// lang.go: what the OGC API routes need around the parsers: the filter-lang
// values and the conformance classes this package implements.
package cql2

import "mapcommons"

// Values of the filter-lang parameter.
const (
	LangText = "cql2-text"
	LangJSON = "cql2-json"
)

// ConformanceClasses are the CQL2 classes the parsers and the segment
// engine implement together: Basic CQL2 (comparisons of a property with a
// literal, IS NULL, AND, OR, NOT, TRUE, FALSE), the advanced comparison
// operators (LIKE, BETWEEN, IN) and the basic spatial functions
// (S_INTERSECTS with a point or a BBOX), in both encodings. Lines,
// polygons without holes and the multi- geometries are accepted as well;
// polygons with holes are refused, so Basic Spatial Functions Plus is not
// claimed.
var ConformanceClasses = []string{
	"http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
	"http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
	"http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators",
	"http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions",
}

// Parse parses a filter in the language lang names (a filter-lang value;
// "" is cql2-text, the default of OGC API Features Part 3). EINVALID for
// another language.
func Parse(lang, filter string) (*mapcommons.Expr, error) {
	switch lang {
	case "", LangText:
		return ParseText(filter)
	case LangJSON:
		return ParseJSON([]byte(filter))
	}
	return nil, mapcommons.Errorf(mapcommons.EINVALID, "filter-lang: %q is not %s or %s", lang, LangText, LangJSON)
}
