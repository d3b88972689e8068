package mapcommons

import (
	"math"
	"strconv"
	"strings"

	"mapcommons/format/wkb"
)

// Feature query limits.
const (
	DefaultFeatureLimit = 30
	MaxFeatureLimit     = 10000

	// MaxInValues is the most alternatives one filter[x][][in] may list.
	MaxInValues = 1000
	// MaxNearVertices is the most vertices (longitude, latitude pairs) a
	// points, line or polygon query geometry may have.
	MaxNearVertices = 10000
)

// FeatureQuery is the parsed, validated form of the parameters of
// GET /datasets/{id}/features: which features, in which order, or which
// groups of them.
type FeatureQuery struct {
	Offset     int64  // zero-based index of the first result
	Limit      int64  // at most this many results; negative means no limit
	Sort       string // attribute to order by; "" means feature position
	Descending bool

	BBox         *BBox // features whose geometry intersects the box
	Near         *Near // features within a distance of a geometry
	WithDistance bool  // report each feature's distance to Near's geometry

	Filters []Filter // attribute conditions, all of which must hold

	// IDs, when not nil, keeps only the features with these stable ids
	// (Feature.ID); ids that do not exist match nothing.
	IDs []int64

	// Where, when not nil, is a further condition (a CQL2 filter): only
	// the features for which it is true (see Expr) are selected.
	Where *Expr

	GroupBy    []string    // attributes to group by
	Aggregates []Aggregate // computed per group (or over everything)

	// Lazy asks for each feature's values through Feature.Row instead of
	// Feature.Values (for callers that only encode them). A store may
	// ignore it and fill Values.
	Lazy bool
	// AnyOrder says the caller takes the features in any order, each
	// still with its Position (a tile's thinned points): a store may then
	// give them in the order it reads them in. Only a query of every
	// match (no Offset, Limit, Sort or Count) may come out of order.
	AnyOrder bool
	// NoValues says the caller reads no feature's values, only their
	// geometry, ID and Position: a store may leave Values and Row nil.
	NoValues bool
	// Then, when set, is called after the query's last feature and gives
	// a follow-up query and the function its features go to (nil for
	// none), which the store runs in the same snapshot: a second pass
	// over the few features the first chose (the values of a tile's
	// points alone in their cells, after a first pass without values).
	// ScanFeatures only; the follow-up's own Then is not called.
	Then func() (*FeatureQuery, func(*Feature) error)

	// Count, when not nil, receives from ScanFeatures the number of
	// features the query selects, its paging aside (the count of
	// CountQuery), before fn is first called and before ScanFeatures
	// returns: with the page, in one read where the store can (OGC's
	// numberMatched).
	Count *int64
}

// CountQuery is the query that counts what q selects: q without its
// paging, order, groups and Count, as one group of GroupFeatures.
func (q *FeatureQuery) CountQuery() *FeatureQuery {
	c := *q
	c.Offset, c.Limit, c.Sort, c.Descending = 0, -1, "", false
	c.GroupBy, c.Aggregates, c.Count, c.WithDistance, c.Lazy = nil, nil, nil, false, false
	c.AnyOrder, c.NoValues, c.Then = false, false, nil
	return &c
}

// GroupCount is the count of a CountQuery's answer (its one group).
func GroupCount(groups []Group) int64 {
	if len(groups) == 0 {
		return 0
	}
	return groups[0].Count
}

// CheckLonLat checks that xy, longitude and latitude pairs, lies within
// -180..180 and -90..90: an EINVALID naming the parameter param otherwise.
func CheckLonLat(param string, xy []float64) error {
	for i := 0; i+1 < len(xy); i += 2 {
		if !(xy[i] >= -180 && xy[i] <= 180) { // NaN too
			return Errorf(EINVALID, "%s: longitude %v outside -180..180", param, xy[i])
		}
		if !(xy[i+1] >= -90 && xy[i+1] <= 90) {
			return Errorf(EINVALID, "%s: latitude %v outside -90..90", param, xy[i+1])
		}
	}
	return nil
}

// NewBBox is the box west, south, east, north given as the parameter
// param: every face's rule, its corners within the lon/lat ranges and its
// south edge not north of its north edge (west may be east of east: the
// box crosses the antimeridian); EINVALID naming param otherwise.
func NewBBox(param string, w, s, e, n float64) (*BBox, error) {
	if err := CheckLonLat(param, []float64{w, s, e, n}); err != nil {
		return nil, err
	}
	if s > n {
		return nil, Errorf(EINVALID, "%s: the south edge %v is north of the north edge %v", param, s, n)
	}
	return &BBox{W: w, S: s, E: e, N: n}, nil
}

// BBox is a box in lon/lat; W > E crosses the antimeridian.
type BBox struct{ W, S, E, N float64 }

// Kinds of Near geometry.
const (
	NearPoint   = "point"   // lat, lon
	NearPoints  = "points"  // points=lon,lat,lon,lat...
	NearLine    = "line"    // line=lon,lat,...
	NearPolygon = "polygon" // polygon=lon,lat,..., closed
)

// Near is a buffer query: features within Radius (in Units) of the point,
// points, line or polygon (Kind) with coordinates XY (lon, lat pairs).
type Near struct {
	Kind      string // "point", "points", "line", "polygon"
	XY        []float64
	Radius    float64 // 0 for a polygon without radius
	Units     string  // km, m, ft, miles, degrees
	Contained bool    // intersect=contained (default); false is intersect=full
}

// Filter operations.
const (
	OpMin    = "min"
	OpMax    = "max"
	OpEquals = "equals"
	OpIn     = "in"
)

// Filter is one attribute condition. Values holds one value, or the
// alternatives of OpIn.
type Filter struct {
	Attr   string
	Op     string
	Values []string
}

