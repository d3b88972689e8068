package geojson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/infer"
)

// Limits of the upload reader.
const (
	maxValueDepth = 64      // nesting of a property value or a geometry
	maxValueLen   = 1 << 20 // bytes of one property value (a string, or the JSON text of an object or array)
)

// Reader reads an uploaded GeoJSON file as features. It is a
// mapcommons.FeatureSource. A Reader is not safe for concurrent use.
//
// The file is a FeatureCollection (its features, in order), a single
// Feature (one feature) or a bare geometry (one feature without
// attributes); for leniency also a JSON array of Features, or an object
// with a "features" array and no "type". Members may come in any order.
// Like the CSV reader it reads its input twice with encoding/json's
// Decoder.Token, never holding more than one feature: pass 1 (in Open)
// validates every feature and geometry and infers the attributes, pass 2
// (Next) streams the features.
//
// Attributes are the property names in order of first appearance (made
// unique by mapcommons.NormalizeAttributes; a property "geometry" becomes
// "geometry_2"). Types, from the JSON values of each property over all
// features (null says nothing):
//
//   - integer: only numbers written as integers that fit int64 ("1", not
//     "1.0" or "1e3");
//   - float: only numbers, some not integers (or too big for int64);
//   - boolean: only true and false;
//   - string: anything else, or nothing but nulls. In a string column a
//     number keeps its JSON text, a boolean is "true" or "false", and an
//     object or array is its compact JSON text; a number that overflows
//     float64 (1e400) counts as such a text.
//
// The empty string stays an empty string; null is nil. A property of a
// feature that does not have it is nil. Geometries are read by
// ParseGeometry (positions must be longitude, latitude); a null or absent
// geometry is nil. A "crs" member (GeoJSON 2008) must name WGS 84 — CRS84 or
// EPSG:4326 in any spelling, or the old {"type":"EPSG","properties":
// {"code":4326}} — else the file is refused, naming the CRS.
//
// Limits: a property value nests at most 64 deep and is at most 1 MiB of
// text, and so is a property name; a geometry nests at most 64 deep; a feature has at most 1000
// properties and the file at most 1000 different ones. A UTF-8 byte order
// mark is skipped. Errors are *mapcommons.Error with code EINVALID naming
// the feature (1-based, so feature n is at Position n-1):
// "geojson: feature 3: geometry: position [200, 1] is not a longitude, latitude".
// Errors of the input are returned wrapped.
type Reader struct {
	rs  io.ReadSeeker
	in  *recorder
	dec *json.Decoder

	attrs []mapcommons.Attribute
	types []mapcommons.AttrType
	cols  map[string]int
	kinds []uint8 // pass 1: the kinds of value seen in each column

	array  bool  // the features are a top-level array
	single bool  // one feature: a Feature or a bare geometry
	count  int64 // features found in pass 1
	pos    int64
	done   bool

	props []byte // the raw properties of a lone Feature, between the passes
	geom  []byte // raw geometry of the feature being read
	val   []byte // raw value of the property being read
	feat  mapcommons.Feature
	err   error
}

var _ mapcommons.FeatureSource = (*Reader)(nil)

// Kinds of property values seen in pass 1.
const (
	kindInt uint8 = 1 << iota
	kindFloat
	kindBool
	kindString // strings, objects, arrays, unparsable numbers
)

