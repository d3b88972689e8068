package wkb

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// referenceFloat is AppendFloat by strconv alone.
func referenceFloat(v float64) string {
	switch abs := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "0"
	case v == math.Trunc(v) && abs < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case abs < 1e-6 || abs >= 1e21:
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func checkFloat(t *testing.T, v float64) {
	t.Helper()
	if got, want := string(AppendFloat(nil, v)), referenceFloat(v); got != want {
		t.Fatalf("AppendFloat(%v (bits %#x)) = %q, strconv gives %q", v, math.Float64bits(v), got, want)
	}
}

// The fast form of decimals of up to six places (appendMicros) writes
// what strconv's shortest form writes, for every kind of value: decimals
// of 0 to 9 places, random bits, and the edges of its range.
func TestAppendFloatAsStrconv(t *testing.T) {
	for _, v := range []float64{0.1, 0.5, 1.5, 0.000001, 0.0000015, 0.000009, 123.456, 574.900508, -80.748172,
		999999999.999999, 999999999.9999999, 1e9 - 0.5, 1e9 + 0.5, 1e-6, math.Nextafter(1e-6, 0), math.Nextafter(1e-6, 1),
		0.3, 0.1 + 0.2, 1.0 / 3, 2.675, 1e8 + 0.1, 5e-7, 123456.7890123, -0.000001, -999999999.5, 0.7000000000000001} {
		checkFloat(t, v)
		checkFloat(t, -v)
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 300000 {
		places := r.IntN(10)
		m := r.Int64N(int64(math.Pow10(min(15, 9+places))))
		v := float64(m) / math.Pow10(places)
		if r.IntN(2) == 0 {
			v = -v
		}
		checkFloat(t, v)
		checkFloat(t, math.Nextafter(v, math.Inf(1)))
		checkFloat(t, math.Float64frombits(r.Uint64()))
		checkFloat(t, r.Float64()*math.Pow10(r.IntN(12)-3))
	}
}

func FuzzAppendFloat(f *testing.F) {
	for _, v := range []float64{0.1, 574.900508, 1e-6, 999999999.999999, -2.5} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) { checkFloat(t, v) })
}

func BenchmarkAppendFloat(b *testing.B) {
	vals := []float64{574.900508, -80.748172, 50.193647, 244.891854, 0.5, 12.25}
	buf := make([]byte, 0, 64)
	for b.Loop() {
		for _, v := range vals {
			buf = AppendFloat(buf[:0], v)
		}
	}
}

func BenchmarkAppendFloatStrconv(b *testing.B) {
	vals := []float64{574.900508, -80.748172, 50.193647, 244.891854, 0.5, 12.25}
	buf := make([]byte, 0, 64)
	for b.Loop() {
		for _, v := range vals {
			buf = strconv.AppendFloat(buf[:0], v, 'f', -1, 64)
		}
	}
}
