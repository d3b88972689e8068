package geocommons

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/classify"
	"mapcommons/params"
	"mapcommons/style"
)

// This file reads maps and layers out of the parameter tree. Every value
// arrives as a string (forms, query strings, and JSON numbers alike), a
// list or a map; errors name the option by its path, as in
// layers[0].styles.fill.categories.

// Node is a node of the parameter tree and the path that leads to it
// ("layers[0].styles.fill"), which errors name.
type Node struct {
	v    any
	path string
	set  bool
}

// Root is the node of a request's whole parameter tree.
func Root(p params.Params) Node { return Node{v: map[string]any(p), set: true} }

// NewNode is the node of a tree v found at path.
func NewNode(v any, path string) Node { return Node{v: v, path: path, set: true} }

// Given reports whether the node is in the tree.
func (n Node) Given() bool { return n.set }

// Path is the node's path in the request.
func (n Node) Path() string { return n.path }

// Child is the node under key (not given when there is none).
func (n Node) Child(key string) Node { return n.child(key) }

func (n Node) child(key string) Node {
	m, ok := params.NodeMap(n.v)
	if !ok {
		return Node{path: n.join(key)}
	}
	v, ok := m[key]
	return Node{v: v, path: n.join(key), set: ok}
}

func (n Node) join(key string) string {
	if n.path == "" {
		return key
	}
	return n.path + "." + key
}

func (n Node) index(i int, v any) Node {
	return Node{v: v, path: n.path + "[" + strconv.Itoa(i) + "]", set: true}
}

func (n Node) fail(format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "%s: "+format, append([]any{n.path}, args...)...)
}

// str returns a string value; given is false when the node is missing or
// JSON null.
func (n Node) str() (s string, given bool, err error) {
	if !n.set || n.v == nil {
		return "", false, nil
	}
	s, ok := n.v.(string)
	if !ok {
		return "", false, n.fail("must be a single value")
	}
	return s, true, nil
}

// text returns a trimmed string value, at most max bytes.
func (n Node) text(max int) (string, bool, error) {
	s, given, err := n.str()
	if err != nil || !given {
		return "", given, err
	}
	if len(s) > max {
		return "", false, n.fail("longer than %d bytes", max)
	}
	return strings.TrimSpace(s), true, nil
}

// number returns a finite number within [lo, hi]; blank counts as not given.
func (n Node) number(lo, hi float64) (*float64, error) {
	s, given, err := n.str()
	if err != nil || !given || strings.TrimSpace(s) == "" {
		return nil, err
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, n.fail("%q is not a number", s)
	}
	if f < lo || f > hi {
		return nil, n.fail("%v is outside %v..%v", f, lo, hi)
	}
	return &f, nil
}

// integer returns a whole number within [lo, hi].
func (n Node) integer(lo, hi int) (*int, error) {
	f, err := n.number(float64(lo), float64(hi))
	if err != nil || f == nil {
		return nil, err
	}
	if *f != math.Trunc(*f) {
		return nil, n.fail("%v is not a whole number", *f)
	}
	i := int(*f)
	return &i, nil
}

// flag reads a boolean (1/0, true/false, True/False, yes/no, on/off).
func (n Node) flag() (*bool, error) {
	s, given, err := n.str()
	if err != nil || !given || strings.TrimSpace(s) == "" {
		return nil, err
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on":
		b := true
		return &b, nil
	case "0", "false", "no", "off":
		b := false
		return &b, nil
	}
	return nil, n.fail("%q is not a boolean (1/0, true/false)", s)
}

// list returns the elements of a list node (a single value is a list of
// one; a comma-separated "[a,b]" or "a,b" string is split when split is set).
func (n Node) list(split bool) ([]Node, bool, error) {
	if !n.set || n.v == nil {
		return nil, false, nil
	}
	var items []any
	switch x := n.v.(type) {
	case string:
		s := strings.TrimSpace(x)
		if split {
			s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
			if strings.TrimSpace(s) == "" {
				return []Node{}, true, nil
			}
			for _, part := range strings.Split(s, ",") {
				items = append(items, strings.TrimSpace(part))
			}
		} else {
			items = []any{x}
		}
	default:
		l, ok := params.Params{"v": n.v}.List("v")
		if !ok {
			return nil, false, n.fail("must be a list")
		}
		items = l
	}
	out := make([]Node, len(items))
	for i, v := range items {
		out[i] = n.index(i, v)
	}
	return out, true, nil
}

