package api

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"

	"mapcommons"
	"mapcommons/classify"
)

// classDoc is the classification of a layer as its JSON shows it, under
// styles.fill.classification (CHOROPLETH) or styles.icon.classification
// (GRADUATED).
type classDoc struct {
	Attribute  string    `json:"attribute"`
	Method     string    `json:"method"`
	Breaks     []float64 `json:"breaks"` // class i is [breaks[i], breaks[i+1]), the last one closed
	Counts     []int64   `json:"counts"`
	Colors     []int     `json:"colors,omitempty"`
	Min        *float64  `json:"min"`
	Max        *float64  `json:"max"`
	Classified int64     `json:"classified"`
	Nulls      int64     `json:"nulls"`
	Outside    int64     `json:"outside"`
	result     *classify.Result
}

// classCache keeps classifications by dataset version and options, so a
// map is classified once per change of its data. Requests that need a
// classification another is computing wait for it rather than compute it
// again (a popular map opened by many clients right after its data changed
// costs one classification, not one per client).
type classCache struct {
	mu       sync.Mutex
	m        map[string]*classDoc
	inflight map[string]*classCall
}

// classCall is a classification being computed.
type classCall struct {
	done chan struct{} // closed when doc and err are set
	doc  *classDoc
	err  error
}

// do returns the classification of key from the cache, from the request
// computing it, or from compute (then cached). A waiter whose own context
// ends stops waiting; one whose computing request failed (its client gone,
// say) computes it itself.
func (c *classCache) do(ctx context.Context, key string, compute func() (*classDoc, error)) (*classDoc, error) {
	for {
		c.mu.Lock()
		if d, ok := c.m[key]; ok {
			c.mu.Unlock()
			return d, nil
		}
		if call, ok := c.inflight[key]; ok {
			c.mu.Unlock()
			select {
			case <-call.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if call.err == nil {
				return call.doc, nil
			}
			continue
		}
		call := &classCall{done: make(chan struct{})}
		if c.inflight == nil {
			c.inflight = map[string]*classCall{}
		}
		c.inflight[key] = call
		c.mu.Unlock()

		c.compute(key, call, compute)
		return call.doc, call.err
	}
}

// compute runs a classification for the waiters of call and hands it over.
// A compute that panics (the server's recover answers its request) still
// hands over an error, so that its waiters compute for themselves and no
// later request waits on it.
func (c *classCache) compute(key string, call *classCall, compute func() (*classDoc, error)) {
	panicked := true
	defer func() {
		if panicked {
			call.doc, call.err = nil, errClassPanicked
		}
		c.mu.Lock()
		delete(c.inflight, key)
		if call.err == nil {
			if c.m == nil || len(c.m) > 1000 {
				c.m = map[string]*classDoc{}
			}
			c.m[key] = call.doc
		}
		c.mu.Unlock()
		close(call.done)
	}()
	call.doc, call.err = compute()
	panicked = false
}

var errClassPanicked = errors.New("the classification's computation panicked")

// classing returns the options a layer is classed by (the fill's for
// CHOROPLETH, the icon's for GRADUATED, else whichever names an
// attribute), or nil when it is not classed.
func classing(l *mapcommons.Layer) *mapcommons.Classing {
	st := &l.Styles
	if st.Type != mapcommons.LayerChoropleth && st.Type != mapcommons.LayerGraduated {
		return nil
	}
	first, second := &st.Fill.Classing, &st.Icon.Classing
	if st.Type == mapcommons.LayerGraduated {
		first, second = second, first
	}
	if first.SelectedAttribute != "" {
		return first
	}
	if second.SelectedAttribute != "" {
		return second
	}
	return nil
}

// classifyLayer computes the classes of a classed layer over its dataset's
// current values; nil when the layer is not classed or its dataset or
// attribute is missing.
func (s *Server) classifyLayer(ctx context.Context, l *mapcommons.Layer, ds *mapcommons.Dataset) (*classDoc, error) {
	c := classing(l)
	if c == nil || ds == nil {
		return nil, nil
	}
	// The attribute as the layer's features find it (its name, or else its
	// original name); the classes say the name the features carry.
	col := mapcommons.AttrIndex(ds.Attributes, c.SelectedAttribute)
	if col < 0 || !ds.Attributes[col].Type.Numeric() {
		return nil, nil
	}
	method, err := classify.ParseMethod(c.ClassificationType)
	if err != nil {
		return nil, err
	}
	opt := classify.Options{Method: method, Classes: c.Categories, Breaks: c.ClassificationBreaks, Range: c.Range, Critical: c.CriticalValue}
	optKey, _ := json.Marshal(cacheOptions(opt))
	key := strconv.FormatInt(ds.ID, 10) + "/" + strconv.FormatInt(ds.Version, 10) + "/" + strconv.Itoa(col) + "/" + string(optKey)
	doc, err := s.classes.do(ctx, key, func() (*classDoc, error) {
		values := make([]float64, 0, ds.FeatureCount)
		typ := ds.Attributes[col].Type
		err := s.svc.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1, Lazy: true}, func(f *mapcommons.Feature) error {
			values = append(values, numberAt(f, col, typ))
			return nil
		})
		if err != nil {
			return nil, err
		}
		res, err := classify.Classify(values, opt)
		if err != nil {
			return nil, err
		}
		doc := &classDoc{Attribute: ds.Attributes[col].Name, Method: string(res.Method), Breaks: res.Breaks, Counts: res.Counts,
			Classified: res.Classified, Nulls: res.Nulls, Outside: res.Outside, result: res}
		if res.Classified > 0 {
			doc.Min, doc.Max = &res.Min, &res.Max
		}
		if doc.Breaks == nil {
			doc.Breaks = []float64{}
		}
		if doc.Counts == nil {
			doc.Counts = []int64{}
		}
		return doc, nil
	})
	if err != nil {
		return nil, err
	}
	out := *doc
	out.Colors = classColors(l, len(doc.Counts))
	return &out, nil
}

