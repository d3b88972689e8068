package mapcommons

import (
	"math"
	"slices"
)

// StatsAccumulator computes Stats over a stream of values in one pass
// (Welford's method for mean and variance). The median needs the values:
// they are kept while Keep is true; a store that cannot afford that clears
// Keep and supplies the median itself.
type StatsAccumulator struct {
	Keep   bool
	n      int64
	min    float64
	max    float64
	mean   float64
	m2     float64
	values []float64
	median *float64
}

// NewStatsAccumulator returns an accumulator that keeps values for the median.
func NewStatsAccumulator() *StatsAccumulator { return &StatsAccumulator{Keep: true} }

// Add adds one value; non-finite values are ignored.
func (a *StatsAccumulator) Add(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	a.n++
	if a.n == 1 {
		a.min, a.max = v, v
	} else {
		a.min, a.max = math.Min(a.min, v), math.Max(a.max, v)
	}
	d := v - a.mean
	a.mean += d / float64(a.n)
	a.m2 += d * (v - a.mean)
	if a.Keep {
		a.values = append(a.values, v)
	}
}

// Drop stops keeping values and frees those kept.
func (a *StatsAccumulator) Drop() {
	a.Keep = false
	a.values = nil
}

// SetMedian supplies the median computed elsewhere after Drop.
func (a *StatsAccumulator) SetMedian(m float64) { a.median = &m }

// Count is the number of values added.
func (a *StatsAccumulator) Count() int64 { return a.n }

// Kept is the number of values held for the median.
func (a *StatsAccumulator) Kept() int { return len(a.values) }

// Result returns the statistics; ok is false when no value was added. The
// median is computed from the kept values, or is NaN when they were dropped.
// Variance and standard deviation are of the population (divided by n).
func (a *StatsAccumulator) Result() (s Stats, ok bool) {
	if a.n == 0 {
		return Stats{}, false
	}
	s = Stats{Min: a.min, Max: a.max, Mean: a.mean, Variance: a.m2 / float64(a.n), Median: math.NaN()}
	s.Stdev = math.Sqrt(s.Variance)
	if a.median != nil {
		s.Median = *a.median
	} else if a.Keep && int64(len(a.values)) == a.n {
		s.Median = Median(a.values)
	}
	return s, true
}

// Median returns the median of v (the mean of the two middle values when
// their count is even), reordering v. NaN for an empty slice.
func Median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