// numbers reads a list of finite numbers.
func (n Node) numbers() ([]float64, bool, error) {
	items, given, err := n.list(true)
	if err != nil || !given {
		return nil, given, err
	}
	out := make([]float64, 0, len(items))
	for _, it := range items {
		f, err := it.number(math.Inf(-1), math.Inf(1))
		if err != nil {
			return nil, false, err
		}
		if f == nil {
			return nil, false, it.fail("blank")
		}
		out = append(out, *f)
	}
	return out, true, nil
}

// color reads a colour: 0xRRGGBB, #RRGGBB, or a decimal integer.
func (n Node) color() (*int, error) {
	s, given, err := n.str()
	if err != nil || !given || strings.TrimSpace(s) == "" {
		return nil, err
	}
	c, ok := style.ParseColor(s)
	if !ok {
		return nil, n.fail("%q is not a colour (0xRRGGBB, #RRGGBB or a decimal integer up to 16777215)", s)
	}
	return &c, nil
}

// MapFields are the map-level fields of a create or update request; nil
// means not given.
type MapFields struct {
	Title, Basemap, Description, Projection *string
	Tags                                    *[]string
	Extent                                  *[4]float64
	Layers                                  []Node // nil: not given
	LayersGiven                             bool
	Permissions                             *[]mapcommons.Permission
}

// MapParams reads the map-level fields of p: plain, or under map[…].
func MapParams(p params.Params) (*MapFields, error) {
	root := Root(p)
	if m, ok := p.Map("map"); ok && len(m) > 0 {
		root = Node{v: map[string]any(m), set: true}
	}
	f := &MapFields{}
	for _, t := range []struct {
		key string
		dst **string
		max int
	}{{"title", &f.Title, mapcommons.MaxTitleLen}, {"basemap", &f.Basemap, 200}, {"description", &f.Description, mapcommons.MaxTextLen}, {"projection", &f.Projection, 50}} {
		s, given, err := root.child(t.key).text(t.max)
		if err != nil {
			return nil, err
		}
		if given {
			*t.dst = &s
		}
	}
	if f.Projection != nil {
		switch strings.ToUpper(*f.Projection) {
		case mapcommons.ProjectionMercator, "":
			v := mapcommons.ProjectionMercator
			f.Projection = &v
		case mapcommons.ProjectionLonLat:
			v := mapcommons.ProjectionLonLat
			f.Projection = &v
		default:
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "projection: %q is not supported (EPSG:3785 or EPSG:4326)", *f.Projection)
		}
	}
	if tn := root.child("tags"); tn.set {
		items, _, err := tn.list(false)
		if err != nil {
			return nil, err
		}
		var words []string
		for _, it := range items {
			s, _, err := it.text(mapcommons.MaxTextLen)
			if err != nil {
				return nil, err
			}
			words = append(words, s)
		}
		tags := []string{}
		if norm := mapcommons.NormalizeTags(strings.Join(words, ",")); norm != "" {
			tags = strings.Split(norm, ", ")
		}
		f.Tags = &tags
	}
	if en := root.child("extent"); en.set {
		nums, given, err := en.numbers()
		if err != nil {
			return nil, err
		}
		if given && len(nums) > 0 {
			e, err := checkExtent(nums)
			if err != nil {
				return nil, err
			}
			f.Extent = e
		}
	}
	if ln := root.child("layers"); ln.set {
		items, _, err := ln.list(false)
		if err != nil {
			return nil, err
		}
		f.LayersGiven = true
		f.Layers = []Node{}
		for _, it := range items {
			// Ruby sends layers[]= (one blank element) for "no layers".
			if s, ok := it.v.(string); ok && strings.TrimSpace(s) == "" {
				continue
			}
			f.Layers = append(f.Layers, Node{v: it.v, path: "layers[" + strconv.Itoa(len(f.Layers)) + "]", set: true})
		}
	}
	if pn := root.child("permissions"); pn.set {
		perms, err := Permissions(pn)
		if err != nil {
			return nil, err
		}
		f.Permissions = &perms
	}
	return f, nil
}

