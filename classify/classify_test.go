package classify

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"mapcommons"
)

var nan = math.NaN()

func ptr[T any](v T) *T { return &v }

func seq(lo, hi int) []float64 {
	var out []float64
	for i := lo; i <= hi; i++ {
		out = append(out, float64(i))
	}
	return out
}

func TestParseMethod(t *testing.T) {
	for in, want := range map[string]Method{
		"": EqualInterval, "  ": EqualInterval, "Equal Interval": EqualInterval, "equal_interval": EqualInterval,
		"EQUAL-INTERVAL": EqualInterval, "equalinterval": EqualInterval, "Equal Intervals": EqualInterval,
		"Quantile": Quantile, "quantile": Quantile, "QUANTILES": Quantile,
		"St Deviation": StdDev, "St. Deviation": StdDev, "Standard Deviation": StdDev, "standard_deviation": StdDev,
		"stdev": StdDev, "StdDev": StdDev, "std-dev": StdDev,
		"Max Breaks": MaxBreaks, "max_breaks": MaxBreaks, "maximum breaks": MaxBreaks,
		"Natural Breaks": NaturalBreaks, "natural-breaks": NaturalBreaks, "Jenks": NaturalBreaks, "jenks": NaturalBreaks,
		"Critical Value": CriticalValue, "critical_value": CriticalValue, "critical": CriticalValue,
		"Manual": Manual, "MANUAL": Manual,
	} {
		got, err := ParseMethod(in)
		if err != nil || got != want {
			t.Errorf("ParseMethod(%q) = %q, %v; want %q", in, got, err, want)
		}
		// Canonical names read back as themselves.
		if again, err := ParseMethod(string(got)); err != nil || again != got {
			t.Errorf("ParseMethod(%q) = %q, %v", got, again, err)
		}
	}
	for _, in := range []string{"Guess", "equal", "quantilee", "natural", "Manual!", strings.Repeat("x", 500)} {
		m, err := ParseMethod(in)
		if err == nil || m != "" || mapcommons.ErrorCode(err) != mapcommons.EINVALID {
			t.Fatalf("ParseMethod(%q) = %q, %v; want an EINVALID error", in, m, err)
		}
		msg := mapcommons.ErrorMessage(err)
		for _, name := range methods {
			if !strings.Contains(msg, string(name)) {
				t.Errorf("error %q does not list %q", msg, name)
			}
		}
		if len(msg) > 400 {
			t.Errorf("error message of %d bytes", len(msg))
		}
	}
}

// tc is one hand-computed classification.
type tc struct {
	name   string
	values []float64
	opt    Options
	breaks []float64
	counts []int64
}

func runCases(t *testing.T, cases []tc) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Classify(c.values, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			if !floatsEqual(r.Breaks, c.breaks) || !slices.Equal(r.Counts, c.counts) {
				t.Fatalf("breaks %v counts %v, want %v %v", r.Breaks, r.Counts, c.breaks, c.counts)
			}
			checkResult(t, c.values, c.opt, r, nil)
		})
	}
}

// floatsEqual compares exactly but for a last-place rounding.
func floatsEqual(a, b []float64) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && math.Abs(a[i]-b[i]) > 1e-12*math.Max(math.Abs(a[i]), math.Abs(b[i])) {
			return false
		}
	}
	return true
}

func TestEqualInterval(t *testing.T) {
	runCases(t, []tc{
		{"0to10", seq(0, 10), Options{}, []float64{0, 2, 4, 6, 8, 10}, []int64{2, 2, 2, 2, 3}},
		{"Named", seq(0, 10), Options{Method: "equal_interval", Classes: 5}, []float64{0, 2, 4, 6, 8, 10}, []int64{2, 2, 2, 2, 3}},
		{"Two", []float64{-3, 1, 5, 2}, Options{Classes: 2}, []float64{-3, 1, 5}, []int64{1, 3}},
		{"One", []float64{7, 3, 9}, Options{Classes: 1}, []float64{3, 9}, []int64{3}},
		{"Thirds", []float64{0, 1, 2, 3}, Options{Classes: 3}, []float64{0, 1, 2, 3}, []int64{1, 1, 2}},
		{"Gap", []float64{0, 0.5, 9.5, 10}, Options{Classes: 4}, []float64{0, 2.5, 5, 7.5, 10}, []int64{2, 0, 0, 2}},
		{"Fraction", []float64{1, 2}, Options{Classes: 5}, []float64{1, 1.2, 1.4, 1.6, 1.8, 2}, []int64{1, 0, 0, 0, 1}},
		{"Huge", []float64{-math.MaxFloat64, math.MaxFloat64}, Options{Classes: 2}, []float64{-math.MaxFloat64, 0, math.MaxFloat64}, []int64{1, 1}},
	})
}