// recorder keeps the first error of the input other than io.EOF, so that
// I/O errors are not reported as bad JSON.
type recorder struct {
	r   io.Reader
	err error
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// Open reads the whole input once (pass 1) and seeks back to the start
// for Next; the input is read from offset 0.
func Open(rs io.ReadSeeker) (*Reader, error) {
	r := &Reader{rs: rs, cols: map[string]int{}}
	if err := r.start(); err != nil {
		return nil, err
	}
	if err := r.pass1(); err != nil {
		return nil, err
	}
	r.types = make([]mapcommons.AttrType, len(r.attrs))
	for i, k := range r.kinds {
		t := mapcommons.AttrString
		switch {
		case k == kindBool:
			t = mapcommons.AttrBoolean
		case k == kindInt:
			t = mapcommons.AttrInteger
		case k != 0 && k&^(kindInt|kindFloat) == 0:
			t = mapcommons.AttrFloat
		}
		r.attrs[i].Type, r.types[i] = t, t
	}
	if err := mapcommons.NormalizeAttributes(r.attrs); err != nil {
		return nil, err
	}
	r.feat.Values = make([]any, len(r.attrs))
	if r.single {
		if r.props != nil {
			if err := r.withDecoder(r.props, func() error { return r.properties(1, false) }); err != nil {
				return nil, err
			}
			r.props = nil
		}
		return r, nil
	}
	if err := r.start(); err != nil {
		return nil, err
	}
	if err := r.toFeatures(); err != nil {
		return nil, err
	}
	return r, nil
}

// start seeks to the start, skipping a byte order mark.
func (r *Reader) start() error {
	if _, err := r.rs.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("geojson: %w", err)
	}
	r.in = &recorder{r: r.rs}
	br := bufio.NewReaderSize(r.in, 64<<10)
	if b, _ := br.Peek(3); bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		br.Discard(3)
	}
	if r.in.err != nil {
		return fmt.Errorf("geojson: %w", r.in.err)
	}
	r.dec = json.NewDecoder(br)
	r.dec.UseNumber()
	return nil
}

func invalid(format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "geojson: "+format, args...)
}

// where names feature n (1-based; 0: the file) for a message.
func where(n int64) string {
	if n == 0 {
		return ""
	}
	return "feature " + strconv.FormatInt(n, 10) + ": "
}

// jsonError turns an error of the decoder met in feature n into the error
// to return.
func (r *Reader) jsonError(err error, n int64) error {
	if r.in.err != nil {
		return fmt.Errorf("geojson: reading: %w", r.in.err)
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return invalid("%sunexpected end of file (is the file truncated?)", where(n))
	case errors.As(err, &se):
		return invalid("%sinvalid JSON at byte %d: %s", where(n), se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.As(err, &te):
		return invalid("%s%s is %s, want %s", where(n), te.Field, te.Value, te.Type)
	}
	var me *mapcommons.Error
	if errors.As(err, &me) {
		return err
	}
	return invalid("%s%s", where(n), strings.TrimPrefix(err.Error(), "json: "))
}

func (r *Reader) token(n int64) (json.Token, error) {
	t, err := r.dec.Token()
	if err != nil {
		return nil, r.jsonError(err, n)
	}
	return t, nil
}

// expect reads the delimiter d.
func (r *Reader) expect(d json.Delim, n int64, what string) error {
	t, err := r.token(n)
	if err != nil {
		return err
	}
	if t != d {
		return invalid("%s%s is %s, want %s", where(n), what, describe(t), describe(d))
	}
	return nil
}

// describe names a token for a message.
func describe(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return strconv.Quote(v.String())
	case string:
		return "a string"
	case json.Number, float64:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprint(t)
}

// key reads an object member's name.
func (r *Reader) key(n int64) (string, error) {
	t, err := r.token(n)
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", invalid("%sexpected a member name, found %s", where(n), describe(t))
	}
	return s, nil
}

// raw reads the next value into dst.
func (r *Reader) raw(dst *[]byte, n int64) error {
	var m json.RawMessage = (*dst)[:0]
	if err := r.dec.Decode(&m); err != nil {
		return r.jsonError(err, n)
	}
	*dst = m
	return nil
}

// skip reads past the next value.
func (r *Reader) skip(n int64) error { return r.raw(&r.val, n) }

// str reads a string value.
func (r *Reader) str(n int64, what string) (string, error) {
	t, err := r.token(n)
	if err != nil {
		return "", err
	}
	if d, ok := t.(json.Delim); ok {
		return "", invalid("%s%s is %s, want a string", where(n), what, describe(d))
	}
	s, ok := t.(string)
	if !ok {
		return "", invalid("%s%s is %s, want a string", where(n), what, describe(t))
	}
	return s, nil
}