// cacheOptions are the options of a classification with what the method
// ignores left out and the default number of classes filled in, so that
// layers asking for the same classes share one cache entry: the key is the
// dataset's version, the attribute, the method, the classes, the range, and
// the breaks of Manual or the critical value of Critical Value.
func cacheOptions(opt classify.Options) classify.Options {
	if opt.Method != classify.Manual {
		opt.Breaks = nil
		if opt.Classes == 0 {
			opt.Classes = mapcommons.DefaultCategories
		}
	} else {
		opt.Classes = 0
	}
	if opt.Method != classify.CriticalValue {
		opt.Critical = nil
	}
	return opt
}

// classColors gives each of n classes a colour: the layer's list when it
// has one per class, else a ramp from its first colour (or grey) to white
// darkening by class.
func classColors(l *mapcommons.Layer, n int) []int {
	if n == 0 {
		return nil
	}
	colors := l.Styles.Fill.Colors
	if len(colors) >= n {
		return colors[:n]
	}
	if n >= 2 && n <= 7 {
		if ramp, err := classify.Ramp("White-Blue", n); err == nil {
			return ramp
		}
	}
	out := make([]int, n)
	for i := range out {
		v := 0xE0 - (0xC0*i)/max(n-1, 1)
		out[i] = v<<16 | v<<8 | v
	}
	return out
}

// numberAt reads numeric attribute col (of type t) of a feature, from its
// Row when it was read lazily; NaN for null.
func numberAt(f *mapcommons.Feature, col int, t mapcommons.AttrType) float64 {
	switch {
	case f.Row == nil:
		return numberOf(f.Values[col])
	case f.Row.IsNull(col):
		return math.NaN()
	case t == mapcommons.AttrInteger:
		return float64(f.Row.Int(col))
	}
	return f.Row.Float(col)
}

// numberOf reads a numeric attribute value; NaN for null or anything else.
func numberOf(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

// mapClasses classifies the classed layers of m (nil for the others): the
// work a map's document needs. Map creates and updates call it before they
// store anything, so that a change whose classification is cut short (the
// client went away, the query deadline passed) is not stored, and the
// document written afterwards finds the classes in the cache.
func (s *Server) mapClasses(r *http.Request, layers []mapcommons.Layer, lookup layerContext) ([]*classDoc, error) {
	out := make([]*classDoc, len(layers))
	for i := range layers {
		cd, err := s.layerClasses(r, &layers[i], lookup)
		if err != nil {
			return nil, err
		}
		out[i] = cd
	}
	// A lookup cut short looks like a missing dataset: no classes.
	return out, r.Context().Err()
}

// withClasses adds the classifications of m's layers to its document.
func (s *Server) withClasses(r *http.Request, m *mapcommons.Map, d *mapDoc, lookup layerContext) error {
	classes, err := s.mapClasses(r, m.Layers, lookup)
	if err != nil {
		return err
	}
	for i := range m.Layers {
		attachClasses(&m.Layers[i], d.Layers[i], classes[i])
	}
	return nil
}

// layerClasses classifies a classed layer, when the caller may download
// its dataset (the classes are computed from the data); nil otherwise.
func (s *Server) layerClasses(r *http.Request, l *mapcommons.Layer, lookup layerContext) (*classDoc, error) {
	ds := lookup(l.Source)
	if ds != nil && s.policy.CanDownloadDataset(caller(r), ds) != nil {
		return nil, nil
	}
	return s.classifyLayer(r.Context(), l, ds)
}

// attachClasses puts the classification cd (nil: none) of l in its
// document.
func attachClasses(l *mapcommons.Layer, d *layerDoc, cd *classDoc) {
	switch {
	case cd == nil:
	case classing(l) == &l.Styles.Icon.Classing:
		d.Styles.Icon.Classification = cd
	default:
		d.Styles.Fill.Classification = cd
	}
}
