package feature

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// The reference LIKE matcher: the plain one the engine had, each part
// tried at every place in turn (quadratic, exact), kept to check the
// fast one against, invalid UTF-8 included.

type refPart struct{ elems []refElem }

type refElem struct {
	any bool
	lit []byte
}

func refCompile(pat string) []refPart {
	parts := []refPart{{}}
	for i := 0; i < len(pat); {
		c := pat[i]
		switch {
		case c == '%':
			parts = append(parts, refPart{})
			i++
			continue
		case c == '_':
			cur := &parts[len(parts)-1]
			cur.elems = append(cur.elems, refElem{any: true})
			i++
			continue
		case c == '\\' && i+1 < len(pat):
			i++
		}
		_, size := utf8.DecodeRuneInString(pat[i:])
		cur := &parts[len(parts)-1]
		cur.elems = append(cur.elems, refElem{lit: []byte(pat[i : i+size])})
		i += size
	}
	return parts
}

// matchAt reports whether the part matches v from its start, and how many
// bytes it spans.
func (p *refPart) matchAt(v []byte) (int, bool) {
	k := 0
	for _, e := range p.elems {
		if k >= len(v) {
			return 0, false
		}
		if e.any {
			_, size := utf8.DecodeRune(v[k:])
			k += size
			continue
		}
		if !bytes.HasPrefix(v[k:], e.lit) {
			return 0, false
		}
		k += len(e.lit)
	}
	return k, true
}

// refMatch matches a value against a compiled pattern: each part in turn
// at its leftmost place (every part spans a fixed number of characters,
// so the leftmost place never loses a match), the last at the end.
func refMatch(parts []refPart, v []byte) bool {
	k, ok := parts[0].matchAt(v)
	if !ok {
		return false
	}
	if len(parts) == 1 {
		return k == len(v)
	}
	v = v[k:]
	for _, p := range parts[1 : len(parts)-1] {
		found := false
		for i := 0; i <= len(v); {
			if k, ok := p.matchAt(v[i:]); ok {
				v, found = v[i+k:], true
				break
			}
			if i == len(v) {
				break
			}
			_, size := utf8.DecodeRune(v[i:])
			i += size
		}
		if !found {
			return false
		}
	}
	// The last part ends the value: try it where its characters would start.
	last := &parts[len(parts)-1]
	n := len(last.elems)
	i := len(v)
	for j := 0; j < n; j++ {
		if i == 0 {
			return false
		}
		_, size := utf8.DecodeLastRune(v[:i])
		i -= size
	}
	k, ok = last.matchAt(v[i:])
	return ok && i+k == len(v)
}

// likeAlphabet are the pieces random values and patterns are made of:
// wildcards, escapes, several-byte characters and bytes that are not UTF-8.
var likeAlphabet = []string{"a", "a", "b", "%", "_", "\\", "ä", "€", "\xe2\x82", "\x82", "\xff"}

func randomLike(r *rand.Rand, n int, pattern bool) string {
	var b strings.Builder
	for i := r.IntN(n + 1); i > 0; i-- {
		p := likeAlphabet[r.IntN(len(likeAlphabet))]
		if !pattern && (p == "%" || p == "_") && r.IntN(2) == 0 {
			p = "a"
		}
		b.WriteString(p)
	}
	return b.String()
}

// checkLike compares the matcher with the reference.
func checkLike(t *testing.T, pat, v string) {
	t.Helper()
	got := matchLike(compileLike(pat), []byte(v), nil)
	if want := refMatch(refCompile(pat), []byte(v)); got != want {
		t.Fatalf("%q LIKE %q = %v, the reference says %v", v, pat, got, want)
	}
}

// TestLikeOracle checks the matcher against the reference on random
// values and patterns, with matches made likely by taking patterns from
// the values.
func TestLikeOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	for i := 0; i < 200000; i++ {
		v := randomLike(r, 12, false)
		pat := randomLike(r, 8, true)
		if i%2 == 0 && len(v) > 0 { // a pattern cut from the value, wildcards put in
			a := r.IntN(len(v))
			b := a + r.IntN(len(v)-a+1)
			pat = v[a:b]
			for k := r.IntN(4); k > 0; k-- {
				at := r.IntN(len(pat) + 1)
				pat = pat[:at] + []string{"%", "_", "%_", "\\"}[r.IntN(4)] + pat[at:]
			}
			if r.IntN(2) == 0 {
				pat = "%" + pat
			}
			if r.IntN(2) == 0 {
				pat += "%"
			}
		}
		checkLike(t, pat, v)
	}
}