func TestQuantile(t *testing.T) {
	q := func(k int) Options { return Options{Method: Quantile, Classes: k} }
	runCases(t, []tc{
		{"1to10", seq(1, 10), q(5), []float64{1, 3, 5, 7, 9, 10}, []int64{2, 2, 2, 2, 2}},
		{"Unsorted", []float64{9, 2, 7, 4, 1, 10, 3, 6, 5, 8}, q(5), []float64{1, 3, 5, 7, 9, 10}, []int64{2, 2, 2, 2, 2}},
		// The last class holds only the largest value: its break is a midpoint.
		{"Three", []float64{10, 20, 35}, q(3), []float64{10, 20, 27.5, 35}, []int64{1, 1, 1}},
		// 7/3 values a class: the breaks go to the nearest places, 2 and 5.
		{"Seven", seq(1, 7), q(3), []float64{1, 3, 6, 7}, []int64{2, 3, 2}},
		// Ties are not split: the ideal break (4 below) falls in the run of
		// 2s, whose end (5 below) is nearer than its start (1 below).
		{"TiesMove", []float64{1, 2, 2, 2, 2, 3, 4, 5}, q(2), []float64{1, 3, 5}, []int64{5, 3}},
		// All four breaks fall on the same place: two classes, not five.
		{"TiesCollapse", []float64{1, 1, 1, 1, 2}, q(5), []float64{1, 1.5, 2}, []int64{4, 1}},
		{"FewerDistinct", []float64{5, 5, 6, 6, 7, 7}, q(5), []float64{5, 6, 6.5, 7}, []int64{2, 2, 2}},
		{"Skewed", []float64{1, 1, 1, 1, 1, 1, 2, 3, 4, 100}, q(2), []float64{1, 2, 100}, []int64{6, 4}},
	})
}

func TestStdDev(t *testing.T) {
	// Mean 5, population standard deviation 2.
	v := []float64{2, 4, 4, 4, 5, 5, 7, 9}
	sd := func(k int) Options { return Options{Method: StdDev, Classes: k} }
	runCases(t, []tc{
		// Breaks at 5±1 and 5±3: 2, the smallest value, starts the first class anyway.
		{"Five", v, sd(5), []float64{2, 4, 6, 8, 9}, []int64{1, 5, 1, 1}},
		{"Four", v, sd(4), []float64{2, 3, 5, 7, 9}, []int64{1, 3, 2, 2}},
		{"Three", v, sd(3), []float64{2, 4, 6, 9}, []int64{1, 5, 2}},
		{"Two", v, sd(2), []float64{2, 5, 9}, []int64{4, 4}},
		{"One", v, sd(1), []float64{2, 9}, []int64{8}},
		{"StDeviationName", v, Options{Method: "St Deviation", Classes: 4}, []float64{2, 3, 5, 7, 9}, []int64{1, 3, 2, 2}},
	})
	// Mean 0, sd sqrt(320.8): breaks at 0 and ±17.91...; the outer classes reach out to ±40.
	r, err := Classify([]float64{-1, -1, 1, 1, -1, 1, 1, -1, 40, -40}, sd(4))
	if err != nil {
		t.Fatal(err)
	}
	s := math.Sqrt((8 + 3200) / 10.0)
	if !floatsEqual(r.Breaks, []float64{-40, -s, 0, s, 40}) || !slices.Equal(r.Counts, []int64{1, 4, 4, 1}) {
		t.Fatalf("breaks %v counts %v", r.Breaks, r.Counts)
	}
}

func TestMaxBreaks(t *testing.T) {
	mb := func(k int) Options { return Options{Method: MaxBreaks, Classes: k} }
	runCases(t, []tc{
		// Gaps 1 1 7 1 9: the two widest are 11-20 and 3-10.
		{"Gaps", []float64{20, 1, 2, 3, 10, 11}, mb(3), []float64{1, 6.5, 15.5, 20}, []int64{3, 2, 1}},
		{"AllGaps", []float64{20, 1, 2, 3, 10, 11}, mb(6), []float64{1, 1.5, 2.5, 6.5, 10.5, 15.5, 20}, []int64{1, 1, 1, 1, 1, 1}},
		// Of equal gaps the lowest is taken first.
		{"EqualGaps", []float64{0, 1, 2, 3}, mb(2), []float64{0, 0.5, 3}, []int64{1, 3}},
		{"EqualGaps3", []float64{0, 1, 2, 3}, mb(3), []float64{0, 0.5, 1.5, 3}, []int64{1, 1, 2}},
		// Ties make no gaps; fewer distinct values than classes give fewer classes.
		{"Ties", []float64{1, 1, 2, 2, 2}, mb(5), []float64{1, 1.5, 2}, []int64{2, 3}},
		{"One", []float64{4, 1, 2}, mb(1), []float64{1, 4}, []int64{3}},
	})
}

