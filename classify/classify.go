// Package classify computes the classes of a classed map layer
// (CHOROPLETH or GRADUATED): the class breaks of a numeric attribute by one
// of the classification methods of the original service, how many
// features fall in each class, and the named colour ramps the classes are
// drawn with. Everything here is a pure function of its arguments.
//
// # Classes
//
// A classification is a sorted list of breaks b[0] < b[1] < ... < b[n];
// class i holds the values v with b[i] <= v < b[i+1], and the last class
// also holds b[n] (it is closed). Breaks are always finite and strictly
// increasing, with one exception: when every classified value is the same
// number v, every method but Manual gives a single class of zero width,
// breaks [v, v], holding them all.
//
// A method may give fewer classes than asked for: when there are fewer
// distinct values than classes, or when ties or the position of the data
// would make two breaks equal (a class of zero width) or put a break
// outside the data. Such breaks are dropped rather than kept as empty
// classes of zero width, so len(Result.Counts) may be less than
// Options.Classes; callers colour len(Result.Counts) classes.
//
// For every method but Critical Value and Manual the first break is the
// smallest classified value (Result.Min) and the last break the largest
// (Result.Max). Quantile, Max Breaks and Natural Breaks never give a class
// that holds no value; Equal Interval, Standard Deviation, Critical Value
// and Manual may.
//
// # Nulls, Range and counting
//
// NaN and ±Inf are nulls (callers pass NaN for a null or non-numeric
// attribute value): they are counted in Result.Nulls and take no part in
// the classification. With Options.Range set, only values v with
// Range[0] <= v <= Range[1] are classified, the others counted in
// Result.Outside, and the breaks are computed from the values in range
// alone (Range filters: Equal Interval divides [Min, Max] of the values in
// range, not the Range itself). Manual also counts as Outside the values below its first break or
// above its last. Counting is exact for every method:
//
//	sum(Counts) == Classified
//	Classified + Nulls + Outside == len(values)
//
// When no value is classified (no values, all null or all outside) the
// Result has nil Breaks and Counts, zero Min and Max, and no error.
package classify

import (
	"math"
	"slices"
	"sort"
	"strings"

	"mapcommons"
)

// Method is a classification method. Its values are the canonical names
// below, the ones the API shows; ParseMethod reads the others.
type Method string

// The classification methods.
const (
	// EqualInterval divides [Min, Max] into Classes classes of equal width
	// (Min + (Max-Min)·i/Classes, computed without overflow). It is the
	// default.
	EqualInterval Method = "Equal Interval"
	// Quantile puts as nearly equal numbers of values in every class as
	// ties allow: break i goes where i·n/Classes of the n values lie below
	// it. Each break is the smallest value of the class above it, except
	// that a break that would be Max itself (a last class of only the
	// largest value) is the midpoint between Max and the value below it,
	// since the last class is closed and a break at Max would make a class
	// of zero width. Ties are
	// never split: a break that would fall inside a run of equal values
	// moves to the nearer end of the run, and breaks that move onto the
	// same place collapse, giving fewer classes.
	Quantile Method = "Quantile"
	// StdDev makes classes one population standard deviation wide, centred
	// on the mean: with an odd number of classes the middle one is
	// [mean-sd/2, mean+sd/2), with an even number there is a break at the
	// mean. The first and last classes reach out to Min and Max however
	// far they are; inner breaks that fall at or outside Min or Max are
	// dropped, giving fewer classes. The original service's name was
	// "St Deviation"; both are read.
	StdDev Method = "Standard Deviation"
	// MaxBreaks puts the Classes-1 breaks in the largest gaps between
	// consecutive distinct values, each at the midpoint of its gap (the
	// original service put them at the gap's upper value), the first break
	// at Min and the last at Max. Of gaps of equal width the lower ones are
	// taken first.
	MaxBreaks Method = "Max Breaks"
	// NaturalBreaks is Jenks' optimisation: the partition of the sorted
	// values into Classes classes with the least sum of squared deviations
	// from the class means. Breaks are placed as for Quantile (the smallest
	// value of the class above, or a midpoint before a last class of only
	// Max). It is computed exactly, by Fisher's dynamic programme over the
	// distinct values weighted by their counts, whenever there are at most
	// JenksSegments distinct values. With more, the sorted distinct values
	// are first grouped into at most JenksSegments consecutive segments,
	// cut wherever an equal-count bin (JenksSegments/2 of them) or an
	// equal-width bin of [Min, Max] (JenksSegments/2 of them) starts, and
	// the result is the exact optimum among the partitions whose breaks
	// fall between segments. The programme is evaluated with the
	// divide-and-conquer optimisation that the sum of squares allows
	// (O(Classes·m·log m) for m segments instead of O(Classes·m²)); the
	// result is the same optimum. "Jenks" is read as this method.
	NaturalBreaks Method = "Natural Breaks"
	// CriticalValue makes classes diverging around a critical value c
	// (Options.Critical, by default the mean): Classes classes of equal
	// width spanning [c-d, c+d], where d is the distance from c to the
	// farther of Min and Max, half of them below c and half above (with an
	// odd number the middle class is centred on c). The breaks are
	// symmetric around c, so the first break may be below Min or the last
	// above Max, and classes on the side nearer c (all of one side, when c
	// is beyond the data) may hold no value. In the unlikely case that c±d
	// overflows float64, the outer break is Min or Max instead.
	CriticalValue Method = "Critical Value"
	// Manual takes the breaks from Options.Breaks (at least two, finite,
	// strictly ascending; len(Breaks)-1 classes; Options.Classes is
	// ignored). Values below the first break or above the last are counted
	// as Outside; classes may hold no value. All-equal values are not
	// special: the breaks are the caller's.
	Manual Method = "Manual"
)