// FuzzLike checks the matcher against the reference.
func FuzzLike(f *testing.F) {
	for _, s := range [][2]string{{"%a_b%", "xaäb"}, {"_%\\%", "a%"}, {"%\x82%", "€"}, {"%a%a_%", "aaaa"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pat, v string) {
		if len(pat) > 64 || len(v) > 256 { // the reference is quadratic
			return
		}
		checkLike(t, pat, v)
	})
}

// countingContext counts the looks at it; its Err is context.Canceled
// from the look after the first `after`.
type countingContext struct {
	context.Context
	calls, after int
}

func (c *countingContext) Err() error {
	if c.calls++; c.calls > c.after {
		return context.Canceled
	}
	return nil
}

// TestLikeLong: a long pattern over a long value costs about their
// lengths (the work counted, within a few times their sum), and a match
// that does cost their product stops at its context's end, within the
// bytes of work between two looks, keeping the context's error.
func TestLikeLong(t *testing.T) {
	v := []byte(strings.Repeat("a", 900<<10) + "b")
	a30 := strings.Repeat("a", 30<<10)
	for _, c := range []struct {
		pat  string
		want bool
	}{
		{"%" + a30 + "b%", true}, {"%" + a30 + "c%", false}, {"%b" + a30 + "%", false},
		{"%" + a30 + "%" + a30 + "_%", true}, {"_%" + a30 + "_", true},
	} {
		st := &Stopper{ctx: &countingContext{Context: context.Background(), after: 1 << 30}}
		if got := matchLike(compileLike(c.pat), v, st); got != c.want || st.err != nil {
			t.Errorf("LIKE %.12q…: %v (%v), want %v", c.pat, got, st.err, c.want)
		}
		// The work, counted in looks at the context: linear.
		looks := st.ctx.(*countingContext).calls
		total := looks*likeCheckBytes + st.work
		if limit := 4 * (len(v) + len(c.pat)); total > limit {
			t.Errorf("LIKE %.12q…: %d bytes of work, want at most %d", c.pat, total, limit)
		}
	}
	// "a…a" is found at every place, then fails: quadratic work, stopped.
	ctx := &countingContext{Context: context.Background(), after: 3}
	st := &Stopper{ctx: ctx}
	if matchLike(compileLike("%"+a30+"_c%"), v, st) || !errors.Is(st.err, context.Canceled) || ctx.calls != 4 {
		t.Fatalf("past the deadline: %v after %d looks, want context.Canceled after 4", st.err, ctx.calls)
	}
	// Once stopped it matches nothing more, and looks no more.
	if matchLike(compileLike("%"), []byte("x"), st) || ctx.calls != 4 {
		t.Fatalf("a stopped evaluation matched, or looked again (%d looks)", ctx.calls)
	}
}

// TestLike checks the LIKE matcher on wildcards, escapes and UTF-8.
func TestLike(t *testing.T) {
	for _, c := range []struct {
		pat, v string
		want   bool
	}{
		{"a%", "abc", true}, {"a%", "ba", false}, {"%", "", true}, {"_", "", false},
		{"_", "ä", true}, {"__", "ä", false}, {"a_c", "abc", true}, {"a_c", "ac", false},
		{"%b%", "abc", true}, {"%b%", "ac", false}, {"a%c", "ac", true}, {"a%c", "acb", false},
		{"b\\%c", "b%c", true}, {"b\\%c", "bxc", false}, {"%a%a%", "aa", true}, {"%a%a%", "a", false},
		{"%ab", "aab", true}, {"%_x", "ä_x", true}, {"x\\", "x\\", true}, {"a%b%c", "abbc", true},
	} {
		if got := matchLike(compileLike(c.pat), []byte(c.v), nil); got != c.want {
			t.Errorf("%q LIKE %q = %v, want %v", c.v, c.pat, got, c.want)
		}
	}
}
