package api

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"mapcommons"
	"mapcommons/format/geojson"
	"mapcommons/format/polyline"
	"mapcommons/format/wkb"
	"mapcommons/geocommons"
	"mapcommons/params"
)

// How a flat feature object carries its geometry.
type geomMode int

const (
	geomNone    geomMode = iota // no geometry key
	geomHex                     // upper-case hex of the stored WKB (the default of features.json)
	geomGeoJSON                 // a GeoJSON geometry object
	geomEncoded                 // Google encoded polylines (encode=1)
)

// distanceKey is the key of with_distance's value: "distance", unless an
// attribute already has that name.
func distanceKey(attrs []mapcommons.Attribute) string {
	if mapcommons.AttrIndex(attrs, "distance") >= 0 {
		return "_distance"
	}
	return "distance"
}

// appendFlat appends a feature as the original service's flat object:
// attributes as top-level keys next to "geometry" (wire contract 2.1), and
// "distance" when distKey is not empty.
func appendFlat(dst []byte, keys [][]byte, attrs []mapcommons.Attribute, f *mapcommons.Feature, mode geomMode, distKey string) ([]byte, error) {
	dst = append(dst, '{')
	dst = geojson.AppendFeatureMembers(dst, keys, attrs, f)
	sep := func() {
		if len(dst) > 0 && dst[len(dst)-1] != '{' {
			dst = append(dst, ',')
		}
	}
	if distKey != "" {
		sep()
		dst = geojson.AppendString(dst, distKey)
		dst = append(dst, ':')
		dst = geojson.AppendValue(dst, f.Distance)
	}
	if mode != geomNone {
		sep()
		dst = append(dst, `"geometry":`...)
		switch {
		case len(f.Geometry) == 0:
			dst = append(dst, "null"...)
		case mode == geomHex:
			dst = append(dst, '"')
			dst = appendUpperHex(dst, f.Geometry)
			dst = append(dst, '"')
		case mode == geomEncoded:
			g, err := wkb.Decode(f.Geometry)
			if err != nil {
				return dst, err
			}
			dst = appendEncoded(dst, g)
		default:
			var err error
			if dst, err = wkb.ToGeoJSON(dst, f.Geometry); err != nil {
				return dst, err
			}
		}
	}
	return append(dst, '}'), nil
}

// appendUpperHex appends b in upper-case hexadecimal, as the original
// service wrote WKB. b must not share dst's memory.
func appendUpperHex(dst, b []byte) []byte {
	const digits = "0123456789ABCDEF"
	n := len(dst)
	dst = slices.Grow(dst, 2*len(b))[:n+2*len(b)]
	for i, c := range b {
		dst[n+2*i] = digits[c>>4]
		dst[n+2*i+1] = digits[c&15]
	}
	return dst
}

// appendEncoded writes a geometry as encoded polylines: a string for a
// point or a line, a list of strings (its rings) for a polygon, and a list
// of those for multi-geometries and collections.
func appendEncoded(dst []byte, g wkb.Geom) []byte {
	str := func(dst []byte, xy []float64) []byte {
		return geojson.AppendString(dst, string(polyline.Append(nil, xy)))
	}
	switch g.Type {
	case wkb.Point, wkb.LineString:
		return str(dst, g.Coords)
	case wkb.Polygon:
		dst = append(dst, '[')
		for i, r := range g.Rings {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = str(dst, r)
		}
		return append(dst, ']')
	}
	dst = append(dst, '[')
	for i, p := range g.Parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendEncoded(dst, p)
	}
	return append(dst, ']')
}

// flatWriter streams a JSON array of flat feature objects after a prefix,
// writing through in chunks of about 64 KiB.
type flatWriter struct {
	out     io.Writer
	attrs   []mapcommons.Attribute
	keys    [][]byte
	mode    geomMode
	distKey string
	buf     []byte
	n       int
}

// flatBufs recycles the buffers of flat writers (8 KiB, grown to the flush
// size only for large answers) between answers.
var flatBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

func newFlatWriter(out io.Writer, attrs []mapcommons.Attribute, mode geomMode, prefix []byte) *flatWriter {
	buf := (*flatBufs.Get().(*[]byte))[:0]
	return &flatWriter{out: out, attrs: attrs, keys: geojson.Keys(attrs), mode: mode, buf: append(buf, prefix...)}
}

// Write appends one feature.
func (w *flatWriter) Write(f *mapcommons.Feature) error {
	if w.n > 0 {
		w.buf = append(w.buf, ',')
	}
	w.n++
	var err error
	if w.buf, err = appendFlat(w.buf, w.keys, w.attrs, f, w.mode, w.distKey); err != nil {
		return err
	}
	if len(w.buf) > 64<<10 {
		_, err = w.out.Write(w.buf)
		w.buf = w.buf[:0]
	}
	return err
}

