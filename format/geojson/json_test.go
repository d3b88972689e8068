package geojson

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:           `"plain"`,
		"q\"b\\n\n\t\x01": `"q\"b\\n\n\t\u0001"`,
		"line\u2028sep":   `"line\u2028sep"`,
		"bad\xffutf8":     `"bad\ufffdutf8"`,
		"Côte d'Ivoire":   `"Côte d'Ivoire"`,
		// Past the eight bytes read at a time, and at their edges.
		"abcdefgh\"ijklmnop\\q":     `"abcdefgh\"ijklmnop\\q"`,
		"abcdefg\nabcdefgh\x1f":     `"abcdefg\nabcdefgh\u001f"`,
		"abcdefghijklmnoCôte\u2028": `"abcdefghijklmnoCôte\u2028"`,
		"2020-01-13T08:14:09Z":      `"2020-01-13T08:14:09Z"`,
	} {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

// plainWord says what a byte at a time would: every byte of the word is
// printable ASCII other than a quote or a backslash; for every byte value
// at every place among plain ones, and for random words.
func TestPlainWord(t *testing.T) {
	plain := func(w string) bool {
		for i := 0; i < len(w); i++ {
			if c := w[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(3, 4))
	word := make([]byte, 8)
	for range 2000 {
		for i := range word {
			word[i] = byte(0x20 + r.IntN(0x60))
		}
		for at := range 8 {
			for b := range 256 {
				w := []byte(string(word))
				w[at] = byte(b)
				if got, want := plainWord(string(w)), plain(string(w)); got != want {
					t.Fatalf("plainWord(%q) = %v, want %v", w, got, want)
				}
			}
		}
		for i := range word {
			word[i] = byte(r.Uint32())
		}
		if got, want := plainWord(string(word)), plain(string(word)); got != want {
			t.Fatalf("plainWord(%q) = %v, want %v", word, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\u2029", "\xff\xfe", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q gave invalid JSON %s: %v", s, b, err)
		}
		if want := strings.ToValidUTF8(s, "\uFFFD"); back != want && !strings.Contains(s, "\uFFFD") {
			// ToValidUTF8 merges a run of bad bytes into one replacement; we replace each.
			if strings.ReplaceAll(back, "\uFFFD", "") != strings.ReplaceAll(want, "\uFFFD", "") {
				t.Fatalf("%q came back as %q", s, back)
			}
		}
	})
}

func TestAppendValue(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{{nil, "null"}, {int64(-3), "-3"}, {2.0, "2.0"}, {0.1, "0.1"}, {1e22, "1e+22"}, {math.NaN(), "null"},
		{math.Inf(-1), "null"}, {true, "true"}, {"x", `"x"`}} {
		if got := string(AppendValue(nil, c.v)); got != c.want {
			t.Errorf("AppendValue(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestWriter(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "n", Type: mapcommons.AttrInteger}}
	var buf bytes.Buffer
	w := NewWriter(&buf, attrs)
	w.Begin([]byte(`"name":"x",`))
	for i := 0; i < 3000; i++ { // past the flush threshold
		g := wkb.AppendPoint(nil, float64(i)/10, -1)
		if i == 1 {
			g = nil
		}
		id := int64(2*i + 7) // the store's stable id; none for the first
		if i == 0 {
			id = 0
		}
		if err := w.Write(&mapcommons.Feature{Position: int64(i), ID: id, Values: []any{"f", int64(i)}, Geometry: g}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Features []struct {
			ID         *int64         `json:"id"`
			Geometry   map[string]any `json:"geometry"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(buf.Bytes(), &fc); err != nil {
		t.Fatal(err)
	}
	if fc.Type != "FeatureCollection" || fc.Name != "x" || len(fc.Features) != 3000 || fc.Features[1].Geometry != nil ||
		fc.Features[2999].Properties["n"] != 2999.0 || fc.Features[5].Geometry["type"] != "Point" {
		t.Fatalf("collection %s %s %d", fc.Type, fc.Name, len(fc.Features))
	}
	if fc.Features[0].ID != nil || fc.Features[1].ID == nil || *fc.Features[1].ID != 9 || *fc.Features[2999].ID != 6005 {
		t.Fatalf("ids %v %v %v, want none, 9, 6005", fc.Features[0].ID, fc.Features[1].ID, fc.Features[2999].ID)
	}
}

func BenchmarkAppendString(b *testing.B) {
	vals := []string{"c2", "xdvxrcsn", "2020-01-13T08:14:09Z", "Côte d'Ivoire", "a longer label of some forty bytes or so"}
	buf := make([]byte, 0, 256)
	for b.Loop() {
		for _, v := range vals {
			buf = AppendString(buf[:0], v)
		}
	}
}