// checkExtent validates west, south, east, north.
func checkExtent(v []float64) (*[4]float64, error) {
	if len(v) != 4 {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "extent: needs 4 numbers (west,south,east,north), got %d", len(v))
	}
	w, s, e, n := v[0], v[1], v[2], v[3]
	switch {
	case w < -180 || w > 180 || e < -180 || e > 180:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "extent: west and east must lie within -180..180")
	case s < -90 || s > 90 || n < -90 || n > 90:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "extent: south and north must lie within -90..90")
	case s > n:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "extent: south (%v) is north of north (%v)", s, n)
	}
	return &[4]float64{w, s, e, n}, nil
}

// Permissions reads a sharing list: a list of entries (one entry
// alone is taken as a list of one), each with group_id and either
// permissions{view,download,edit} or the flags themselves. Flags not given
// are false; edit implies download implies view; entries naming the same
// group are merged. The list replaces the object's whole.
func Permissions(n Node) ([]mapcommons.Permission, error) {
	if m, ok := params.NodeMap(n.v); ok {
		if _, one := m["group_id"]; one {
			n = Node{v: []any{n.v}, path: n.path, set: true}
		}
	}
	items, _, err := n.list(false)
	if err != nil {
		return nil, err
	}
	if len(items) > mapcommons.MaxPermissions {
		return nil, n.fail("at most %d entries", mapcommons.MaxPermissions)
	}
	out := []mapcommons.Permission{}
	at := map[string]int{}
	for _, it := range items {
		if s, ok := it.v.(string); ok && strings.TrimSpace(s) == "" {
			continue
		}
		if _, ok := params.NodeMap(it.v); !ok {
			return nil, it.fail("must be an object with group_id and permissions")
		}
		g, given, err := it.child("group_id").text(40)
		if err != nil {
			return nil, err
		}
		if !given || g == "" {
			return nil, it.child("group_id").fail("missing")
		}
		if strings.EqualFold(g, mapcommons.GroupEveryone) {
			g = mapcommons.GroupEveryone
		} else if id, err := strconv.ParseInt(g, 10, 64); err != nil || id <= 0 {
			return nil, it.child("group_id").fail("%q is neither a group id nor everyone", g)
		} else {
			g = strconv.FormatInt(id, 10)
		}
		flags := it.child("permissions")
		if !flags.set {
			flags = it
		}
		e := mapcommons.Permission{Group: g}
		for _, fl := range []struct {
			key string
			dst *bool
		}{{"view", &e.View}, {"download", &e.Download}, {"edit", &e.Edit}} {
			b, err := flags.child(fl.key).flag()
			if err != nil {
				return nil, err
			}
			if b != nil {
				*fl.dst = *b
			}
		}
		e = e.Normalize()
		if i, dup := at[g]; dup {
			p := &out[i]
			p.View, p.Download, p.Edit = p.View || e.View, p.Download || e.Download, p.Edit || e.Edit
			continue
		}
		at[g] = len(out)
		out = append(out, e)
	}
	return out, nil
}

// LayerContext tells the layer parser about the dataset a finder: source
// names (nil when it does not exist).
type LayerContext func(source string) *mapcommons.Dataset

// DatasetOfSource returns the dataset id a finder: source names.
func DatasetOfSource(source string) (int64, bool) {
	return mapcommons.Layer{Source: source}.DatasetID()
}

// checkSource validates a layer source: finder:<id> or url:<http(s) url>.
func checkSource(n Node, s string) error {
	if _, ok := DatasetOfSource(s); ok {
		return nil
	}
	if rest, ok := strings.CutPrefix(s, "url:"); ok {
		u, err := url.Parse(rest)
		if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			return nil
		}
		return n.fail("%q is not an http(s) URL", rest)
	}
	return n.fail("%q is neither finder:<dataset id> nor url:<url>", s)
}