// End writes the suffix and what is buffered.
func (w *flatWriter) End(suffix string) error {
	_, err := w.out.Write(append(w.buf, suffix...))
	// The writer has copied or sent the bytes: the buffer can serve again.
	if b := w.buf[:0]; cap(b) <= 128<<10 {
		flatBufs.Put(&b)
	}
	w.buf = nil
	return err
}

// jsonOut is a JSON answer, wrapped as JSONP when asked for. It holds the
// answer until it is complete or passes 64 KiB: a small answer then goes
// out in one write with a Content-Length, a large one streams.
type jsonOut struct {
	w         http.ResponseWriter
	callback  string
	status    int // 0 means 200
	buf       []byte
	streaming bool
	// complete, when set, receives a whole answer that was held, not
	// streamed; the bytes are its own only during the call.
	complete func(contentType string, body []byte)
	ctx      context.Context
}

func (o *jsonOut) writeHeader() {
	if o.status != 0 {
		o.w.WriteHeader(o.status)
	}
}

const holdLimit = 64 << 10

// startJSON begins a JSON answer.
func startJSON(w http.ResponseWriter, r *http.Request) *jsonOut {
	o := &jsonOut{w: w, callback: callbackOf(r), ctx: r.Context(), buf: (*jsonBufs.Get().(*[]byte))[:0]}
	if o.callback != "" {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		o.buf = append(o.buf, o.callback...)
		o.buf = append(o.buf, '(')
	} else {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	return o
}

func (o *jsonOut) Write(b []byte) (int, error) {
	if o.streaming {
		return o.w.Write(b)
	}
	o.buf = append(o.buf, b...)
	if len(o.buf) >= holdLimit {
		o.streaming = true
		o.writeHeader()
		_, err := o.w.Write(o.buf)
		o.release()
		if err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

// jsonBufs keep the buffers of held answers between requests: most
// answers are held, and growing a buffer again for each one was a tenth
// of a page's allocations.
var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// release gives the held buffer back to jsonBufs once it is written.
func (o *jsonOut) release() {
	if b := o.buf[:0]; cap(b) > 0 && cap(b) <= 2*holdLimit {
		jsonBufs.Put(&b)
	}
	o.buf = nil
}

// Close ends the answer.
func (o *jsonOut) Close() error {
	var tail []byte
	if o.callback != "" {
		tail = []byte(");")
	}
	if o.streaming {
		_, err := o.w.Write(tail)
		return err
	}
	o.buf = append(o.buf, tail...)
	if o.complete != nil {
		o.complete(o.w.Header().Get("Content-Type"), o.buf)
	}
	o.w.Header().Set("Content-Length", strconv.Itoa(len(o.buf)))
	o.writeHeader()
	_, err := o.w.Write(o.buf)
	o.release()
	return err
}

// outputOptions are the parameters of features.json that shape the answer
// rather than choose the features.
type outputOptions struct {
	geojson     bool // a FeatureCollection
	geom        geomMode
	withColumns bool // the column names too
	grouped     bool
}

// parseFeatureQuery reads every parameter of features.json: those that
// choose the features (geocommons.FeatureQuery), then those that shape
// the answer.
func parseFeatureQuery(p params.Params, format string) (*mapcommons.FeatureQuery, outputOptions, error) {
	var out outputOptions
	q, err := geocommons.FeatureQuery(p)
	if err != nil {
		return nil, out, err
	}
	out.grouped = q.Grouped()
	if out.geojson, err = p.Flag("geojson"); err != nil {
		return nil, out, err
	}
	out.geojson = out.geojson || format == "geojson"
	out.geom = geomHex
	if hex, given, err := p.Bool("hex_geometry"); err != nil {
		return nil, out, err
	} else if given && !hex {
		out.geom = geomGeoJSON
	}
	if enc, err := p.Flag("encode"); err != nil {
		return nil, out, err
	} else if enc {
		out.geom = geomEncoded
	}
	if out.withColumns, err = p.Flag("with_columns"); err != nil {
		return nil, out, err
	}
	return q, out, nil
}

// handleFeatureList answers GET /datasets/{id}/features: a bare array of
// flat features with hex WKB geometry by default, a GeoJSON
// FeatureCollection with geojson=1 (or the .geojson suffix), or with
// group_by/aggregates an array of groups. The whole query language is read
// by parseFeatureQuery.
func (s *Server) handleFeatureList(w http.ResponseWriter, r *http.Request) error {
	f := info(r).format
	if f != "json" && f != "geojson" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "features have no %s form", f)
	}
	ds, err := s.findDataset(r)
	if err != nil {
		return err
	}
	if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
		return err
	}
	if notModified(w, r, s.datasetETag(r, ds, "features."+f), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
		return nil
	}
	// A repeated query on the same version of the dataset: the answer is
	// known (only whole, successful answers are kept, so it was valid).
	// (No key is made when no cache keeps answers.)
	cacheable := s.cache != nil && r.ContentLength == 0 && len(r.TransferEncoding) == 0
	var key string
	if cacheable {
		key = featuresKey(ds, f, r.URL.RawQuery)
		if c, ok := s.cache.get(key); ok {
			return c.write(w, r)
		}
	}
	pr, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer pr.Cleanup()
	q, opt, err := parseFeatureQuery(pr.Params, f)
	if err != nil {
		return err
	}
	if err := q.Validate(ds.Attributes); err != nil {
		return err
	}
	out := startJSON(w, r)
	if cacheable {
		out.complete = func(ct string, body []byte) { s.cache.put(key, ct, body) }
	}
	if opt.grouped {
		return s.writeGroups(out, ds, q, opt)
	}
	var members []byte
	if opt.withColumns {
		members = append(appendColumns(append(members, `"columns":`...), ds.Attributes), ',')
	}
	var fw interface {
		Write(*mapcommons.Feature) error
	}
	var end func() error
	if opt.geojson {
		gw := geojson.NewWriter(out, ds.Attributes)
		if q.WithDistance {
			gw.DistanceKey = distanceKey(ds.Attributes)
		}
		gw.Begin(members)
		fw, end = gw, gw.End
	} else {
		prefix, suffix := []byte{'['}, "]"
		if opt.withColumns {
			prefix, suffix = append(append([]byte{'{'}, members...), `"features":[`...), "]}"
		}
		flat := newFlatWriter(out, ds.Attributes, opt.geom, prefix)
		if q.WithDistance {
			flat.distKey = distanceKey(ds.Attributes)
		}
		fw, end = flat, func() error { return flat.End(suffix) }
	}
	// The writers only encode the values: read them in place.
	q.Lazy = true
	if err := s.svc.Features.ScanFeatures(r.Context(), ds.ID, q, fw.Write); err != nil {
		return err
	}
	if err := end(); err != nil {
		return err
	}
	return out.Close()
}