func TestCriticalValue(t *testing.T) {
	cv := func(k int, c *float64) Options { return Options{Method: CriticalValue, Classes: k, Critical: c} }
	runCases(t, []tc{
		// Mean 5, equally far from both ends.
		{"MeanEven", []float64{0, 10}, cv(4, nil), []float64{0, 2.5, 5, 7.5, 10}, []int64{1, 0, 0, 1}},
		// Critical 2: the farther end is 10, 8 away; four classes 4 wide.
		{"Given", seq(0, 10), cv(4, ptr(2.0)), []float64{-6, -2, 2, 6, 10}, []int64{0, 2, 4, 5}},
		// Odd: the middle class is centred on the critical value.
		{"Odd", []float64{-1, 4}, cv(3, ptr(0.0)), []float64{-4, -4.0 / 3, 4.0 / 3, 4}, []int64{0, 1, 1}},
		{"MeanOdd", []float64{1, 2, 3, 4, 10}, cv(5, nil), []float64{-2, 0.4, 2.8, 5.2, 7.6, 10}, []int64{0, 2, 2, 0, 1}},
		// A critical value beyond the data: the upper half is empty.
		{"Beyond", []float64{0, 5, 10}, cv(2, ptr(20.0)), []float64{0, 20, 40}, []int64{3, 0}},
		{"One", []float64{0, 5, 10}, cv(1, ptr(4.0)), []float64{-2, 10}, []int64{3}},
	})
}

func TestManual(t *testing.T) {
	values := []float64{-5, 0, 5, 10, 15, 20, 25, nan, math.Inf(1)}
	opt := Options{Method: Manual, Breaks: []float64{0, 10, 20}, Classes: 7} // Classes is ignored
	r, err := Classify(values, opt)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Method: Manual, Breaks: []float64{0, 10, 20}, Counts: []int64{2, 3}, Min: 0, Max: 20, Classified: 5, Nulls: 2, Outside: 2}
	if fmt.Sprint(*r) != fmt.Sprint(want) {
		t.Fatalf("got %+v\nwant %+v", *r, want)
	}
	checkResult(t, values, opt, r, nil)
	opt.Breaks[0] = -100 // the Result has its own copy
	if r.Breaks[0] != 0 {
		t.Fatal("the breaks alias Options.Breaks")
	}
	// Manual classes may be empty; the minimum and maximum are of the values classified.
	runCases(t, []tc{
		{"Empty", []float64{1, 2, 3, 50}, Options{Method: Manual, Breaks: []float64{0, 10, 20, 30, 60}}, []float64{0, 10, 20, 30, 60}, []int64{3, 0, 0, 1}},
		{"AllEqual", []float64{4, 4, 4}, Options{Method: Manual, Breaks: []float64{0, 4, 8}}, []float64{0, 4, 8}, []int64{0, 3}},
		{"WithRange", seq(0, 10), Options{Method: Manual, Breaks: []float64{0, 5, 10}, Range: &[2]float64{3, 20}}, []float64{0, 5, 10}, []int64{2, 6}},
	})
	for _, b := range [][]float64{nil, {1}, {2, 1}, {1, 1}, {0, nan}, {math.Inf(-1), 0}, seq(0, MaxClasses+1)} {
		_, err := Classify(values, Options{Method: Manual, Breaks: b})
		if mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(mapcommons.ErrorMessage(err), "break") {
			t.Errorf("breaks %v: %v", b, err)
		}
	}
	if _, err := Classify(values, Options{Method: Manual, Breaks: seq(0, MaxClasses)}); err != nil {
		t.Errorf("%d classes: %v", MaxClasses, err)
	}
}

// TestNaturalBreaksReference checks Jenks against published results: the
// examples of the simple-statistics (jenks, ckmeans) and jenkspy test
// suites, given there as class limits or groups and here as the breaks our
// convention makes of the same classes.
func TestNaturalBreaksReference(t *testing.T) {
	nb := func(k int) Options { return Options{Method: NaturalBreaks, Classes: k} }
	// jenkspy tests/test_jenks.py: 4 classes with upper limits 416, 767, 1083
	// and 1424 (the groups 1..416, 583..767, 848..1083, 1223..1424).
	jenkspy := []float64{132, 915, 312, 1424, 1240, 1370, 113, 1028, 1078, 416,
		963, 359, 1422, 658, 73, 1326, 245, 848, 683, 255, 1223,
		253, 654, 736, 1079, 39, 583, 1367, 1237, 327, 1083, 328,
		951, 678, 927, 301, 96, 297, 179, 230, 767, 1248, 1, 37,
		1352, 1009, 663, 1283, 679, 230}
	runCases(t, []tc{
		// simple-statistics jenks: lower class limits [1, 7, 20] (max 20).
		{"SmallGaps", []float64{1, 2, 4, 5, 7, 9, 10, 20}, nb(3), []float64{1, 7, 15, 20}, []int64{4, 3, 1}},
		// Lower limits [2, 32, 100].
		{"LargeGaps", []float64{2, 32, 33, 34, 100}, nb(3), []float64{2, 32, 67, 100}, []int64{1, 3, 1}},
		// N points in N classes.
		{"NinN", []float64{9, 10, 11, 12, 13}, nb(5), []float64{9, 10, 11, 12, 12.5, 13}, []int64{1, 1, 1, 1, 1}},
		// simple-statistics ckmeans: [[-1,-1,-1,-1],[2,2,2],[4,5,6]].
		{"Ckmeans", []float64{-1, 2, -1, 2, 4, 5, 6, -1, 2, -1}, nb(3), []float64{-1, 2, 4, 6}, []int64{4, 3, 3}},
		{"Ckmeans2", []float64{0, 1, 2, 50, 100, 101, 103}, nb(3), []float64{0, 50, 100, 103}, []int64{3, 1, 3}},
		{"Ckmeans3", []float64{-3, 0, 4}, nb(2), []float64{-3, 2, 4}, []int64{2, 1}},
		{"Ckmeans4", []float64{3, 2, 3, 5, 2, 1}, nb(3), []float64{1, 3, 4, 5}, []int64{3, 2, 1}},
		{"Ckmeans5", []float64{0, 1, 2, 100, 101, 103}, nb(2), []float64{0, 100, 103}, []int64{3, 3}},
		{"Jenkspy", jenkspy, nb(4), []float64{1, 583, 848, 1223, 1424}, []int64{20, 9, 10, 11}},
		{"JenksName", []float64{1, 2, 4, 5, 7, 9, 10, 20}, Options{Method: "Jenks", Classes: 3}, []float64{1, 7, 15, 20}, []int64{4, 3, 1}},
	})
}