// LayerParams reads one layer. base, when not nil, is the layer being
// changed (its unspecified options stay); otherwise defaults apply.
func LayerParams(n Node, base *mapcommons.Layer, lookup LayerContext) (mapcommons.Layer, error) {
	var l mapcommons.Layer
	if base != nil {
		l = *base
	} else {
		l = style.NewLayer()
	}
	if _, ok := params.NodeMap(n.v); !ok {
		return l, n.fail("must be an object with a source")
	}
	src, given, err := n.child("source").text(2048)
	if err != nil {
		return l, err
	}
	if given {
		if err := checkSource(n.child("source"), src); err != nil {
			return l, err
		}
		l.Source = src
	}
	if l.Source == "" {
		return l, n.child("source").fail("missing: finder:<dataset id> or url:<url>")
	}
	ds := lookup(l.Source)
	for _, t := range []struct {
		key string
		dst *string
	}{{"title", &l.Title}, {"subtitle", &l.Subtitle}} {
		s, given, err := n.child(t.key).text(mapcommons.MaxTitleLen)
		if err != nil {
			return l, err
		}
		if given {
			*t.dst = s
		}
	}
	if l.Title == "" && ds != nil {
		l.Title = ds.Title
	}
	if f, err := n.child("opacity").number(0, 1); err != nil {
		return l, err
	} else if f != nil {
		l.Opacity = *f
	}
	if b, err := n.child("visible").flag(); err != nil {
		return l, err
	} else if b != nil {
		l.Visible = *b
	}
	layerType, _, err := n.child("type").text(40)
	if err != nil {
		return l, err
	}
	st := n.child("styles")
	if s, ok := st.v.(string); ok && strings.TrimSpace(s) == "" {
		st = Node{path: st.path}
	}
	if st.set {
		if _, ok := params.NodeMap(st.v); !ok && st.v != nil {
			return l, st.fail("must be an object")
		}
	}
	styles, err := stylesParams(st, l.Styles, layerType, ds)
	if err != nil {
		return l, err
	}
	l.Styles = styles
	return l, nil
}