// featuresKey is the response cache's key of a features answer: the
// dataset's version, the form and the query (made in one allocation).
func featuresKey(ds *mapcommons.Dataset, form, query string) string {
	var b [128]byte
	k := strconv.AppendInt(b[:0], ds.ID, 10)
	k = strconv.AppendInt(append(k, '/'), ds.Version, 10)
	k = append(append(append(append(k, '/'), form...), '?'), query...)
	return string(k)
}

// appendColumns appends the attribute names as a JSON list.
func appendColumns(dst []byte, attrs []mapcommons.Attribute) []byte {
	dst = append(dst, '[')
	for i, a := range attrs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = geojson.AppendString(dst, a.Name)
	}
	return append(dst, ']')
}

// writeGroups answers a grouped query: a list of objects holding the group's
// values under their attribute names, "count", and "<calc>_<name>" for each
// aggregate.
func (s *Server) writeGroups(out *jsonOut, ds *mapcommons.Dataset, q *mapcommons.FeatureQuery, opt outputOptions) error {
	groups, err := s.svc.Features.GroupFeatures(out.ctx, ds.ID, q)
	if err != nil {
		return err
	}
	b := make([]byte, 0, 256*len(groups)+64)
	suffix := "]"
	if opt.withColumns {
		b = append(appendColumns(append(b, `{"columns":`...), ds.Attributes), `,"groups":[`...)
		suffix = "]}"
	} else {
		b = append(b, '[')
	}
	for i, g := range groups {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		for j, name := range q.GroupBy {
			b = geojson.AppendString(b, ds.Attributes[mapcommons.AttrIndex(ds.Attributes, name)].Name)
			b = append(b, ':')
			b = geojson.AppendValue(b, g.Values[j])
			b = append(b, ',')
		}
		b = append(b, `"count":`...)
		b = strconv.AppendInt(b, g.Count, 10)
		for j, a := range q.Aggregates {
			b = append(b, ',')
			b = geojson.AppendString(b, a.Key())
			b = append(b, ':')
			b = geojson.AppendValue(b, g.Aggregates[j])
		}
		b = append(b, '}')
	}
	if _, err := out.Write(append(b, suffix...)); err != nil {
		return err
	}
	return out.Close()
}