// MaxClasses is the largest number of classes a classification may ask for
// (Options.Classes, or len(Options.Breaks)-1 for Manual).
const MaxClasses = 32

// JenksSegments is the number of distinct values up to which NaturalBreaks
// is exact; above it, the number of segments it optimises over.
const JenksSegments = 1 << 15

// methods are the methods in the order error messages list them.
var methods = []Method{EqualInterval, Quantile, StdDev, MaxBreaks, NaturalBreaks, CriticalValue, Manual}

// methodNames maps the folded spellings ParseMethod reads to their methods.
var methodNames = map[string]Method{
	"equalinterval":      EqualInterval,
	"equalintervals":     EqualInterval,
	"quantile":           Quantile,
	"quantiles":          Quantile,
	"standarddeviation":  StdDev,
	"standarddeviations": StdDev,
	"stdeviation":        StdDev,
	"stddeviation":       StdDev,
	"standarddev":        StdDev,
	"stddev":             StdDev,
	"stdev":              StdDev,
	"maxbreaks":          MaxBreaks,
	"maximumbreaks":      MaxBreaks,
	"naturalbreaks":      NaturalBreaks,
	"jenks":              NaturalBreaks,
	"jenksnaturalbreaks": NaturalBreaks,
	"criticalvalue":      CriticalValue,
	"critical":           CriticalValue,
	"manual":             Manual,
}

// ParseMethod reads a classification method name: "" is EqualInterval;
// otherwise the canonical names and their usual variants, ignoring case,
// spaces, underscores, hyphens and dots ("equal_interval", "QUANTILE",
// "St. Deviation", "stdev", "max-breaks", "jenks", "critical"...). An
// unknown name is an EINVALID error listing the accepted names.
func ParseMethod(s string) (Method, error) {
	key := fold(s)
	if key == "" {
		return EqualInterval, nil
	}
	if m, ok := methodNames[key]; ok {
		return m, nil
	}
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = string(m)
	}
	return "", mapcommons.Errorf(mapcommons.EINVALID,
		"unknown classification type %q: use one of %s (also read: St Deviation, Jenks)", clip(s), strings.Join(names, ", "))
}

// Options are the options of a classification. Callers use their JSON
// encoding as a cache key, so they keep the default encoding.
type Options struct {
	// Method is the method, any spelling ParseMethod reads ("" is
	// EqualInterval).
	Method Method
	// Classes is the number of classes, 1 to MaxClasses; 0 means
	// mapcommons.DefaultCategories. Ignored by Manual.
	Classes int
	// Breaks are the breaks of Manual, ignored by the other methods.
	Breaks []float64
	// Range, when set, limits the classification to the values within
	// [Range[0], Range[1]] (finite, Range[0] <= Range[1]); the others are
	// counted as Outside.
	Range *[2]float64
	// Critical is the critical value of CriticalValue (nil: the mean of the
	// classified values), ignored by the other methods.
	Critical *float64
}

