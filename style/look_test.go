package style

import (
	"math"
	"testing"
)

// TestClassOf: a feature's class is style.js's classIndex's.
func TestClassOf(t *testing.T) {
	c := &Classes{Breaks: []float64{0, 5, 5, 10}, Counts: []int64{2, 0, 3}}
	for _, x := range []struct {
		v    float64
		want int
	}{{-1, -1}, {0, 0}, {4.9, 0}, {5, 1}, {7, 1}, {10, 1}, {10.1, -1}, {math.NaN(), -1}} {
		if got := (&Look{Classes: c}).ClassOf(x.v); got != x.want {
			t.Errorf("%g: class %d, want %d", x.v, got, x.want)
		}
	}
	c = &Classes{Breaks: []float64{0, 1, 2, 3}, Counts: []int64{1, 1, 1}}
	for _, x := range []struct {
		v    float64
		want int
	}{{0, 0}, {1, 1}, {2.5, 2}, {3, 2}} {
		if got := (&Look{Classes: c}).ClassOf(x.v); got != x.want {
			t.Errorf("%g: class %d, want %d", x.v, got, x.want)
		}
	}
}

// TestClassRanges: the ranges of the classes hold exactly the values
// ClassOf places in each, repeated breaks too.
func TestClassRanges(t *testing.T) {
	for _, b := range [][]float64{{0, 5, 5, 10}, {0, 1, 2, 3}, {1, 1, 2}, {0, 0, 0, 4, 4, 9}, {3, 3}} {
		k := &Look{Classes: &Classes{Breaks: b, Counts: make([]int64, len(b)-1)}}
		ranges := k.ClassRanges()
		for v := -1.0; v <= 11; v += 0.25 {
			want, got := k.ClassOf(v), -1
			for _, r := range ranges {
				if v >= r.Min && (v < r.Max || r.MaxIn && v == r.Max) {
					if got >= 0 {
						t.Fatalf("breaks %v: %g in two ranges %v", b, v, ranges)
					}
					got = r.Class
				}
			}
			if got != want {
				t.Errorf("breaks %v: %g in the range of class %d, ClassOf %d (%v)", b, v, got, want, ranges)
			}
		}
	}
}
