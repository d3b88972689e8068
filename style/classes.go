package style

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"sync"

	"mapcommons"
	"mapcommons/classify"
)

// Classes is the classification of a classed layer, as the layer's JSON
// shows it under styles.fill.classification (CHOROPLETH) or
// styles.icon.classification (GRADUATED).
type Classes struct {
	Attribute  string    `json:"attribute"` // the name the features carry
	Method     string    `json:"method"`
	Breaks     []float64 `json:"breaks"` // class i is [breaks[i], breaks[i+1]), the last one closed
	Counts     []int64   `json:"counts"`
	Colors     []int     `json:"colors,omitempty"`
	Min        *float64  `json:"min"`
	Max        *float64  `json:"max"`
	Classified int64     `json:"classified"`
	Nulls      int64     `json:"nulls"`
	Outside    int64     `json:"outside"`
	// Result places a value in its class.
	Result *classify.Result `json:"-"`
}

// Classing returns the options a layer is classed by (the fill's for
// CHOROPLETH, the icon's for GRADUATED, else whichever names an
// attribute), or nil when it is not classed.
func Classing(l *mapcommons.Layer) *mapcommons.Classing {
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

// Classifier computes the classes of classed layers over their datasets'
// current values, and keeps them by dataset version and options, so that
// a layer is classified once per change of its data. Callers that need a
// classification another is computing wait for it rather than compute it
// again (a popular map opened by many clients right after its data
// changed costs one classification, not one per client).
type Classifier struct {
	features mapcommons.FeatureService
	cache    classCache
}

// NewClassifier returns a classifier reading values from features.
func NewClassifier(features mapcommons.FeatureService) *Classifier {
	return &Classifier{features: features}
}

// Classify returns the classes of l over ds's values, coloured as the
// layer asks (Colors); nil when the layer is not classed or its dataset
// (nil: missing) or attribute is missing or not numeric. It does not check
// that the caller may read the dataset: that is the face's to do.
func (c *Classifier) Classify(ctx context.Context, l *mapcommons.Layer, ds *mapcommons.Dataset) (*Classes, error) {
	cl := Classing(l)
	if cl == nil || ds == nil {
		return nil, nil
	}
	// The attribute as the layer's features find it (its name, or else its
	// original name); the classes say the name the features carry.
	col := mapcommons.AttrIndex(ds.Attributes, cl.SelectedAttribute)
	if col < 0 || !ds.Attributes[col].Type.Numeric() {
		return nil, nil
	}
	method, err := classify.ParseMethod(cl.ClassificationType)
	if err != nil {
		return nil, err
	}
	opt := classify.Options{Method: method, Classes: cl.Categories, Breaks: cl.ClassificationBreaks, Range: cl.Range, Critical: cl.CriticalValue}
	optKey, _ := json.Marshal(cacheOptions(opt))
	key := strconv.FormatInt(ds.ID, 10) + "/" + strconv.FormatInt(ds.Version, 10) + "/" + strconv.Itoa(col) + "/" + string(optKey)
	doc, err := c.cache.do(ctx, key, func() (*Classes, error) {
		values := make([]float64, 0, ds.FeatureCount)
		typ := ds.Attributes[col].Type
		err := c.features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1, Lazy: true}, func(f *mapcommons.Feature) error {
			values = append(values, NumberAt(f, col, typ))
			return nil
		})
		if err != nil {
			return nil, err
		}
		res, err := classify.Classify(values, opt)
		if err != nil {
			return nil, err
		}
		doc := &Classes{Attribute: ds.Attributes[col].Name, Method: string(res.Method), Breaks: res.Breaks, Counts: res.Counts,
			Classified: res.Classified, Nulls: res.Nulls, Outside: res.Outside, Result: res}
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
	out.Colors = Colors(l, len(doc.Counts))
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

// Colors gives each of n classes a colour: the layer's list when it has
// one per class, else a ramp from its first colour (or grey) to white
// darkening by class.
func Colors(l *mapcommons.Layer, n int) []int {
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

// NumberAt reads numeric attribute col (of type t) of a feature, from its
// Row when it was read lazily; NaN for null.
func NumberAt(f *mapcommons.Feature, col int, t mapcommons.AttrType) float64 {
	switch {
	case f.Row == nil:
		return NumberOf(f.Values[col])
	case f.Row.IsNull(col):
		return math.NaN()
	case t == mapcommons.AttrInteger:
		return float64(f.Row.Int(col))
	}
	return f.Row.Float(col)
}

// NumberOf reads a numeric attribute value; NaN for null or anything else.
func NumberOf(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return math.NaN()
}

// classCache keeps classifications by key (Classify's: the dataset's
// version, the attribute and the options).
type classCache struct {
	mu       sync.Mutex
	m        map[string]*Classes
	inflight map[string]*classCall
}

// classCall is a classification being computed.
type classCall struct {
	done chan struct{} // closed when doc and err are set
	doc  *Classes
	err  error
}

// do returns the classification of key from the cache, from the caller
// computing it, or from compute (then cached). A waiter whose own context
// ends stops waiting; one whose computing caller failed (its client gone,
// say) computes it itself.
func (c *classCache) do(ctx context.Context, key string, compute func() (*Classes, error)) (*Classes, error) {
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
// A compute that panics (a server's recover answers its request) still
// hands over an error, so that its waiters compute for themselves and no
// later caller waits on it.
func (c *classCache) compute(key string, call *classCall, compute func() (*Classes, error)) {
	panicked := true
	defer func() {
		if panicked {
			call.doc, call.err = nil, errClassPanicked
		}
		c.mu.Lock()
		delete(c.inflight, key)
		if call.err == nil {
			if c.m == nil || len(c.m) > 1000 {
				c.m = map[string]*Classes{}
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