// Result is a classification.
type Result struct {
	// Method is the canonical name of the method.
	Method Method
	// Breaks are the class breaks, len(Counts)+1 of them: class i is
	// [Breaks[i], Breaks[i+1]), the last class closed. Nil when no value
	// is classified.
	Breaks []float64
	// Counts are the numbers of values in each class; nil when no value is
	// classified.
	Counts []int64
	// Min and Max are the smallest and largest classified values (0 when
	// none is).
	Min, Max float64
	// Classified is the number of values in a class, the sum of Counts.
	Classified int64
	// Nulls is the number of NaN and ±Inf values.
	Nulls int64
	// Outside is the number of finite values outside Options.Range, or
	// outside the breaks of Manual.
	Outside int64

	// ranged and lo, hi are Options.Range, which Class applies too.
	ranged bool
	lo, hi float64
}

// Class returns the index of the class of v, or -1 when v is in none: NaN
// or ±Inf, outside the Options.Range the Result was computed with, below
// the first break or above the last, or when the Result has no classes.
// Class(v) for each of the values classified agrees with Counts.
func (r *Result) Class(v float64) int {
	if r == nil || math.IsNaN(v) || math.IsInf(v, 0) || r.ranged && (v < r.lo || v > r.hi) {
		return -1
	}
	return classOf(r.Breaks, v)
}

// classOf is the class of v under breaks b, or -1.
func classOf(b []float64, v float64) int {
	n := len(b) - 1
	if n < 1 || !(v >= b[0] && v <= b[n]) {
		return -1
	}
	// The first class whose upper break is above v; v == b[n] is in the
	// last class.
	lo, hi := 0, n-1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if b[mid+1] > v {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// Classify classes values by opt. values is not modified. The error, for
// invalid options only, is an EINVALID *mapcommons.Error.
func Classify(values []float64, opt Options) (*Result, error) {
	m, err := ParseMethod(string(opt.Method))
	if err != nil {
		return nil, err
	}
	k := opt.Classes
	var manual []float64
	if m == Manual {
		if manual, err = manualBreaks(opt.Breaks); err != nil {
			return nil, err
		}
	} else {
		if k == 0 {
			k = mapcommons.DefaultCategories
		}
		if k < 1 || k > MaxClasses {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "categories must be from 1 to %d, not %d", MaxClasses, k)
		}
	}
	r := &Result{Method: m}
	if rg := opt.Range; rg != nil {
		if !finite(rg[0]) || !finite(rg[1]) {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "range must be two finite numbers")
		}
		if rg[0] > rg[1] {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "range [%v, %v] is reversed: its first number must not exceed its second", rg[0], rg[1])
		}
		r.ranged, r.lo, r.hi = true, rg[0], rg[1]
	}
	if m == CriticalValue && opt.Critical != nil && !finite(*opt.Critical) {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "the critical value must be a finite number")
	}

	// The values classified, a copy of our own to sort.
	xs := make([]float64, 0, len(values))
	lo, hi := math.Inf(-1), math.Inf(1)
	if r.ranged {
		lo, hi = r.lo, r.hi
	}
	if manual != nil {
		lo, hi = max(lo, manual[0]), min(hi, manual[len(manual)-1])
	}
	for _, v := range values {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			r.Nulls++
		case v < lo || v > hi:
			r.Outside++
		default:
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return r, nil
	}
	mn, mx := xs[0], xs[0]
	for _, v := range xs[1:] {
		mn, mx = min(mn, v), max(mx, v)
	}
	r.Min, r.Max = mn, mx

	sorted := false
	switch {
	case m == Manual:
		r.Breaks = manual
	case mn == mx:
		r.Breaks = []float64{mn, mx}
	case m == EqualInterval:
		r.Breaks = assemble(mn, mx, equalInterval(mn, mx, k))
	case m == StdDev:
		r.Breaks = assemble(mn, mx, stdDev(xs, mn, mx, k))
	case m == CriticalValue:
		c := 0.0
		if opt.Critical != nil {
			c = *opt.Critical
		} else {
			c, _ = meanSD(xs, mn, mx)
		}
		b := criticalValue(c, mn, mx, k)
		first, last := b[0], b[len(b)-1]
		if !(first <= mn) || math.IsInf(first, 0) {
			first = mn
		}
		if !(last >= mx) || math.IsInf(last, 0) {
			last = mx
		}
		r.Breaks = assemble(first, last, b[1:len(b)-1])
	default:
		slices.Sort(xs)
		sorted = true
		switch m {
		case Quantile:
			r.Breaks = assemble(mn, mx, quantile(xs, k))
		case MaxBreaks:
			r.Breaks = assemble(mn, mx, maxBreaks(xs, k))
		case NaturalBreaks:
			r.Breaks = assemble(mn, mx, naturalBreaks(xs, k, JenksSegments))
		}
	}
	r.count(xs, sorted)
	return r, nil
}