// stylesParams reads a styles object over s (the existing styles, or a
// new layer's defaults: style.NewLayer).
func stylesParams(n Node, s mapcommons.Styles, layerType string, ds *mapcommons.Dataset) (mapcommons.Styles, error) {
	t, given, err := n.child("type").text(40)
	if err != nil {
		return s, err
	}
	if !given || t == "" {
		t = layerType
	}
	if t != "" {
		t = strings.ToUpper(t)
		if !style.IsLayerType(t) {
			return s, n.child("type").fail("%q is not a layer type (POINT, PRIMITIVE, GRADUATED, PROPORTIONAL, CHOROPLETH)", t)
		}
		s.Type = t
	}
	if s.Type == "" {
		s.Type = style.DefaultType(ds)
	}
	// Icon.
	in := n.child("icon")
	if err := classingParams(in, &s.Icon.Classing); err != nil {
		return s, err
	}
	if c, err := in.child("color").color(); err != nil {
		return s, err
	} else if c != nil {
		s.Icon.Color = c
	}
	if sym, given, err := in.child("symbol").text(2048); err != nil {
		return s, err
	} else if given {
		if sym != "" && !style.IsIconSymbol(sym) {
			u, err := url.Parse(sym)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return s, in.child("symbol").fail("%q is neither a palette symbol nor an http(s) image URL", sym)
			}
		}
		s.Icon.Symbol = sym
	}
	if f, err := in.child("opacity").number(0, 1); err != nil {
		return s, err
	} else if f != nil {
		s.Icon.Opacity = f
	}
	if b, err := in.child("dropshadow").flag(); err != nil {
		return s, err
	} else if b != nil {
		s.Icon.Dropshadow = *b
	}
	if ls, given, err := in.child("lineStyle").text(40); err != nil {
		return s, err
	} else if given {
		if ls != "" && !style.IsLineStyle(ls) {
			return s, in.child("lineStyle").fail("%q is not a line style (dashedThin, dashedThick, cased, thick, regular)", ls)
		}
		s.Icon.LineStyle = ls
	}
	if f, err := in.child("size").number(0, 100); err != nil {
		return s, err
	} else if f != nil {
		if *f == 0 {
			return s, in.child("size").fail("must be above 0")
		}
		s.Icon.Size = *f
	}
	// Stroke.
	sn := n.child("stroke")
	if c, err := sn.child("color").color(); err != nil {
		return s, err
	} else if c != nil {
		s.Stroke.Color = c
	}
	if f, err := sn.child("alpha").number(0, 1); err != nil {
		return s, err
	} else if f != nil {
		s.Stroke.Alpha = *f
	}
	if f, err := sn.child("weight").number(0, 100); err != nil {
		return s, err
	} else if f != nil {
		s.Stroke.Weight = f
	}
	// Fill.
	fn := n.child("fill")
	if err := classingParams(fn, &s.Fill.Classing); err != nil {
		return s, err
	}
	if c, err := fn.child("color").color(); err != nil {
		return s, err
	} else if c != nil {
		s.Fill.Color = c
	}
	if f, err := fn.child("opacity").number(0, 1); err != nil {
		return s, err
	} else if f != nil {
		s.Fill.Opacity = *f
	}
	if cn := fn.child("colors"); cn.set && cn.v != nil {
		if name, ok := cn.v.(string); ok && !looksLikeColors(name) {
			s.Fill.Ramp, s.Fill.Colors = strings.TrimSpace(name), nil
		} else {
			items, _, err := cn.list(true)
			if err != nil {
				return s, err
			}
			colors := []int{}
			for _, it := range items {
				c, err := it.color()
				if err != nil {
					return s, err
				}
				if c == nil {
					return s, it.fail("blank colour")
				}
				colors = append(colors, *c)
			}
			s.Fill.Colors, s.Fill.Ramp = colors, ""
		}
	}
	// A map's JSON shows the ramp its colours came from; a client that
	// echoes the JSON back keeps it, as long as the colours are still that
	// ramp's.
	if rn := fn.child("ramp"); rn.set && s.Fill.Ramp == "" && len(s.Fill.Colors) > 0 {
		if name, ok := rn.v.(string); ok {
			if rc, err := classify.Ramp(name, len(s.Fill.Colors)); err == nil && slices.Equal(rc, s.Fill.Colors) {
				s.Fill.Ramp = strings.TrimSpace(name)
			}
		}
	}
	// Temporal, click, hover, slider, timeline.
	if an := n.child("temporal").child("attributes"); an.set {
		items, _, err := an.list(false)
		if err != nil {
			return s, err
		}
		s.Temporal.Attributes = nil
		for _, it := range items {
			a, _, err := it.text(200)
			if err != nil {
				return s, err
			}
			if a != "" {
				s.Temporal.Attributes = append(s.Temporal.Attributes, a)
			}
		}
	}
	for _, t := range []struct {
		key string
		dst *string
	}{{"click", &s.Click}, {"hover", &s.Hover}} {
		v, given, err := n.child(t.key).str()
		if err != nil {
			return s, err
		}
		if given {
			if len(v) > 8192 {
				return s, n.child(t.key).fail("longer than 8192 bytes")
			}
			*t.dst = v
		}
	}
	if sl := n.child("slider"); sl.set && sl.v != nil {
		if _, ok := params.NodeMap(sl.v); ok {
			r, err := timeRange(sl)
			if err != nil {
				return s, err
			}
			s.Slider = &mapcommons.Slider{Range: r}
		} else {
			v, given, err := sl.text(40)
			if err != nil {
				return s, err
			}
			switch {
			case !given || v == "":
				s.Slider = nil
			case strings.EqualFold(v, "now"):
				s.Slider = &mapcommons.Slider{Now: true}
			default:
				ms, err := strconv.ParseInt(v, 10, 64)
				if err != nil || ms < 0 {
					return s, sl.fail("%q is neither a span in milliseconds, now, nor an object with begin, end and period", v)
				}
				s.Slider = &mapcommons.Slider{Millis: ms}
			}
		}
	} else if sl.set {
		s.Slider = nil
	}
	// Density: how a layer of many points shows it, in any case (stored
	// lower-case); blank clears it (auto).
	if d, given, err := n.child("density").text(40); err != nil {
		return s, err
	} else if given {
		if l := strings.ToLower(d); l != "" && !style.IsDensity(l) {
			return s, n.child("density").fail("%q is not a density (auto, clusters, heatmap, none)", d)
		}
		s.Density = strings.ToLower(d)
	}
	if tl := n.child("timeline"); tl.set && tl.v != nil {
		if _, ok := params.NodeMap(tl.v); !ok {
			if v, _ := tl.v.(string); strings.TrimSpace(v) != "" {
				return s, tl.fail("must be an object with begin, end and period")
			}
			s.Timeline = nil
		} else {
			t, err := timeRange(tl)
			if err != nil {
				return s, err
			}
			s.Timeline = t
		}
	}
	return s, nil
}

