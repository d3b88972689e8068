package csv

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}

func TestValidUTF8Chunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "é", "€", "😀", "\xE9", "\xF0\x9F", "\x80", "\xC0\xAF", "\xED\xA0\x80", "\xEF\xBF\xBD", ",", "\n"}
	for i := 0; i < 3000; i++ {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		for _, n := range []int{1, 2, 3, 5, 4096} {
			in := newInput(&chunkReader{b, n}, sniffed{delim: ','}, true, maxFields)
			io.Copy(io.Discard, in)
			if got, want := in.validUTF8(), utf8.Valid(b); got != want {
				t.Fatalf("%q in chunks of %d: valid %v, want %v", b, n, got, want)
			}
		}
	}
}

type rec struct {
	line   int64
	fields int
}

// scanRecords runs input's record tracking over data.
func scanRecords(data []byte, delim byte, chunk int) ([]rec, error) {
	var got []rec
	in := newInput(&chunkReader{data, chunk}, sniffed{delim: delim}, true, 1<<30)
	in.onRecord = func(line int64, fields int) { got = append(got, rec{line, fields}) }
	_, err := io.Copy(io.Discard, in)
	return got, err
}

// csvRecords is what encoding/csv makes of data, as Reader configures it.
func csvRecords(data []byte, delim byte) ([]rec, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = rune(delim)
	cr.LazyQuotes = true
	cr.FieldsPerRecord = -1
	var out []rec
	for {
		r, err := cr.Read()
		if err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, err
		}
		line, _ := cr.FieldPos(0)
		out = append(out, rec{int64(line), len(r)})
	}
}

// checkScanner asserts that input splits data into the same records, on the
// same lines, as encoding/csv, and reports an unclosed quote exactly when
// the data ends inside a quoted field.
func checkScanner(t *testing.T, data []byte, delim byte) {
	want, err := csvRecords(data, delim)
	if err != nil {
		t.Fatalf("%q: csv: %v", data, err)
	}
	for _, chunk := range []int{1, 3, 1 << 20} {
		got, err := scanRecords(data, delim, chunk)
		var le *limitError
		if errors.As(err, &le) {
			if le.kind != unclosedQuote || len(got) != len(want)-1 || len(want) == 0 || want[len(want)-1].line != le.line {
				t.Fatalf("%q (chunks of %d): %+v after %v; csv: %v", data, chunk, le, got, want)
			}
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q (chunks of %d): records %v, csv %v", data, chunk, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q (chunks of %d): records %v, csv %v", data, chunk, got, want)
			}
		}
	}
}

func TestScannerMatchesCSV(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("ab ,;\t\"\"\r\n\n")
	for range 20000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		checkScanner(t, b, ",;\t"[rng.IntN(3)])
	}
}

func FuzzScanner(f *testing.F) {
	for _, s := range []string{"a,b\n", "\"a\"\"b\",c\r\n\r\nd", "\"x\"\ry\",z\n", "a\"b,\"c\"d\"\n\"", "\r\r\n\"\"\r"} {
		f.Add([]byte(s), byte(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, d byte) {
		checkScanner(t, data, ",;\t"[d%3])
	})
}