// depth returns how deep the JSON value b nests.
func depth(b []byte) int {
	d, maxD, inStr := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			maxD = max(maxD, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return maxD
}

// geometryTypes are the GeoJSON geometry type names.
var geometryTypes = map[string]bool{
	"Point": true, "LineString": true, "Polygon": true, "MultiPoint": true,
	"MultiLineString": true, "MultiPolygon": true, "GeometryCollection": true,
}

// IsObjectType reports whether typ is the "type" of a GeoJSON object this
// package reads as data: a FeatureCollection, a Feature or a geometry.
func IsObjectType(typ string) bool {
	return typ == "FeatureCollection" || typ == "Feature" || geometryTypes[typ]
}

// pass1 reads the whole file, validating it and gathering the attributes.
func (r *Reader) pass1() error {
	t, err := r.token(0)
	if err == nil && t == json.Delim('[') {
		r.array = true
		if err := r.features(1); err != nil {
			return err
		}
		return r.end()
	} else if err != nil {
		return err
	} else if t != json.Delim('{') {
		return invalid("not GeoJSON: the file holds %s, not an object", describe(t))
	}
	var typ string
	hasType, hasFeatures := false, false
	var geom, props, coords, geoms []byte
	hasGeom, hasProps, hasCoords, hasGeoms := false, false, false, false
	for r.dec.More() {
		k, err := r.key(0)
		if err != nil {
			return err
		}
		switch k {
		case "type":
			if typ, err = r.str(0, "type"); err != nil {
				return err
			}
			hasType = true
		case "features":
			if hasFeatures {
				return invalid("more than one features member")
			}
			hasFeatures = true
			if err := r.expect('[', 0, "features"); err != nil {
				return err
			}
			if err := r.features(1); err != nil {
				return err
			}
		case "crs":
			if err := r.crs(0); err != nil {
				return err
			}
		case "geometry":
			err, hasGeom = r.raw(&geom, 0), true
		case "properties":
			err, hasProps = r.raw(&props, 0), true
		case "coordinates":
			err, hasCoords = r.raw(&coords, 0), true
		case "geometries":
			err, hasGeoms = r.raw(&geoms, 0), true
		default:
			err = r.skip(0)
		}
		if err != nil {
			return err
		}
	}
	if err := r.expect('}', 0, "the end of the object"); err != nil {
		return err
	}
	if err := r.end(); err != nil {
		return err
	}
	switch {
	case hasFeatures && (!hasType || typ == "FeatureCollection"):
		return nil
	case hasFeatures:
		return invalid("type is %q but the object has features", typ)
	case typ == "FeatureCollection":
		return invalid("a FeatureCollection without features")
	case typ == "Feature":
		r.single, r.count = true, 1
		if hasProps {
			r.props = props
			if err := r.withDecoder(props, func() error { return r.properties(1, true) }); err != nil {
				return err
			}
		}
		if !hasGeom {
			geom = nil
		}
		return r.geometry(geom, 1)
	case geometryTypes[typ]:
		r.single, r.count = true, 1
		b := append([]byte(`{"type":`), strconv.Quote(typ)...)
		if hasCoords {
			b = append(append(b, `,"coordinates":`...), coords...)
		}
		if hasGeoms {
			b = append(append(b, `,"geometries":`...), geoms...)
		}
		return r.geometry(append(b, '}'), 1)
	case !hasType:
		return invalid("not GeoJSON: the object has no type")
	}
	return invalid("type %q is not a GeoJSON type (FeatureCollection, Feature or a geometry)", typ)
}

// end checks that nothing but white space follows the top-level value.
func (r *Reader) end() error {
	if _, err := r.dec.Token(); err != io.EOF {
		if err != nil {
			return r.jsonError(err, 0)
		}
		return invalid("data after the GeoJSON value at byte %d", r.dec.InputOffset())
	}
	return nil
}

// withDecoder runs fn with r reading the JSON value raw.
func (r *Reader) withDecoder(raw []byte, fn func() error) error {
	dec := r.dec
	defer func() { r.dec = dec }()
	r.dec = json.NewDecoder(bytes.NewReader(raw))
	r.dec.UseNumber()
	return fn()
}

// features reads the features of an array whose '[' was read (pass 1).
func (r *Reader) features(n int64) error {
	for ; r.dec.More(); n++ {
		if err := r.feature(n, true); err != nil {
			return err
		}
		r.count++
	}
	return r.expect(']', n, "the end of the features")
}

// toFeatures positions the decoder (pass 2) at the first feature.
func (r *Reader) toFeatures() error {
	t, err := r.token(0)
	if err != nil {
		return err
	}
	if r.array {
		if t != json.Delim('[') {
			return invalid("the file changed while it was read")
		}
		return nil
	}
	for r.dec.More() {
		k, err := r.key(0)
		if err != nil {
			return err
		}
		if k == "features" {
			return r.expect('[', 0, "features")
		}
		if err := r.skip(0); err != nil {
			return err
		}
	}
	return invalid("the file changed while it was read")
}

// crs checks a crs member, whose value is next.
func (r *Reader) crs(n int64) error {
	if err := r.raw(&r.val, n); err != nil {
		return err
	}
	if string(r.val) == "null" {
		return nil
	}
	var c struct {
		Type       string `json:"type"`
		Properties struct {
			Name string          `json:"name"`
			Code json.RawMessage `json:"code"`
			Href string          `json:"href"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(r.val, &c); err != nil {
		return invalid("%scrs: not a named CRS: %s", where(n), strings.TrimPrefix(err.Error(), "json: "))
	}
	name := c.Properties.Name
	switch strings.ToLower(c.Type) {
	case "name":
		if wgs84(name) {
			return nil
		}
	case "epsg":
		code := strings.Trim(string(c.Properties.Code), `"`)
		if code == "4326" {
			return nil
		}
		name = "EPSG:" + code
	case "link":
		name = c.Properties.Href
	default:
		name = string(r.val)
	}
	if len(name) > 200 {
		name = name[:200] + "..."
	}
	return invalid("%scrs %q is not supported: coordinates must be WGS 84 longitude, latitude (CRS84 or EPSG:4326); reproject the file first, e.g. with ogr2ogr -t_srs EPSG:4326", where(n), name)
}

// wgs84 reports whether a CRS name means WGS 84 longitude, latitude.
func wgs84(name string) bool {
	s := strings.ToLower(strings.TrimSpace(name))
	return strings.HasSuffix(s, "crs84") || s == "crs:84" || strings.HasSuffix(s, "ogc:2:84") ||
		s == "epsg:4326" || strings.HasSuffix(s, ":4326") || strings.HasSuffix(s, "/4326") || strings.HasSuffix(s, "#4326")
}

// feature reads feature n (1-based) of a collection: pass 1 validates it and
// gathers its properties, pass 2 fills in r.feat.
func (r *Reader) feature(n int64, pass1 bool) error {
	t, err := r.token(n)
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return invalid("%sis %s, not a Feature object", where(n), describe(t))
	}
	if !pass1 {
		clear(r.feat.Values)
	}
	hasGeom := false
	for r.dec.More() {
		k, err := r.key(n)
		if err != nil {
			return err
		}
		switch k {
		case "type":
			typ, err := r.str(n, "type")
			if err != nil {
				return err
			}
			if typ != "Feature" {
				return invalid("%stype is %q, want \"Feature\"", where(n), typ)
			}
		case "geometry":
			if hasGeom {
				return invalid("%smore than one geometry member", where(n))
			}
			err, hasGeom = r.raw(&r.geom, n), true
		case "properties":
			err = r.properties(n, pass1)
		case "crs":
			err = r.crs(n)
		default:
			err = r.skip(n)
		}
		if err != nil {
			return err
		}
	}
	if err := r.expect('}', n, "the end of the feature"); err != nil {
		return err
	}
	if !hasGeom {
		r.geom = r.geom[:0]
	}
	return r.geometry(r.geom, n)
}

// geometry parses the raw geometry of feature n into r.feat.
func (r *Reader) geometry(raw []byte, n int64) error {
	r.feat.Geometry = nil
	if len(raw) == 0 {
		return nil
	}
	if depth(raw) > maxValueDepth {
		return invalid("%sgeometry: nested more than %d deep", where(n), maxValueDepth)
	}
	g, err := ParseGeometry(raw)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), ErrGeometry.Error()+": ")
		return invalid("%sgeometry: %s", where(n), strings.ReplaceAll(msg, "json: ", ""))
	}
	r.feat.Geometry = g
	return nil
}

