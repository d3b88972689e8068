package api

import (
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/geojson"
	"mapcommons/format/wkb"
)

// How a flat feature object carries its geometry.
type geomMode int

const (
	geomNone    geomMode = iota // no geometry key
	geomHex                     // upper-case hex of the stored WKB (the default of features.json)
	geomGeoJSON                 // a GeoJSON geometry object
)

// appendFlat appends a feature as the original service's flat object:
// attributes as top-level keys next to "geometry" (wire contract 2.1).
func appendFlat(dst []byte, attrs []mapcommons.Attribute, f *mapcommons.Feature, mode geomMode) ([]byte, error) {
	dst = append(dst, '{')
	for i, a := range attrs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = geojson.AppendString(dst, a.Name)
		dst = append(dst, ':')
		dst = geojson.AppendValue(dst, f.Values[i])
	}
	if mode != geomNone {
		if len(attrs) > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"geometry":`...)
		switch {
		case len(f.Geometry) == 0:
			dst = append(dst, "null"...)
		case mode == geomHex:
			dst = append(dst, '"')
			n := len(dst)
			dst = hex.AppendEncode(dst, f.Geometry)
			for i := n; i < len(dst); i++ {
				if c := dst[i]; c >= 'a' {
					dst[i] = c - 'a' + 'A'
				}
			}
			dst = append(dst, '"')
		default:
			var err error
			if dst, err = wkb.ToGeoJSON(dst, f.Geometry); err != nil {
				return dst, err
			}
		}
	}
	return append(dst, '}'), nil
}

// flatWriter streams a JSON array of flat feature objects after a prefix,
// writing through in chunks of about 64 KiB.
type flatWriter struct {
	out   io.Writer
	attrs []mapcommons.Attribute
	mode  geomMode
	buf   []byte
	n     int
}

func newFlatWriter(out io.Writer, attrs []mapcommons.Attribute, mode geomMode, prefix []byte) *flatWriter {
	buf := make([]byte, 0, 72<<10)
	return &flatWriter{out: out, attrs: attrs, mode: mode, buf: append(buf, prefix...)}
}

// Write appends one feature.
func (w *flatWriter) Write(f *mapcommons.Feature) error {
	if w.n > 0 {
		w.buf = append(w.buf, ',')
	}
	w.n++
	var err error
	if w.buf, err = appendFlat(w.buf, w.attrs, f, w.mode); err != nil {
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
	return err
}

// jsonOut is a streamed JSON answer, wrapped as JSONP when asked for.
type jsonOut struct {
	w        http.ResponseWriter
	callback string
	started  bool
}

// startJSON sets the headers of a streamed JSON answer.
func startJSON(w http.ResponseWriter, r *http.Request) *jsonOut {
	o := &jsonOut{w: w, callback: callbackOf(r)}
	if o.callback != "" {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	return o
}

func (o *jsonOut) Write(b []byte) (int, error) {
	if !o.started && o.callback != "" {
		if _, err := o.w.Write([]byte(o.callback + "(")); err != nil {
			return 0, err
		}
	}
	o.started = true
	return o.w.Write(b)
}

// Close ends the answer.
func (o *jsonOut) Close() error {
	if o.callback != "" {
		_, err := o.w.Write([]byte(");"))
		return err
	}
	return nil
}

// intParam reads an integer parameter; absent gives def.
func intParam(p Params, name string, def int64) (int64, error) {
	v, ok := p.String(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, mapcommons.Errorf(mapcommons.EINVALID, "%s: not an integer: %q", name, v)
	}
	return n, nil
}

// pageParams reads start (a zero-based offset, wire contract 9) and limit
// (default def, negative meaning all; capped at MaxFeatureLimit when def is
// not "all").
func pageParams(p Params, def int64) (mapcommons.FeatureQuery, error) {
	var q mapcommons.FeatureQuery
	var err error
	if q.Offset, err = intParam(p, "start", 0); err != nil {
		return q, err
	}
	if q.Offset < 0 {
		return q, mapcommons.Errorf(mapcommons.EINVALID, "start: must not be negative")
	}
	if q.Limit, err = intParam(p, "limit", def); err != nil {
		return q, err
	}
	if q.Limit < 0 && def >= 0 {
		return q, mapcommons.Errorf(mapcommons.EINVALID, "limit: must not be negative")
	}
	if def >= 0 && q.Limit > mapcommons.MaxFeatureLimit {
		q.Limit = mapcommons.MaxFeatureLimit
	}
	return q, nil
}

// handleFeatureList answers GET /datasets/{id}/features: a bare array of
// flat features with hex WKB geometry by default, a GeoJSON
// FeatureCollection with geojson=1 (or the .geojson suffix).
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
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	p := q.Params
	fq, err := pageParams(p, mapcommons.DefaultFeatureLimit)
	if err != nil {
		return err
	}
	asGeoJSON, _, err := p.Bool("geojson")
	if err != nil {
		return err
	}
	asGeoJSON = asGeoJSON || f == "geojson"
	mode := geomHex
	if hexFlag, given, err := p.Bool("hex_geometry"); err != nil {
		return err
	} else if given && !hexFlag {
		mode = geomGeoJSON
	}

	out := startJSON(w, r)
	var fw interface {
		Write(*mapcommons.Feature) error
	}
	end := func() error { return nil }
	if asGeoJSON {
		gw := geojson.NewWriter(out, ds.Attributes)
		gw.Begin(nil)
		fw, end = gw, gw.End
	} else {
		flat := newFlatWriter(out, ds.Attributes, mode, []byte{'['})
		fw, end = flat, func() error { return flat.End("]") }
	}
	if err := s.svc.Features.ScanFeatures(r.Context(), ds.ID, &fq, fw.Write); err != nil {
		return err
	}
	if err := end(); err != nil {
		return err
	}
	return out.Close()
}
