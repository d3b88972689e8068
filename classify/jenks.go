package classify

import "math"

// naturalBreaks returns the inner breaks of the Jenks partition of the
// sorted values xs (at least two distinct) into at most k classes: the one
// with the least sum of squared deviations from the class means (SDCM),
// exact when xs has at most segments (JenksSegments, but for tests)
// distinct values, else exact among the partitions that break only between
// segments (see NaturalBreaks).
//
// It is Fisher's dynamic programme: D[c][j], the least SDCM of the first j
// segments in c+1 classes, is min over t of D[c-1][t] + cost(t, j), where
// cost(t, j) is the sum of squared deviations of segments t..j-1 from
// their mean, read in O(1) from prefix sums of weights, values and squares.
// Because the cost obeys the quadrangle inequality, the smallest best t is
// non-decreasing in j, so each row is found by divide and conquer in
// O(S log S) instead of O(S²) for S segments.
func naturalBreaks(xs []float64, k, segments int) []float64 {
	n := len(xs)
	mn, mx := xs[0], xs[n-1]
	m := 1 // distinct values
	for i := 1; i < n; i++ {
		if xs[i] != xs[i-1] {
			m++
		}
	}
	exact := m <= segments

	// Centre the values on the midrange and scale them by powers of two
	// into [-1, 1], so sums of squares neither overflow nor underflow and
	// lose as little as they can to cancellation.
	_, e1 := math.Frexp(max(math.Abs(mn), math.Abs(mx)))
	lo1, hi1 := math.Ldexp(mn, -e1), math.Ldexp(mx, -e1)
	mid := lo1/2 + hi1/2
	_, e2 := math.Frexp(hi1 - mid)
	y := func(x float64) float64 { return math.Ldexp(math.Ldexp(x, -e1)-mid, -e2) }
	y0, yspan := y(mn), y(mx)-y(mn)

	// The segments: every distinct value when exact; otherwise runs of
	// distinct values cut wherever one of half equal-count bins or one of
	// half equal-width bins starts. cuts[s] holds the prefix sums before
	// segment s and the values either side of its start.
	type cut struct {
		lo, hi    float64 // the values before and at the cut
		w, s1, s2 float64 // count, sum and sum of squares of y before it
	}
	half := max(segments/2, 1)
	cuts := make([]cut, 1, min(m, segments)+2)
	var w, s1, s2 float64
	lastQ, lastV := 0, 0
	for i := 0; i < n; {
		x := xs[i]
		j := i + 1
		for j < n && xs[j] == x {
			j++
		}
		yx := y(x)
		if i > 0 {
			keep := exact
			if !exact {
				q := int(float64(i) * float64(half) / float64(n)) // i values lie before x
				v := 0
				if yspan > 0 {
					v = min(int((yx-y0)/yspan*float64(half)), half-1)
				}
				keep = q != lastQ || v != lastV
				lastQ, lastV = q, v
			}
			if keep {
				cuts = append(cuts, cut{xs[i-1], x, w, s1, s2})
			}
		}
		c := float64(j - i)
		w += c
		s1 += c * yx
		s2 += c * yx * yx
		i = j
	}
	cuts = append(cuts, cut{w: w, s1: s1, s2: s2})
	S := len(cuts) - 1
	K := min(k, S)
	if K < 2 {
		return nil
	}
	cost := func(a, b int) float64 {
		ca, cb := &cuts[a], &cuts[b]
		d1 := cb.s1 - ca.s1
		c := cb.s2 - ca.s2 - d1*d1/(cb.w-ca.w)
		return max(c, 0)
	}

	prev := make([]float64, S+1)
	for j := 1; j <= S; j++ {
		prev[j] = cost(0, j)
	}
	cur := make([]float64, S+1)
	opt := make([][]int32, K)
	for c := 1; c < K; c++ {
		o := make([]int32, S+1)
		opt[c] = o
		if c == K-1 { // the last row needs only j = S
			best, bt := math.Inf(1), c
			for t := c; t < S; t++ {
				if v := prev[t] + cost(t, S); v < best {
					best, bt = v, t
				}
			}
			o[S] = int32(bt)
			break
		}
		// solve fills cur[j] and o[j] for j in [jlo, jhi], knowing the best
		// t for them lies in [tlo, thi].
		var solve func(jlo, jhi, tlo, thi int)
		solve = func(jlo, jhi, tlo, thi int) {
			for jlo <= jhi {
				j := int(uint(jlo+jhi) >> 1)
				best, bt := math.Inf(1), tlo
				for t, end := tlo, min(thi, j-1); t <= end; t++ {
					if v := prev[t] + cost(t, j); v < best {
						best, bt = v, t
					}
				}
				cur[j], o[j] = best, int32(bt)
				solve(jlo, j-1, tlo, bt)
				jlo, tlo = j+1, bt
			}
		}
		solve(c+1, S, c, S-1)
		prev, cur = cur, prev
	}

	starts := make([]int, K-1) // the first segment of classes 1..K-1
	for c, j := K-1, S; c >= 1; c-- {
		j = int(opt[c][j])
		starts[c-1] = j
	}
	inner := make([]float64, K-1)
	for i, s := range starts {
		inner[i] = split(cuts[s].lo, cuts[s].hi, mx)
	}
	return inner
}