// sdcm is the sum of squared deviations from the class means of the
// classes r gives values, computed directly.
func sdcm(r *Result, values []float64) float64 {
	groups := make([][]float64, len(r.Breaks)-1)
	for _, v := range values {
		if c := r.Class(v); c >= 0 {
			groups[c] = append(groups[c], v)
		}
	}
	total := 0.0
	for _, g := range groups {
		total += ssd(g)
	}
	return total
}

// ssd is the sum of squared deviations of g from its mean, in two passes.
func ssd(g []float64) float64 {
	if len(g) == 0 {
		return 0
	}
	m := 0.0
	for _, v := range g {
		m += v
	}
	m /= float64(len(g))
	s := 0.0
	for _, v := range g {
		s += (v - m) * (v - m)
	}
	return s
}

// bestSDCM is the least SDCM of the sorted values xs in at most k classes
// breaking between distinct values, by an O(k·m²) dynamic programme with
// every cost computed directly (m the number of distinct values), or by
// trying every partition when brute is set.
func bestSDCM(xs []float64, k int, brute bool) float64 {
	var starts []int // indices where a run of equal values starts, after the first
	for i := 1; i < len(xs); i++ {
		if xs[i] != xs[i-1] {
			starts = append(starts, i)
		}
	}
	cuts := append(append([]int{0}, starts...), len(xs))
	S := len(cuts) - 1
	K := min(k, S)
	if brute {
		best := math.Inf(1)
		var rec func(from, left int, chosen []int)
		rec = func(from, left int, chosen []int) {
			if left == 0 {
				b := append(append([]int{0}, chosen...), S)
				s := 0.0
				for i := 1; i < len(b); i++ {
					s += ssd(xs[cuts[b[i-1]]:cuts[b[i]]])
				}
				best = min(best, s)
				return
			}
			for c := from; c <= S-left; c++ {
				rec(c+1, left-1, append(chosen, c))
			}
		}
		rec(1, K-1, nil)
		return best
	}
	// cost[a][b] is the SSD of segments a..b-1, by Welford's running update.
	cost := make([][]float64, S+1)
	for a := range S {
		cost[a] = make([]float64, S+1)
		var n, mean, m2 float64
		for b := a + 1; b <= S; b++ {
			for _, v := range xs[cuts[b-1]:cuts[b]] {
				n++
				d := v - mean
				mean += d / n
				m2 += d * (v - mean)
			}
			cost[a][b] = m2
		}
	}
	D := make([]float64, S+1)
	for j := 1; j <= S; j++ {
		D[j] = cost[0][j]
	}
	for c := 2; c <= K; c++ {
		next := make([]float64, S+1)
		for j := range next {
			next[j] = math.Inf(1)
		}
		for j := c; j <= S; j++ {
			for t := c - 1; t < j; t++ {
				next[j] = min(next[j], D[t]+cost[t][j])
			}
		}
		D = next
	}
	return D[S]
}

// TestNaturalBreaksOptimal compares Jenks with every partition of small
// random inputs and with a plain dynamic programme on larger ones.
func TestNaturalBreaksOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for it := 0; it < 3000; it++ {
		n := 2 + rng.IntN(11)
		brute := it%3 != 0
		if !brute {
			n = 2 + rng.IntN(150)
		}
		xs := make([]float64, n)
		span := []float64{3, 10, 1000, 1e-6}[rng.IntN(4)]
		for i := range xs {
			if it%2 == 0 {
				xs[i] = float64(rng.IntN(int(span) + 1)) // ties
			} else {
				xs[i] = rng.NormFloat64() * span
			}
			if rng.IntN(10) == 0 {
				xs[i] *= 50 // outliers
			}
		}
		k := 1 + rng.IntN(8)
		opt := Options{Method: NaturalBreaks, Classes: k}
		r, err := Classify(xs, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, xs, opt, r, nil)
		sorted := slices.Sorted(slices.Values(xs))
		want, got := bestSDCM(sorted, k, brute), sdcm(r, xs)
		if got > want+1e-9*(ssd(xs)+1e-300) {
			t.Fatalf("%v in %d classes: breaks %v SDCM %v, the best is %v", xs, k, r.Breaks, got, want)
		}
		// As many classes as asked for, unless there are fewer distinct values.
		distinct := len(slices.Compact(sorted))
		if len(r.Counts) != min(k, distinct) {
			t.Fatalf("%v in %d classes: %d classes", xs, k, len(r.Counts))
		}
	}
}

