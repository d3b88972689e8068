package mapcommons

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"mapcommons/format/wkb"
)

// What a dataset knows about its features as a whole — the count, the
// extent, the kinds of geometry, the statistics of each numeric attribute —
// and the checks every feature passes, are computed here, feature by
// feature, so that every store computes them alike. A store feeds a
// SummaryBuilder while it writes; only the median may come from the store,
// which can select it without holding the values (MedianOfKeys).

// Summary is what a dataset knows about its features as a whole.
type Summary struct {
	Count         int64            `json:"count"`
	Extent        *wkb.Rect        `json:"extent"` // of the vertices; nil without geometry
	GeometryTypes []string         `json:"geometry_types"`
	GeometryMask  uint32           `json:"geometry_mask"` // bit 1<<wkb type of each type present
	Stats         map[string]Stats `json:"stats"`         // by numeric attribute with a value
}

// Apply copies the summary onto ds.
func (s *Summary) Apply(ds *Dataset) {
	ds.FeatureCount = s.Count
	ds.Extent = s.Extent
	ds.GeometryTypes = s.GeometryTypes
	ds.GeometryMask = s.GeometryMask
	ds.Stats = s.Stats
}

// geometryKinds are the names of GeometryTypes, in their order.
var geometryKinds = [3]string{"point", "line", "area"}

// SummaryBuilder accumulates the Summary of features added one by one,
// checking each. Its memory does not grow with the features unless it
// keeps the numeric values for the medians (NewSummaryBuilder's keep).
type SummaryBuilder struct {
	attrs  []Attribute
	n      int64
	bounds wkb.Rect
	kinds  [3]bool
	mask   uint32
	acc    []*StatsAccumulator // by attribute; nil for a non-numeric one
}

// NewSummaryBuilder starts the summary of features with attributes attrs.
// With keep, it holds the numeric values to compute the medians itself;
// without, Summary asks the store for them.
func NewSummaryBuilder(attrs []Attribute, keep bool) *SummaryBuilder {
	b := &SummaryBuilder{attrs: attrs, bounds: wkb.EmptyRect, acc: make([]*StatsAccumulator, len(attrs))}
	for i, a := range attrs {
		if a.Type.Numeric() {
			b.acc[i] = NewStatsAccumulator()
			if !keep {
				b.acc[i].Drop()
			}
		}
	}
	return b
}

// Count is the number of features added.
func (b *SummaryBuilder) Count() int64 { return b.n }

// CheckValues checks that the values of a feature match the attributes:
// one value per attribute, each nil or of its attribute's Go type (int64,
// float64, bool, or string for strings and dates).
func (b *SummaryBuilder) CheckValues(values []any) error {
	if len(values) != len(b.attrs) {
		return fmt.Errorf("%d values for %d attributes", len(values), len(b.attrs))
	}
	for i, v := range values {
		if v == nil {
			continue
		}
		ok := false
		switch b.attrs[i].Type {
		case AttrInteger:
			_, ok = v.(int64)
		case AttrFloat:
			_, ok = v.(float64)
		case AttrBoolean:
			_, ok = v.(bool)
		default:
			_, ok = v.(string)
		}
		if !ok {
			return fmt.Errorf("attribute %q: %T is not %s", b.attrs[i].Name, v, goTypeName(b.attrs[i].Type))
		}
	}
	return nil
}

// goTypeName names the Go type of an attribute type's values.
func goTypeName(t AttrType) string {
	switch t {
	case AttrInteger:
		return "an integer"
	case AttrFloat:
		return "a float"
	case AttrBoolean:
		return "a boolean"
	}
	return "a string"
}

// CheckBounds refuses bounds with a coordinate that is not finite.
func CheckBounds(r wkb.Rect) error {
	if s := r.MinX + r.MinY + r.MaxX + r.MaxY; math.IsNaN(s) || math.IsInf(s, 0) {
		return Errorf(EINVALID, "non-finite coordinate")
	}
	return nil
}

// Add adds one feature whose values CheckValues accepted: its geometry
// (decoded; nil for none, or a point given by AddPoint instead) and its
// values.
func (b *SummaryBuilder) Add(g *wkb.Geom, values []any) error {
	if err := b.addGeom(g); err != nil {
		return err
	}
	b.addValues(values)
	return nil
}

// AddRow is Add with the values read from r, a row of b's attributes
// (copying features from a segment boxes no value).
func (b *SummaryBuilder) AddRow(g *wkb.Geom, r Row) error {
	if err := b.addGeom(g); err != nil {
		return err
	}
	b.addRowValues(r)
	return nil
}

// AddPointRow is AddPoint with the values read from r.
func (b *SummaryBuilder) AddPointRow(x, y float64, r Row) error {
	if err := b.addPoint(x, y); err != nil {
		return err
	}
	b.addRowValues(r)
	return nil
}

