package api

import (
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/geojson"
	"mapcommons/geocommons"
	"mapcommons/style"
)

// renderTemplate replaces each $[name] of a click or hover template with the
// feature's value of that attribute (blank for null or unknown names).
func renderTemplate(tmpl string, attrs []mapcommons.Attribute, values []any) string {
	if !strings.Contains(tmpl, "$[") {
		return tmpl
	}
	var b strings.Builder
	for {
		i := strings.Index(tmpl, "$[")
		if i < 0 {
			break
		}
		j := strings.IndexByte(tmpl[i+2:], ']')
		if j < 0 {
			break
		}
		b.WriteString(tmpl[:i])
		if k := mapcommons.AttrIndex(attrs, tmpl[i+2:i+2+j]); k >= 0 && k < len(values) {
			b.WriteString(valueText(values[k]))
		}
		tmpl = tmpl[i+2+j+1:]
	}
	b.WriteString(tmpl)
	return b.String()
}

// valueText writes an attribute value as text.
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// handleLayerFeatures answers GET /maps/{id}/layers/{index}/features: the
// features of the layer's dataset (paged by start and limit, as
// features.json), each flat with a GeoJSON geometry and, where the layer
// has them, its rendered "click" and "hover" texts and its "class" (the
// index of its class in a classed layer, null when it is in none).
func (s *Server) handleLayerFeatures(w http.ResponseWriter, r *http.Request) error {
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "layer features have no %s form", f)
	}
	m, err := s.findMap(r)
	if err != nil {
		return err
	}
	i, err := layerIndex(r, m)
	if err != nil {
		return err
	}
	l := &m.Layers[i]
	ds := s.layerDataset(r.Context(), l.Source)
	if ds != nil {
		if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
			return err
		}
	}
	if notModified(w, r, s.mapETag(r, m, "layer"+strconv.Itoa(i)), cacheControl(r, s.mapPublic(r, m, true))) {
		return nil
	}
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	fq, err := geocommons.Page(q.Params, 30)
	if err != nil {
		return err
	}
	out := startJSON(w, r)
	if ds == nil {
		// A layer whose dataset does not exist (yet) shows nothing.
		out.buf = append(out.buf, "[]"...)
		return out.Close()
	}
	cd, err := s.classes.Classify(r.Context(), l, ds)
	if err != nil {
		return err
	}
	col := -1
	if c := style.Classing(l); c != nil {
		col = mapcommons.AttrIndex(ds.Attributes, c.SelectedAttribute)
	}
	keys := geojson.Keys(ds.Attributes)
	extra := func(key string) string {
		if mapcommons.AttrIndex(ds.Attributes, key) >= 0 {
			return "_" + key
		}
		return key
	}
	clickKey, hoverKey, classKey := extra("click"), extra("hover"), extra("class")
	buf := []byte{'['}
	n := 0
	err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, &fq, func(f *mapcommons.Feature) error {
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		var err error
		if buf, err = appendFlat(buf, keys, ds.Attributes, f, geomGeoJSON, ""); err != nil {
			return err
		}
		buf = buf[:len(buf)-1] // reopen the object
		for _, t := range []struct{ key, tmpl string }{{clickKey, l.Styles.Click}, {hoverKey, l.Styles.Hover}} {
			if t.tmpl != "" {
				buf = append(buf, ',')
				buf = geojson.AppendString(buf, t.key)
				buf = append(buf, ':')
				buf = geojson.AppendString(buf, renderTemplate(t.tmpl, ds.Attributes, f.Values))
			}
		}
		if cd != nil && col >= 0 {
			buf = append(buf, ',')
			buf = geojson.AppendString(buf, classKey)
			if k := cd.Result.Class(style.NumberOf(f.Values[col])); k >= 0 {
				buf = append(buf, ':')
				buf = strconv.AppendInt(buf, int64(k), 10)
			} else {
				buf = append(buf, ":null"...)
			}
		}
		buf = append(buf, '}')
		if len(buf) >= holdLimit {
			_, err = out.Write(buf)
			buf = buf[:0]
		}
		return err
	})
	if err != nil {
		return err
	}
	if _, err := out.Write(append(buf, ']')); err != nil {
		return err
	}
	return out.Close()
}