// TestNaturalBreaksSegments checks the large-input path: clusters are found
// exactly, and the result is close to the exact one.
func TestNaturalBreaksSegments(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var xs []float64
	for _, c := range []float64{0, 10, 20, 1000} {
		n := 30000
		if c == 1000 {
			n = 3 // a few outliers, which the equal-width segments isolate
		}
		for range n {
			xs = append(xs, c+rng.Float64())
		}
	}
	r, err := Classify(xs, Options{Method: NaturalBreaks, Classes: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Counts, []int64{30000, 30000, 30000, 3}) || r.Breaks[1] < 10 || r.Breaks[1] > 11 || r.Breaks[3] < 1000 {
		t.Fatalf("breaks %v counts %v", r.Breaks, r.Counts)
	}
	// Smooth data: the segmented optimum is within a hair of the exact one.
	xs = xs[:0]
	for range 100000 {
		xs = append(xs, math.Exp(rng.NormFloat64()))
	}
	sorted := slices.Sorted(slices.Values(xs))
	for _, k := range []int{2, 5, 9} {
		approx := &Result{Breaks: assemble(sorted[0], sorted[len(sorted)-1], naturalBreaks(sorted, k, JenksSegments))}
		exact := &Result{Breaks: assemble(sorted[0], sorted[len(sorted)-1], naturalBreaks(sorted, k, len(sorted)))}
		a, e := sdcm(approx, xs), sdcm(exact, xs)
		if a < e*(1-1e-9) || a > e*1.001 {
			t.Fatalf("k=%d: segmented SDCM %v, exact %v", k, a, e)
		}
		if len(approx.Breaks) != k+1 {
			t.Fatalf("k=%d: breaks %v", k, approx.Breaks)
		}
	}
}

func TestDegenerate(t *testing.T) {
	all := append(slices.Clone(methods), "")
	for _, m := range all {
		opt := Options{Method: m, Breaks: []float64{0, 1, 2}}
		for _, values := range [][]float64{nil, {}, {nan, math.Inf(1), math.Inf(-1)}} {
			r, err := Classify(values, opt)
			if err != nil || r.Breaks != nil || r.Counts != nil || r.Min != 0 || r.Max != 0 || r.Classified != 0 ||
				r.Nulls != int64(len(values)) || r.Outside != 0 || r.Class(1) != -1 {
				t.Fatalf("%s %v: %+v %v", m, values, r, err)
			}
			if b, err := json.Marshal(r); err != nil || !strings.Contains(string(b), `"Breaks":null`) {
				t.Fatalf("%s: %s %v", m, b, err)
			}
		}
		// All values outside the range.
		r, err := Classify([]float64{5, 6, nan}, Options{Method: m, Breaks: []float64{0, 10}, Range: &[2]float64{0, 1}})
		if err != nil || r.Breaks != nil || r.Counts != nil || r.Outside != 2 || r.Nulls != 1 {
			t.Fatalf("%s out of range: %+v %v", m, r, err)
		}
		if m == Manual {
			continue
		}
		// All values equal: one class of zero width.
		for _, k := range []int{0, 1, 5, MaxClasses} {
			values := []float64{3.5, 3.5, nan, 3.5}
			opt := Options{Method: m, Classes: k, Critical: ptr(100.0)}
			r, err := Classify(values, opt)
			if err != nil || !slices.Equal(r.Breaks, []float64{3.5, 3.5}) || !slices.Equal(r.Counts, []int64{3}) ||
				r.Min != 3.5 || r.Max != 3.5 || r.Classified != 3 || r.Nulls != 1 || r.Class(3.5) != 0 || r.Class(3.6) != -1 {
				t.Fatalf("%s all equal: %+v %v", m, r, err)
			}
			checkResult(t, values, opt, r, nil)
		}
	}
}

func TestNullsAndClass(t *testing.T) {
	values := []float64{nan, 1, math.Inf(1), 2, math.Inf(-1), 3, 4, nan}
	r, err := Classify(values, Options{Classes: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Nulls != 4 || r.Classified != 4 || r.Outside != 0 || r.Min != 1 || r.Max != 4 || !slices.Equal(r.Breaks, []float64{1, 2, 3, 4}) {
		t.Fatalf("%+v", r)
	}
	for v, want := range map[float64]int{1: 0, 1.5: 0, 2: 1, 2.999: 1, 3: 2, 4: 2, 0.999: -1, 4.001: -1, math.Inf(1): -1, math.Inf(-1): -1} {
		if got := r.Class(v); got != want {
			t.Errorf("Class(%v) = %d, want %d", v, got, want)
		}
	}
	if r.Class(nan) != -1 || (*Result)(nil).Class(1) != -1 || (&Result{}).Class(1) != -1 {
		t.Fatal("Class of NaN, of a nil or empty Result")
	}
}

func TestRange(t *testing.T) {
	values := append(seq(0, 10), nan)
	opt := Options{Classes: 3, Range: &[2]float64{2, 8}}
	r, err := Classify(values, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Breaks, []float64{2, 4, 6, 8}) || !slices.Equal(r.Counts, []int64{2, 2, 3}) ||
		r.Outside != 4 || r.Nulls != 1 || r.Classified != 7 || r.Min != 2 || r.Max != 8 {
		t.Fatalf("%+v", r)
	}
	// The range bounds are inclusive; values outside it have no class.
	if r.Class(2) != 0 || r.Class(8) != 2 || r.Class(1) != -1 || r.Class(9) != -1 {
		t.Fatal("Class outside the range")
	}
	checkResult(t, values, opt, r, nil)
	// Critical Value's classes reach beyond the data, but not its classes' range.
	opt = Options{Method: CriticalValue, Classes: 2, Critical: ptr(0.0), Range: &[2]float64{-1, 5}}
	r, err = Classify([]float64{-3, 0, 1, 5, 6}, opt)
	if err != nil || !slices.Equal(r.Breaks, []float64{-5, 0, 5}) || !slices.Equal(r.Counts, []int64{0, 3}) || r.Outside != 2 ||
		r.Class(-3) != -1 || r.Class(-1) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	// A range of one value.
	r, err = Classify([]float64{1, 2, 2, 3}, Options{Method: Quantile, Range: &[2]float64{2, 2}})
	if err != nil || !slices.Equal(r.Breaks, []float64{2, 2}) || !slices.Equal(r.Counts, []int64{2}) || r.Outside != 2 {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Classes: -1}, "categories"},
		{Options{Classes: MaxClasses + 1}, "categories"},
		{Options{Method: Quantile, Classes: 1000}, "categories"},
		{Options{Method: "Guess"}, "Equal Interval"},
		{Options{Range: &[2]float64{5, 1}}, "range"},
		{Options{Range: &[2]float64{nan, 1}}, "range"},
		{Options{Range: &[2]float64{0, math.Inf(1)}}, "range"},
		{Options{Method: CriticalValue, Critical: ptr(nan)}, "critical"},
		{Options{Method: CriticalValue, Critical: ptr(math.Inf(-1))}, "critical"},
		{Options{Method: Manual}, "break"},
	} {
		r, err := Classify([]float64{1, 2, 3}, c.opt)
		if r != nil || mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(mapcommons.ErrorMessage(err), c.want) {
			t.Errorf("%+v: %v, %v; want an EINVALID error about %s", c.opt, r, err, c.want)
		}
	}
	// Options a method ignores are not checked.
	for _, opt := range []Options{
		{Method: Quantile, Critical: ptr(nan), Breaks: []float64{3, 1}},
		{Method: Manual, Breaks: []float64{0, 1}, Classes: -4},
		{Classes: MaxClasses},
	} {
		if _, err := Classify([]float64{1, 2, 3}, opt); err != nil {
			t.Errorf("%+v: %v", opt, err)
		}
	}
}

func TestOptionsJSON(t *testing.T) {
	b, err := json.Marshal(Options{Method: Quantile, Classes: 3, Breaks: []float64{1, 2}, Range: &[2]float64{0, 1}, Critical: ptr(2.5)})
	if err != nil || string(b) != `{"Method":"Quantile","Classes":3,"Breaks":[1,2],"Range":[0,1],"Critical":2.5}` {
		t.Fatalf("%s %v", b, err)
	}
}

func TestValuesUnchanged(t *testing.T) {
	values := []float64{5, nan, 3, 1, 4, 1, 5, 9, 2, 6}
	before := slices.Clone(values)
	for _, m := range methods {
		if _, err := Classify(values, Options{Method: m, Breaks: []float64{0, 5, 10}}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range values {
		if math.Float64bits(values[i]) != math.Float64bits(before[i]) {
			t.Fatalf("values changed: %v", values)
		}
	}
}

// validOptions reports whether Classify must accept opt, and the most
// classes it may give.
func validOptions(opt Options) (bool, int) {
	m, err := ParseMethod(string(opt.Method))
	if err != nil {
		return false, 0
	}
	if rg := opt.Range; rg != nil && (!finite(rg[0]) || !finite(rg[1]) || rg[0] > rg[1]) {
		return false, 0
	}
	if m == Manual {
		b := opt.Breaks
		if len(b) < 2 || len(b) > MaxClasses+1 {
			return false, 0
		}
		for i, v := range b {
			if !finite(v) || i > 0 && !(v > b[i-1]) {
				return false, 0
			}
		}
		return true, len(b) - 1
	}
	if m == CriticalValue && opt.Critical != nil && !finite(*opt.Critical) {
		return false, 0
	}
	k := opt.Classes
	if k == 0 {
		k = mapcommons.DefaultCategories
	}
	return k >= 1 && k <= MaxClasses, k
}

// checkResult checks the invariants of every classification of values by
// opt: Classify's answer r, err (r may be nil to classify here).
func checkResult(t testing.TB, values []float64, opt Options, r *Result, err error) {
	t.Helper()
	before := slices.Clone(values)
	if r == nil && err == nil {
		r, err = Classify(values, opt)
	}
	for i := range values {
		if math.Float64bits(values[i]) != math.Float64bits(before[i]) {
			t.Fatalf("values changed at %d", i)
		}
	}
	valid, k := validOptions(opt)
	if !valid {
		if err == nil || r != nil || mapcommons.ErrorCode(err) != mapcommons.EINVALID {
			t.Fatalf("invalid options %+v: %v, %v", opt, r, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("options %+v: %v", opt, err)
	}
	m, _ := ParseMethod(string(opt.Method))
	if r.Method != m {
		t.Fatalf("method %q, want %q", r.Method, m)
	}
	// Which values are classified, by the rules alone.
	var in []float64
	var nulls, outside int64
	for _, v := range values {
		switch {
		case !finite(v):
			nulls++
		case opt.Range != nil && (v < opt.Range[0] || v > opt.Range[1]),
			m == Manual && (v < opt.Breaks[0] || v > opt.Breaks[len(opt.Breaks)-1]):
			outside++
		default:
			in = append(in, v)
		}
	}
	if r.Nulls != nulls || r.Outside != outside || r.Classified != int64(len(in)) {
		t.Fatalf("nulls %d outside %d classified %d, want %d %d %d", r.Nulls, r.Outside, r.Classified, nulls, outside, len(in))
	}
	if b, err := json.Marshal(r); err != nil {
		t.Fatalf("JSON: %s %v", b, err)
	}
	if len(in) == 0 {
		if r.Breaks != nil || r.Counts != nil || r.Min != 0 || r.Max != 0 {
			t.Fatalf("nothing classified: %+v", r)
		}
		return
	}
	mn, mx := slices.Min(in), slices.Max(in)
	if r.Min != mn || r.Max != mx {
		t.Fatalf("min %v max %v, want %v %v", r.Min, r.Max, mn, mx)
	}
	n := len(r.Counts)
	if n < 1 || n > k || len(r.Breaks) != n+1 {
		t.Fatalf("%d breaks, %d counts for %d classes", len(r.Breaks), n, k)
	}
	b := r.Breaks
	for i, v := range b {
		if !finite(v) || i > 0 && !(v > b[i-1]) && !(n == 1 && mn == mx && m != Manual) {
			t.Fatalf("breaks %v", b)
		}
	}
	switch m {
	case Manual:
		if !slices.Equal(b, opt.Breaks) {
			t.Fatalf("manual breaks %v, given %v", b, opt.Breaks)
		}
	case CriticalValue:
		if b[0] > mn || b[n] < mx {
			t.Fatalf("breaks %v do not cover [%v, %v]", b, mn, mx)
		}
	default:
		if b[0] != mn || b[n] != mx {
			t.Fatalf("breaks %v do not span [%v, %v]", b, mn, mx)
		}
	}
	// Class agrees with Counts, and says -1 for every value not classified.
	counts := make([]int64, n)
	var sum int64
	for _, v := range values {
		c := r.Class(v)
		if c < -1 || c >= n {
			t.Fatalf("Class(%v) = %d of %d", v, c, n)
		}
		if c >= 0 {
			if v < b[c] || v > b[c+1] || v == b[c+1] && c != n-1 {
				t.Fatalf("%v in class %d [%v, %v)", v, c, b[c], b[c+1])
			}
			counts[c]++
		}
	}
	for _, c := range r.Counts {
		sum += c
	}
	if !slices.Equal(counts, r.Counts) || sum != r.Classified || r.Classified+r.Nulls+r.Outside != int64(len(values)) {
		t.Fatalf("counts %v (sum %d), Class says %v; classified %d nulls %d outside %d of %d",
			r.Counts, sum, counts, r.Classified, r.Nulls, r.Outside, len(values))
	}
	// Quantile, Max Breaks and Natural Breaks never make an empty class.
	if m == Quantile || m == MaxBreaks || m == NaturalBreaks {
		if slices.Contains(r.Counts, 0) {
			t.Fatalf("%s: an empty class in %v (breaks %v)", m, r.Counts, b)
		}
	}
}

// randomValues makes n values of one of several shapes.
func randomValues(rng *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	shape := rng.IntN(7)
	scale := math.Pow(10, float64(rng.IntN(40)-20))
	for i := range xs {
		switch shape {
		case 0:
			xs[i] = rng.Float64() * scale
		case 1:
			xs[i] = float64(rng.IntN(6)) // many ties
		case 2:
			xs[i] = rng.NormFloat64()*scale + 1e6*scale
		case 3:
			xs[i] = math.Exp(rng.NormFloat64() * 3) // skewed
		case 4: // extremes
			xs[i] = []float64{-math.MaxFloat64, math.MaxFloat64, 0, 1, -1, math.SmallestNonzeroFloat64, 1e308}[rng.IntN(7)]
		case 5:
			xs[i] = math.Float64frombits(rng.Uint64()) // anything, NaNs included
		default:
			xs[i] = float64(rng.IntN(1000)-500) * scale
		}
		if rng.IntN(20) == 0 {
			xs[i] = nan
		}
	}
	return xs
}

func TestProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for it := 0; it < 4000; it++ {
		values := randomValues(rng, rng.IntN(300))
		opt := Options{Method: append(slices.Clone(methods), "", "jenks")[rng.IntN(len(methods)+2)], Classes: rng.IntN(12)}
		if rng.IntN(4) == 0 && len(values) > 1 {
			a, b := values[0], values[1]
			opt.Range = &[2]float64{min(a, b), max(a, b)}
		}
		if rng.IntN(2) == 0 {
			opt.Critical = ptr(randomValues(rng, 1)[0])
		}
		nb := 2 + rng.IntN(6)
		for i := 0; i < nb; i++ {
			opt.Breaks = append(opt.Breaks, float64(rng.IntN(20)-10)*math.Pow(10, float64(rng.IntN(5))))
		}
		slices.Sort(opt.Breaks)
		if rng.IntN(3) > 0 {
			opt.Breaks = slices.Compact(opt.Breaks)
		}
		checkResult(t, values, opt, nil, nil)
	}
}

// TestLarge classifies 300,000 values by every method, checking the
// invariants (the benchmarks take a million).
func TestLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	values := benchValues(300_000)
	for _, m := range methods {
		opt := Options{Method: m, Breaks: []float64{-2, 0, 1, 3, 10}}
		r, err := Classify(values, opt)
		checkResult(t, values, opt, r, err)
		if m != Manual && m != StdDev && len(r.Counts) != 5 {
			t.Errorf("%s: %d classes: %v", m, len(r.Counts), r.Breaks)
		}
	}
}

// FuzzClassify classes values decoded from arbitrary bytes by options
// decoded from them too, checking every invariant.
func FuzzClassify(f *testing.F) {
	f.Add([]byte{0, 5, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{1, 3, 4, 0, 1, 1, 1, 2, 2, 3, 9})
	f.Add([]byte{2, 4, 4, 0, 0, 1, 2, 3, 4, 5, 6})
	f.Add([]byte{3, 2, 5, 0, 1, 1, 200, 100, 50})
	f.Add([]byte{4, 7, 4, 0, 1, 2, 3, 9, 9, 9, 100, 101, 102})
	f.Add([]byte{5, 3, 6, 0, 10, 20, 30, 0xff, 0x7f})
	f.Add([]byte{6, 0, 12, 3, 0, 5, 10, 1, 2, 3, 4, 6, 7, 11})
	f.Add([]byte{7, 40, 1, 0, 0xff, 0xf0, 0, 0, 0, 0, 0, 0, 0x7f, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		names := append(slices.Clone(methods), "", "Jenks", "St Deviation", "nope")
		opt := Options{Method: names[int(data[0])%len(names)], Classes: int(data[1]) % 40}
		flags, nbreaks := data[2], int(data[3])%8
		data = data[4:]
		var xs []float64
		if flags&4 != 0 { // small integers: ties
			for _, c := range data {
				if c == 0xff {
					xs = append(xs, nan)
				} else {
					xs = append(xs, float64(int8(c)))
				}
			}
		} else { // any float64
			for len(data) >= 8 {
				xs = append(xs, math.Float64frombits(binary.LittleEndian.Uint64(data)))
				data = data[8:]
			}
		}
		take := func() float64 {
			if len(xs) == 0 {
				return 0
			}
			v := xs[0]
			xs = xs[1:]
			return v
		}
		if flags&1 != 0 {
			opt.Range = &[2]float64{take(), take()}
		}
		if flags&2 != 0 {
			opt.Critical = ptr(take())
		}
		if flags&8 != 0 {
			for range nbreaks {
				opt.Breaks = append(opt.Breaks, take())
			}
			if flags&16 == 0 {
				slices.Sort(opt.Breaks)
			}
		}
		checkResult(t, xs, opt, nil, nil)
	})
}

// benchValues are n values: a skewed distribution with ties and nulls.
func benchValues(n int) []float64 {
	rng := rand.New(rand.NewPCG(7, 8))
	values := make([]float64, n)
	for i := range values {
		switch rng.IntN(100) {
		case 0:
			values[i] = nan
		case 1, 2, 3:
			values[i] = float64(rng.IntN(10))
		default:
			values[i] = math.Exp(rng.NormFloat64())
		}
	}
	return values
}

// BenchmarkClassify classes a million values by each method.
func BenchmarkClassify(b *testing.B) {
	values := benchValues(1_000_000)
	for _, m := range methods {
		b.Run(strings.ReplaceAll(string(m), " ", ""), func(b *testing.B) {
			opt := Options{Method: m, Breaks: []float64{0, 1, 2, 5, 10}}
			for b.Loop() {
				if _, err := Classify(values, opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("NaturalBreaks32", func(b *testing.B) {
		for b.Loop() {
			if _, err := Classify(values, Options{Method: NaturalBreaks, Classes: MaxClasses}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