// addGeom adds a decoded geometry (nil: none) to the extent and kinds.
func (b *SummaryBuilder) addGeom(g *wkb.Geom) error {
	if g != nil {
		bounds, ok := g.Bounds()
		if ok {
			if err := CheckBounds(bounds); err != nil {
				return err
			}
			b.bounds = b.bounds.Extend(bounds)
		}
		b.addKinds(*g)
		b.mask |= 1 << g.Type
	}
	return nil
}

// AddPoint adds one feature whose geometry is the point x, y (the fast
// path for point datasets: no decoded geometry).
func (b *SummaryBuilder) AddPoint(x, y float64, values []any) error {
	if err := b.addPoint(x, y); err != nil {
		return err
	}
	b.addValues(values)
	return nil
}

func (b *SummaryBuilder) addPoint(x, y float64) error {
	r := wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}
	if err := CheckBounds(r); err != nil {
		return err
	}
	b.bounds = b.bounds.Extend(r)
	b.kinds[0] = true
	b.mask |= 1 << wkb.Point
	return nil
}

// addRowValues is addValues of a row.
func (b *SummaryBuilder) addRowValues(r Row) {
	b.n++
	for i, acc := range b.acc {
		if acc == nil || r.IsNull(i) {
			continue
		}
		switch b.attrs[i].Type {
		case AttrInteger:
			acc.Add(float64(r.Int(i)))
		case AttrFloat:
			acc.Add(r.Float(i))
		}
	}
}

// addValues counts a feature and adds its numeric values to the stats.
func (b *SummaryBuilder) addValues(values []any) {
	b.n++
	for i, acc := range b.acc {
		if acc == nil || i >= len(values) {
			continue
		}
		switch v := values[i].(type) {
		case int64:
			acc.Add(float64(v))
		case float64:
			acc.Add(v)
		}
	}
}

// addKinds notes the kinds of geometry of g (a collection's parts').
func (b *SummaryBuilder) addKinds(g wkb.Geom) {
	switch g.Type {
	case wkb.Point, wkb.MultiPoint:
		b.kinds[0] = true
	case wkb.LineString, wkb.MultiLineString:
		b.kinds[1] = true
	case wkb.Polygon, wkb.MultiPolygon:
		b.kinds[2] = true
	case wkb.GeometryCollection:
		for _, p := range g.Parts {
			b.addKinds(p)
		}
	}
}

// Summary is the summary of the features added. median gives the median
// of attribute i's n finite values when the builder did not keep them
// (nil when it did).
func (b *SummaryBuilder) Summary(median func(i int, n int64) (float64, error)) (*Summary, error) {
	s := &Summary{Count: b.n, GeometryTypes: []string{}, GeometryMask: b.mask, Stats: map[string]Stats{}}
	if !b.bounds.IsEmpty() {
		e := b.bounds
		s.Extent = &e
	}
	for i, k := range b.kinds {
		if k {
			s.GeometryTypes = append(s.GeometryTypes, geometryKinds[i])
		}
	}
	for i, acc := range b.acc {
		if acc == nil || acc.Count() == 0 {
			continue
		}
		if !acc.Keep && median != nil {
			m, err := median(i, acc.Count())
			if err != nil {
				return nil, err
			}
			acc.SetMedian(m)
		}
		st, _ := acc.Result()
		for _, v := range []*float64{&st.Min, &st.Max, &st.Mean, &st.Median, &st.Stdev, &st.Variance} {
			if math.IsNaN(*v) || math.IsInf(*v, 0) {
				*v = 0 // JSON has no such numbers; only reachable near the float limits
			}
		}
		s.Stats[b.attrs[i].Name] = st
	}
	return s, nil
}

// OrderKey maps a float to a uint64 that sorts as the float does.
func OrderKey(v float64) uint64 {
	u := math.Float64bits(v)
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

// fromOrderKey is the inverse of OrderKey.
func fromOrderKey(u uint64) float64 {
	if u>>63 == 1 {
		return math.Float64frombits(u &^ (1 << 63))
	}
	return math.Float64frombits(^u)
}

// histograms are MedianOfKeys's, reused: half a megabyte each (counts fit
// in 32 bits below 2³² values).
var histograms = sync.Pool{New: func() any { return new([2][1 << 16]uint32) }}

// medianSortMax is the most values MedianOfKeys selects from in memory
// (32 KiB of keys) rather than with histograms, which cost their half
// megabyte, cleared four times, whatever the count.
var medianSortMax int64 = 4096

// selectKey reorders keys so that keys[k] is the key of rank k, the keys
// before it no greater and those after no less (a quickselect, the pivot
// a median of three), and returns it.
func selectKey(keys []uint64, k int) uint64 {
	lo, hi := 0, len(keys)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// The median of three to keys[mid], the others as sentinels.
		if keys[mid] < keys[lo] {
			keys[mid], keys[lo] = keys[lo], keys[mid]
		}
		if keys[hi] < keys[lo] {
			keys[hi], keys[lo] = keys[lo], keys[hi]
		}
		if keys[hi] < keys[mid] {
			keys[hi], keys[mid] = keys[mid], keys[hi]
		}
		p := keys[mid]
		i, j := lo, hi
		for i <= j { // Hoare's partition
			for keys[i] < p {
				i++
			}
			for keys[j] > p {
				j--
			}
			if i <= j {
				keys[i], keys[j] = keys[j], keys[i]
				i++
				j--
			}
		}
		// keys[lo..j] <= p <= keys[i..hi], and keys[j+1..i-1] == p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return keys[k]
		}
	}
	return keys[k]
}