// timeRange reads an object of begin, end and period, at most two of them.
func timeRange(n Node) (*mapcommons.Timeline, error) {
	t := &mapcommons.Timeline{}
	var err error
	if t.Begin, err = timeMark(n.child("begin")); err != nil {
		return nil, err
	}
	if t.End, err = timeMark(n.child("end")); err != nil {
		return nil, err
	}
	pn := n.child("period")
	if v, given, err := pn.text(40); err != nil {
		return nil, err
	} else if given && v != "" && v != "null" {
		p, err := strconv.ParseInt(v, 10, 64)
		if err != nil || p <= 0 {
			return nil, pn.fail("%q is not a positive span", v)
		}
		t.Period = &p
	}
	if t.Begin != nil && t.End != nil && t.Period != nil {
		return nil, n.fail("give at most two of begin, end and period")
	}
	if t.Begin != nil && t.End != nil && !t.Begin.Now && !t.End.Now && t.End.Millis < t.Begin.Millis {
		return nil, n.child("end").fail("before begin")
	}
	return t, nil
}

// looksLikeColors tells a list of colours written as one string ("0xFF0000,
// 0x00FF00" or "[1,2]") from the name of a ramp family.
func looksLikeColors(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "#") || strings.HasPrefix(strings.ToLower(s), "0x") {
		return true
	}
	_, err := strconv.ParseInt(strings.Split(s, ",")[0], 10, 64)
	return err == nil
}

// timeMark reads a time element: ISO 8601 YYYYMMDDTHH:MM:SSZ (or with a
// numeric offset, or the extended YYYY-MM-DD form), now, or milliseconds
// since the epoch.
func timeMark(n Node) (*mapcommons.TimeMark, error) {
	v, given, err := n.text(60)
	if err != nil || !given || v == "" || v == "null" {
		return nil, err
	}
	if strings.EqualFold(v, "now") {
		return &mapcommons.TimeMark{Now: true}, nil
	}
	if len(v) == 8 && strings.Trim(v, "0123456789") == "" {
		// YYYYMMDD: a date without its time, not 20 million milliseconds.
		return nil, n.fail("%q is a date without a time: write %sT00:00:00Z (or milliseconds since the epoch)", v, v)
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return &mapcommons.TimeMark{Millis: ms, Text: strconv.FormatInt(ms, 10)}, nil
	}
	for _, layout := range []string{"20060102T15:04:05Z07:00", "20060102T15:04:05Z0700", "20060102T150405Z07:00", "2006-01-02T15:04:05Z07:00"} {
		if t, err := time.Parse(layout, v); err == nil {
			return &mapcommons.TimeMark{Millis: t.UnixMilli(), Text: v}, nil
		}
	}
	return nil, n.fail("%q is not a time (YYYYMMDDTHH:MM:SSZ, now, or milliseconds since the epoch)", v)
}

// classingParams reads the classification options of an icon or fill.
func classingParams(n Node, c *mapcommons.Classing) error {
	if a, given, err := n.child("selectedAttribute").text(200); err != nil {
		return err
	} else if given {
		c.SelectedAttribute = a
	}
	if t, given, err := n.child("classificationType").text(60); err != nil {
		return err
	} else if given {
		c.ClassificationType = t
	}
	if bn := n.child("classificationBreaks"); bn.set {
		b, _, err := bn.numbers()
		if err != nil {
			return err
		}
		for i := 1; i < len(b); i++ {
			if b[i] <= b[i-1] {
				return bn.fail("breaks must increase (%v after %v)", b[i], b[i-1])
			}
		}
		c.ClassificationBreaks = b
	}
	if k, err := n.child("categories").integer(1, 32); err != nil {
		return err
	} else if k != nil {
		c.Categories = *k
	}
	if rn := n.child("range"); rn.set {
		r, given, err := rn.numbers()
		if err != nil {
			return err
		}
		switch {
		case !given || len(r) == 0:
			c.Range = nil
		case len(r) != 2:
			return rn.fail("needs two numbers, got %d", len(r))
		case r[0] > r[1]:
			return rn.fail("%v is above %v", r[0], r[1])
		default:
			c.Range = &[2]float64{r[0], r[1]}
		}
	}
	if f, err := n.child("criticalValue").number(math.Inf(-1), math.Inf(1)); err != nil {
		return err
	} else if f != nil {
		c.CriticalValue = f
	}
	return nil
}

// LayerNode is where a layer's options are in a request: under layer[…]
// when given so, else at the top level.
func LayerNode(p params.Params) Node {
	if m, ok := p.Map("layer"); ok && len(m) > 0 {
		return NewNode(map[string]any(m), "layer")
	}
	return Root(p)
}