// count fills Counts and Classified from the values xs (in breaks' range
// but for a bug, which would count as Outside).
func (r *Result) count(xs []float64, sorted bool) {
	n := len(r.Breaks) - 1
	r.Counts = make([]int64, n)
	if sorted {
		// The number of values below each break, by binary search.
		below := func(b float64) int { return sort.SearchFloat64s(xs, b) }
		start := below(r.Breaks[0])
		prev := start
		for i := 0; i < n-1; i++ {
			next := below(r.Breaks[i+1])
			r.Counts[i] = int64(next - prev)
			prev = next
		}
		end := sort.Search(len(xs), func(i int) bool { return xs[i] > r.Breaks[n] })
		r.Counts[n-1] = int64(end - prev)
		r.Classified = int64(end - start)
	} else {
		for _, v := range xs {
			if c := classOf(r.Breaks, v); c >= 0 {
				r.Counts[c]++
				r.Classified++
			}
		}
	}
	r.Outside += int64(len(xs)) - r.Classified
}

// manualBreaks checks the breaks of a Manual classification and returns a
// copy of them.
func manualBreaks(b []float64) ([]float64, error) {
	if len(b) < 2 {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "Manual classification needs at least two breaks, not %d", len(b))
	}
	if len(b)-1 > MaxClasses {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "Manual classification takes at most %d breaks (%d categories), not %d", MaxClasses+1, MaxClasses, len(b))
	}
	for i, v := range b {
		if !finite(v) {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "classification break %d is not a finite number", i+1)
		}
		if i > 0 && !(v > b[i-1]) {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "classification breaks must be strictly ascending: %v follows %v", v, b[i-1])
		}
	}
	return slices.Clone(b), nil
}