// MedianOfKeys selects the median of m values (the mean of the two middle
// ones when m is even, as Median computes it) without holding them: scan
// calls its function with the OrderKey of each value, and is called four
// times — a radix selection of the middle ranks, 16 bits a pass, in
// constant memory (two 65,536-entry histograms). m must be below 2³².
// Up to medianSortMax values, scan is called once and the middle keys
// selected in memory: the same keys, so the same median.
func MedianOfKeys(m int64, scan func(fn func(key uint64)) error) (float64, error) {
	if m == 0 {
		return math.NaN(), nil
	}
	rank := [2]int64{(m - 1) / 2, m / 2}
	if m <= medianSortMax {
		keys := make([]uint64, 0, m)
		seen := int64(0)
		err := scan(func(key uint64) {
			if seen < m {
				keys = append(keys, key)
			}
			seen++
		})
		if err != nil {
			return 0, err
		}
		if seen == m { // else the selection below, whatever it makes of it
			lo := selectKey(keys, int(rank[0]))
			if m%2 == 1 {
				return fromOrderKey(lo), nil
			}
			hi := slices.Min(keys[rank[1]:]) // keys[rank[0]+1:], all at least lo
			return (fromOrderKey(lo) + fromOrderKey(hi)) / 2, nil
		}
	}
	var prefix [2]uint64
	hist := histograms.Get().(*[2][1 << 16]uint32)
	defer histograms.Put(hist)
	for shift := 48; shift >= 0; shift -= 16 {
		clear(hist[:])
		var mask uint64
		if shift < 48 {
			mask = ^uint64(0) << (shift + 16)
		}
		same := prefix[0] == prefix[1]
		err := scan(func(key uint64) {
			d := key >> shift & 0xffff
			if key&mask == prefix[0] {
				hist[0][d]++
			}
			if !same && key&mask == prefix[1] {
				hist[1][d]++
			}
		})
		if err != nil {
			return 0, err
		}
		for k := range 2 {
			h := &hist[0]
			if !same {
				h = &hist[k]
			}
			for d, cnt := range h {
				if rank[k] < int64(cnt) {
					prefix[k] |= uint64(d) << shift
					break
				}
				rank[k] -= int64(cnt)
			}
		}
	}
	if m%2 == 1 {
		return fromOrderKey(prefix[0]), nil
	}
	return (fromOrderKey(prefix[0]) + fromOrderKey(prefix[1])) / 2, nil
}

// ExactSummaryMax is the number of features up to which a store
// summarizes a dataset exactly after an edit, reading every feature (a
// few milliseconds at most); above it, the store extends the old summary
// (ExtendSummary) until it next reads every feature.
const ExactSummaryMax = 20000

// ExtendSummary is the summary of base's features after a change that
// leaves count features and adds or rewrites those that delta summarizes
// (nil: none), without reading the others again: the count is exact; the
// extent, the geometry kinds and the statistics' minima and maxima are
// base's extended by delta's, so they may still cover features that are
// gone; the means, deviations and medians are base's. A store makes it
// exact again when it next reads every feature (a compaction, a rewrite).
func ExtendSummary(base, delta *Summary, count int64) *Summary {
	sum := &Summary{Count: count, Extent: base.Extent, GeometryMask: base.GeometryMask,
		GeometryTypes: base.GeometryTypes, Stats: map[string]Stats{}}
	for k, st := range base.Stats {
		sum.Stats[k] = st
	}
	if delta == nil {
		return sum
	}
	if delta.Extent != nil {
		e := *delta.Extent
		if sum.Extent != nil {
			e = sum.Extent.Extend(e)
		}
		sum.Extent = &e
	}
	sum.GeometryMask |= delta.GeometryMask
	kinds := map[string]bool{}
	for _, k := range append(slices.Clone(sum.GeometryTypes), delta.GeometryTypes...) {
		kinds[k] = true
	}
	sum.GeometryTypes = []string{}
	for _, k := range []string{"point", "line", "area"} {
		if kinds[k] {
			sum.GeometryTypes = append(sum.GeometryTypes, k)
		}
	}
	for k, st := range delta.Stats {
		if old, ok := sum.Stats[k]; ok {
			old.Min, old.Max = min(old.Min, st.Min), max(old.Max, st.Max)
			sum.Stats[k] = old
		} else {
			sum.Stats[k] = st
		}
	}
	return sum
}