// properties reads the properties member of feature n, whose value is next.
func (r *Reader) properties(n int64, pass1 bool) error {
	t, err := r.token(n)
	if err != nil {
		return err
	}
	if t == nil {
		return nil
	}
	if t != json.Delim('{') {
		return invalid("%sproperties is %s, not an object", where(n), describe(t))
	}
	for count := 1; r.dec.More(); count++ {
		name, err := r.key(n)
		if err != nil {
			return err
		}
		if count > mapcommons.MaxAttributes {
			return invalid("%smore than %d properties", where(n), mapcommons.MaxAttributes)
		}
		if len(name) > maxValueLen {
			return invalid("%sa property name longer than %d MiB", where(n), maxValueLen>>20)
		}
		if err := r.raw(&r.val, n); err != nil {
			return err
		}
		v := r.val
		kind := uint8(0)
		switch c := v[0]; {
		case c == 'n':
		case c == 't' || c == 'f':
			kind = kindBool
		case c == '"':
			kind = kindString
		case c == '{' || c == '[':
			kind = kindString
			if depth(v) > maxValueDepth {
				return invalid("%sproperty %q: nested more than %d deep", where(n), name, maxValueDepth)
			}
		default:
			switch infer.NumberKind(string(v), false) {
			case infer.IntNumber:
				kind = kindInt
			case infer.FloatNumber:
				kind = kindFloat
			default:
				kind = kindString
			}
		}
		if len(v) > maxValueLen+2 {
			return invalid("%sproperty %q: longer than %d MiB", where(n), name, maxValueLen>>20)
		}
		col, ok := r.cols[name]
		if pass1 {
			if !ok {
				if len(r.attrs) >= mapcommons.MaxAttributes {
					return invalid("%smore than %d different properties in the file", where(n), mapcommons.MaxAttributes)
				}
				col = len(r.attrs)
				r.cols[name] = col
				r.attrs = append(r.attrs, mapcommons.Attribute{Name: name})
				r.kinds = append(r.kinds, 0)
			}
			r.kinds[col] |= kind
			continue
		}
		if !ok {
			return invalid("the file changed while it was read")
		}
		if r.feat.Values[col], err = r.value(v, kind, r.types[col]); err != nil {
			return invalid("%sproperty %q: %v", where(n), name, err)
		}
	}
	return r.expect('}', n, "the end of the properties")
}