// Aggregate calculations.
const (
	CalcMin     = "min"
	CalcMax     = "max"
	CalcSum     = "sum"
	CalcAverage = "average"
)

// Aggregate is one calculation over an attribute per group.
type Aggregate struct {
	Name string // the attribute
	Calc string
}

// Key is the name of the aggregate's value in a group row: "<calc>_<name>".
func (a Aggregate) Key() string { return a.Calc + "_" + a.Name }

// Group is one row of a grouped answer: the group's values (one per GroupBy
// attribute), its feature count and its aggregates (float64 or nil, or for
// min and max of a string attribute a string).
type Group struct {
	Values     []any
	Count      int64
	Aggregates []any
}

// Selective reports whether q has a condition that may leave features
// out (its paging aside): without one it selects the whole dataset.
func (q *FeatureQuery) Selective() bool {
	return q.BBox != nil || q.Near != nil || len(q.Filters) > 0 || q.IDs != nil || q.Where != nil
}

// Grouped reports whether the query asks for groups rather than features.
func (q *FeatureQuery) Grouped() bool { return len(q.GroupBy) > 0 || len(q.Aggregates) > 0 }

// AttrIndex returns the index of the attribute called name, or -1.
func AttrIndex(attrs []Attribute, name string) int {
	for i, a := range attrs {
		if a.Name == name {
			return i
		}
	}
	for i, a := range attrs { // an original name still finds its column
		if a.OriginalName == name {
			return i
		}
	}
	return -1
}

// Validate checks the query against a dataset's attributes: every named
// attribute exists, filter values fit their column's type, aggregates fit
// theirs. Errors are EINVALID and name the parameter.
func (q *FeatureQuery) Validate(attrs []Attribute) error {
	if q.Sort != "" && AttrIndex(attrs, q.Sort) < 0 {
		return Errorf(EINVALID, "sort: no attribute %q", q.Sort)
	}
	for _, f := range q.Filters {
		i := AttrIndex(attrs, f.Attr)
		if i < 0 {
			return Errorf(EINVALID, "filter[%s]: no attribute %q", f.Attr, f.Attr)
		}
		switch f.Op {
		case OpMin, OpMax, OpEquals, OpIn:
		default:
			return Errorf(EINVALID, "filter[%s]: unknown operation %q (min, max, equals, in)", f.Attr, f.Op)
		}
		if f.Op == OpIn && len(f.Values) > MaxInValues {
			return Errorf(EINVALID, "filter[%s][][in]: %d values, at most %d", f.Attr, len(f.Values), MaxInValues)
		}
		for _, v := range f.Values {
			if err := checkValue(attrs[i].Type, v); err != nil {
				return Errorf(EINVALID, "filter[%s][][%s]: %s", f.Attr, f.Op, ErrorMessage(err))
			}
		}
	}
	if q.Where != nil {
		if err := q.Where.Validate(attrs); err != nil {
			return err
		}
	}
	for _, g := range q.GroupBy {
		if AttrIndex(attrs, g) < 0 {
			return Errorf(EINVALID, "group_by: no attribute %q", g)
		}
	}
	for _, a := range q.Aggregates {
		i := AttrIndex(attrs, a.Name)
		if i < 0 {
			return Errorf(EINVALID, "aggregates: no attribute %q", a.Name)
		}
		switch a.Calc {
		case CalcMin, CalcMax:
		case CalcSum, CalcAverage:
			if !attrs[i].Type.Numeric() {
				return Errorf(EINVALID, "aggregates: %s of %q needs a numeric attribute (it is %s)", a.Calc, a.Name, attrs[i].Type)
			}
		default:
			return Errorf(EINVALID, "aggregates: unknown calc %q (max, min, sum, average)", a.Calc)
		}
	}
	return nil
}

// checkValue checks that a filter value can be compared with a column.
func checkValue(t AttrType, v string) error {
	switch t {
	case AttrInteger, AttrFloat:
		// NaN and infinities are refused: NaN compares as below every
		// number, so as a min it would match every row.
		if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return Errorf(EINVALID, "%q is not a number", v)
		}
	case AttrBoolean:
		if _, ok := ParseBool(v); !ok {
			return Errorf(EINVALID, "%q is not a boolean", v)
		}
	}
	return nil
}

// ParseBool reads the boolean spellings clients send: 1/0, true/false,
// True/False, yes/no, on/off.
func ParseBool(s string) (v, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on", "t", "y":
		return true, true
	case "0", "false", "no", "off", "f", "n", "":
		return false, true
	}
	return false, false
}

// ScanBeatsIndex reports whether a query of the lon/lat box b (a tile, an
// image) had better read every feature of a dataset of extent e than
// query its box: when b
// covers a sixteenth of e or more. A scan reads the features' columns in
// sequence (65 to 100 ns a point, BenchmarkTile and mapcommons bench), the
// index walks the matches in position order (600 to 750 ns a match): on
// features spread evenly the two cost the same near a tenth, and at a
// sixteenth (a zoom 2 tile of world-wide data) the scan is as fast as the
// walk, and much faster when the features crowd into the tile. The
// features of a scan outside the box cost a test each in the caller,
// which drops them.
func ScanBeatsIndex(b wkb.Rect, e *wkb.Rect) bool {
	if e == nil {
		return true
	}
	frac := func(lo, hi, elo, ehi float64) float64 {
		w := math.Min(hi, ehi) - math.Max(lo, elo)
		if w < 0 {
			return 0
		}
		if ehi <= elo {
			return 1
		}
		return w / (ehi - elo)
	}
	return frac(b.MinX, b.MaxX, e.MinX, e.MaxX)*frac(b.MinY, b.MaxY, e.MinY, e.MaxY) >= 1.0/16
}
