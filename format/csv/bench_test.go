package csv

import (
	"bytes"
	"io"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// genPoints writes n rows shaped like shared/bench/gen_points.py:
// id,lon,lat,n,x,cat,label,ts (same columns, ranges and formats; the random
// numbers differ from Python's).
func genPoints(n int) []byte {
	rng := rand.New(rand.NewPCG(42, 42))
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	b.Grow(n * 64)
	b.WriteString("id,lon,lat,n,x,cat,label,ts\n")
	var line []byte
	for i := 1; i <= n; i++ {
		line = strconv.AppendInt(line[:0], int64(i), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, -180+360*rng.Float64(), 'f', 6, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, -85+170*rng.Float64(), 'f', 6, 64)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(rng.IntN(1000)), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, 1000*rng.Float64(), 'f', 6, 64)
		line = append(line, ",c"...)
		line = strconv.AppendInt(line, int64(rng.IntN(10)), 10)
		line = append(line, ',')
		for range 8 {
			line = append(line, byte('a'+rng.IntN(26)))
		}
		line = append(line, ',')
		line = t0.Add(time.Duration(rng.IntN(366*86400))*time.Second).AppendFormat(line, "2006-01-02T15:04:05Z")
		line = append(line, '\n')
		b.Write(line)
	}
	return b.Bytes()
}

// BenchmarkReader reads 200,000 generated rows: Open (pass 1) and Next to
// the end (pass 2). rows/s counts rows through both passes together.
func BenchmarkReader(b *testing.B) {
	const rows = 200_000
	data := genPoints(rows)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		r, err := Open(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != rows {
			b.Fatalf("%d rows, want %d", n, rows)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	// The process CPU time (GC included) is steadier than wall time on a
	// shared machine.
	b.ReportMetric(float64(rows)*float64(b.N)/(cpuTime()-cpu0).Seconds(), "rows/cpu-s")
}

// BenchmarkOpen is pass 1 alone over the rows of BenchmarkReader.
func BenchmarkOpen(b *testing.B) {
	data := genPoints(200_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Open(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