// value converts the raw JSON value v of kind kind for a column of type t.
func (r *Reader) value(v []byte, kind uint8, t mapcommons.AttrType) (any, error) {
	switch {
	case kind == 0:
		return nil, nil
	case kind == kindBool && t == mapcommons.AttrBoolean:
		return v[0] == 't', nil
	case kind == kindInt && t == mapcommons.AttrInteger:
		return strconv.ParseInt(string(v), 10, 64)
	case (kind == kindInt || kind == kindFloat) && t == mapcommons.AttrFloat:
		return infer.ParseFloat(string(v)), nil
	case t != mapcommons.AttrString:
		return nil, errors.New("the file changed while it was read")
	case v[0] == '"':
		var s string
		err := json.Unmarshal(v, &s)
		return s, err
	case v[0] == '{' || v[0] == '[':
		var b bytes.Buffer
		err := json.Compact(&b, v)
		return b.String(), err
	}
	return string(v), nil // a number, true or false as written
}

// Attributes returns the attributes every feature has values for.
func (r *Reader) Attributes() []mapcommons.Attribute { return r.attrs }

// Next returns the next feature, io.EOF after the last. The feature is
// reused by the following call.
func (r *Reader) Next() (*mapcommons.Feature, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.single {
		if r.done {
			return nil, io.EOF
		}
		r.done = true
		return &r.feat, nil // filled in by pass 1
	}
	if r.done {
		return nil, io.EOF
	}
	n := r.pos + 1
	if !r.dec.More() {
		if err := r.expect(']', n, "the end of the features"); err != nil {
			r.err = err
			return nil, err
		}
		r.done = true
		if r.pos != r.count {
			r.err = invalid("the file changed while it was read")
			return nil, r.err
		}
		return nil, io.EOF
	}
	if r.pos >= r.count {
		r.err = invalid("the file changed while it was read")
		return nil, r.err
	}
	if err := r.feature(n, false); err != nil {
		r.err = err
		return nil, err
	}
	r.feat.Position = r.pos
	r.pos++
	return &r.feat, nil
}