// assemble returns the breaks first, the inner breaks that are strictly
// above the previous one kept and strictly below last (NaN and infinities
// are dropped too), and last. first < last.
func assemble(first, last float64, inner []float64) []float64 {
	out := make([]float64, 1, len(inner)+2)
	out[0] = first
	for _, b := range inner {
		if b > out[len(out)-1] && b < last {
			out = append(out, b)
		}
	}
	return append(out, last)
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// split returns the break between the consecutive distinct sorted values
// lo < hi in a method whose breaks are the smallest value of the class
// above (Quantile, NaturalBreaks): hi, unless hi is the largest value mx,
// where it is the midpoint, because the last class is closed and a break
// at mx would give it zero width.
func split(lo, hi, mx float64) float64 {
	if hi < mx {
		return hi
	}
	return midpoint(lo, hi)
}

// midpoint returns a number m with lo < m <= hi, halfway between lo < hi
// as nearly as floating point allows (hi when they are adjacent), without
// overflow.
func midpoint(lo, hi float64) float64 {
	m := lo/2 + hi/2
	if d := hi - lo; !math.IsInf(d, 0) {
		m = lo + d/2
	}
	if !(m > lo) || m > hi {
		return hi
	}
	return m
}

// equalInterval returns the k-1 inner breaks of k classes of equal width
// spanning [mn, mx].
func equalInterval(mn, mx float64, k int) []float64 {
	span, fk := mx-mn, float64(k)
	inner := make([]float64, 0, k-1)
	for i := 1; i < k; i++ {
		fi := float64(i)
		var b float64
		switch {
		case math.IsInf(span, 0): // the span overflows: blend the ends.
			t := fi / fk
			b = mn*(1-t) + mx*t
		case span < math.MaxFloat64/fk: // multiplying first keeps integers exact.
			b = mn + span*fi/fk
		default:
			b = mn + span/fk*fi
		}
		inner = append(inner, b)
	}
	return inner
}

// meanSD returns the mean and the population standard deviation of xs,
// whose extremes are mn and mx, without overflow or underflow for any
// finite values: out-of-scale values are scaled by a power of two first.
func meanSD(xs []float64, mn, mx float64) (mean, sd float64) {
	_, e := math.Frexp(max(math.Abs(mn), math.Abs(mx)))
	if e > -400 && e < 400 {
		e = 0
	}
	n := float64(len(xs))
	var sum float64
	for _, v := range xs {
		sum += math.Ldexp(v, -e)
	}
	ms := sum / n
	var ss float64
	for _, v := range xs {
		d := math.Ldexp(v, -e) - ms
		ss += d * d
	}
	mean = math.Ldexp(ms, e)
	mean = min(max(mean, mn), mx)
	sd = math.Ldexp(math.Sqrt(ss/n), e)
	return mean, sd
}

// stdDev returns the inner breaks of k classes one standard deviation wide
// centred on the mean; assemble drops those outside (mn, mx).
func stdDev(xs []float64, mn, mx float64, k int) []float64 {
	mean, sd := meanSD(xs, mn, mx)
	if !(sd > 0) || math.IsInf(sd, 0) {
		return nil
	}
	inner := make([]float64, 0, k-1)
	for i := 1; i < k; i++ {
		inner = append(inner, mean+(float64(i)-float64(k)/2)*sd)
	}
	return inner
}

// criticalValue returns the k+1 breaks of k classes of equal width
// symmetric around c reaching to the farther of mn and mx; the outer ones
// may overflow to infinity, which the caller replaces with mn or mx.
func criticalValue(c, mn, mx float64, k int) []float64 {
	// Work scaled by a power of two so that c-d and c+d cannot overflow.
	_, e := math.Frexp(max(math.Abs(c), math.Abs(mn), math.Abs(mx)))
	cs, mns, mxs := math.Ldexp(c, -e), math.Ldexp(mn, -e), math.Ldexp(mx, -e)
	d := max(cs-mns, mxs-cs)
	w := 2 * d / float64(k)
	b := make([]float64, k+1)
	for i := range b {
		b[i] = math.Ldexp(cs+(float64(i)-float64(k)/2)*w, e)
	}
	return b
}

// quantile returns the inner breaks of k quantile classes of the sorted
// values xs (at least two distinct).
func quantile(xs []float64, k int) []float64 {
	n := len(xs)
	mx := xs[n-1]
	inner := make([]float64, 0, k-1)
	for i := 1; i < k; i++ {
		t := float64(i) * float64(n) / float64(k) // the ideal number of values below the break
		p := min(int(t), n-1)
		v := xs[p]
		// The run of values equal to v is xs[a:b]; a break can go before it
		// (a > 0) or after it (b < n), whichever is nearer t.
		a := sort.SearchFloat64s(xs[:p], v)
		b := p + sort.Search(n-p, func(j int) bool { return xs[p+j] > v })
		j := b
		if a > 0 && (b >= n || t-float64(a) <= float64(b)-t) {
			j = a
		}
		if j > 0 && j < n {
			inner = append(inner, split(xs[j-1], xs[j], mx))
		}
	}
	return inner
}

// maxBreaks returns the inner breaks of k classes of the sorted values xs
// at the midpoints of the k-1 largest gaps between distinct values.
func maxBreaks(xs []float64, k int) []float64 {
	if k < 2 {
		return nil
	}
	type gap struct {
		width, lo, hi float64
	}
	// top holds the widest gaps seen so far, widest first; a gap replaces
	// the narrowest only when strictly wider, so of equal gaps the lower
	// ones are kept.
	top := make([]gap, 0, k)
	for i := 1; i < len(xs); i++ {
		lo, hi := xs[i-1], xs[i]
		if lo == hi {
			continue
		}
		g := gap{hi - lo, lo, hi} // +Inf when it overflows: still the widest
		if len(top) == k-1 && !(g.width > top[len(top)-1].width) {
			continue
		}
		at := len(top)
		for at > 0 && g.width > top[at-1].width {
			at--
		}
		if len(top) < k-1 {
			top = append(top, gap{})
		}
		copy(top[at+1:], top[at:len(top)-1])
		top[at] = g
	}
	inner := make([]float64, 0, len(top))
	for _, g := range top {
		inner = append(inner, midpoint(g.lo, g.hi))
	}
	slices.Sort(inner)
	return inner
}
