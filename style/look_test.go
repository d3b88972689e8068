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
