// like.go: the LIKE matcher of Where. A pattern is split at its '%' into
// parts of fixed length in characters; each part is found at its leftmost
// place by searching for its first literal run with bytes.Index (linear:
// Go's Index falls back to Rabin-Karp), so that a long pattern over a long
// value costs about their lengths, not their product. What is left
// quadratic (a literal run found at many places whose part fails after it)
// is bounded by the query's context, looked at within the match.
package feature

import (
	"bytes"
	"context"
	"unicode/utf8"
)

// likeCheckBytes is how many bytes of LIKE work (values searched, parts
// compared) pass between two looks at the query's context: a few tens of
// microseconds of work, so that one long value stops promptly.
const likeCheckBytes = 64 << 10

// Stopper carries a query's context into the evaluation of its
// expression, whose LIKE tests look at it every likeCheckBytes of work
// and, once it is done, keep its error and match nothing more. The zero
// Stopper never stops; a nil one neither.
type Stopper struct {
	ctx  context.Context // nil: never stops
	err  error           // the context's error, once seen
	work int             // bytes of work since the last look
}

// spend counts n bytes of work and reports whether evaluation may go on.
func (st *Stopper) spend(n int) bool {
	if st == nil {
		return true
	}
	if st.err != nil {
		return false
	}
	if st.work += n; st.work >= likeCheckBytes && st.ctx != nil {
		st.work = 0
		st.err = st.ctx.Err()
	}
	return st.err == nil
}

// SetContext makes ctx the context the evaluation looks at.
func (st *Stopper) SetContext(ctx context.Context) { st.ctx = ctx }

// Or returns err, or else the error that stopped the evaluation: a scan
// whose last rows were cut short by it must not answer as if they had
// not matched.
func (st *Stopper) Or(err error) error {
	if err == nil && st != nil {
		return st.err
	}
	return err
}

// likePart is a run of a LIKE pattern between two '%': literal runs and
// runs of '_' (any one character each).
type likePart struct {
	elems  []likeElem
	chars  int // how many characters it spans
	size   int // the bytes of its literals
	anchor int // the index of its first literal run; -1: none
}

// likeElem is a literal run (lit), or n '_' when lit is nil.
type likeElem struct {
	lit []byte
	n   int
}

// compileLike splits a pattern at its '%' wildcards; '\' escapes the next
// character (a '\' that ends the pattern is itself). A pattern of n '%'
// has n+1 parts; the first is anchored at the start of the value, the last
// at its end. A character is a UTF-8 sequence, or a byte that is not one.
func compileLike(pat string) []likePart {
	parts := []likePart{{anchor: -1}}
	cur := &parts[0]
	for i := 0; i < len(pat); {
		c := pat[i]
		switch {
		case c == '%':
			parts = append(parts, likePart{anchor: -1})
			cur = &parts[len(parts)-1]
			i++
			continue
		case c == '_':
			if k := len(cur.elems) - 1; k >= 0 && cur.elems[k].lit == nil {
				cur.elems[k].n++
			} else {
				cur.elems = append(cur.elems, likeElem{n: 1})
			}
			cur.chars++
			i++
			continue
		case c == '\\' && i+1 < len(pat):
			i++
		}
		_, size := utf8.DecodeRuneInString(pat[i:])
		if k := len(cur.elems) - 1; k >= 0 && cur.elems[k].lit != nil {
			cur.elems[k].lit = append(cur.elems[k].lit, pat[i:i+size]...)
		} else {
			cur.elems = append(cur.elems, likeElem{lit: []byte(pat[i : i+size])})
			if cur.anchor < 0 {
				cur.anchor = len(cur.elems) - 1
			}
		}
		cur.chars++
		cur.size += size
		i += size
	}
	return parts
}

// skipChars returns the offset of v past its first n characters, false
// when it has fewer.
func skipChars(v []byte, n int) (int, bool) {
	k := 0
	for ; n > 0; n-- {
		if k >= len(v) {
			return 0, false
		}
		_, size := utf8.DecodeRune(v[k:])
		k += size
	}
	return k, true
}

// backChars returns the offset of v's last n characters before end, false
// when it has fewer.
func backChars(v []byte, end, n int) (int, bool) {
	for ; n > 0; n-- {
		if end == 0 {
			return 0, false
		}
		_, size := utf8.DecodeLastRune(v[:end])
		end -= size
	}
	return end, true
}

// charStart reports whether offset i of v is where a character starts
// (reading v from its start): any byte that is not a continuation byte,
// and a continuation byte that no valid sequence before it covers.
func charStart(v []byte, i int) bool {
	if i == 0 || i == len(v) || v[i]&0xC0 != 0x80 {
		return true
	}
	for j := max(i-utf8.UTFMax+1, 0); j < i; j++ {
		if _, size := utf8.DecodeRune(v[j:]); size > i-j {
			return false
		}
	}
	return true
}

// matchAt reports whether the part matches v from its start, and how many
// bytes it spans.
func (p *likePart) matchAt(v []byte) (int, bool) {
	k := 0
	for _, e := range p.elems {
		if e.lit == nil {
			n, ok := skipChars(v[k:], e.n)
			if !ok {
				return 0, false
			}
			k += n
			continue
		}
		if !bytes.HasPrefix(v[k:], e.lit) {
			return 0, false
		}
		k += len(e.lit)
	}
	return k, true
}

// find returns the offsets of the part's leftmost match in v (which starts
// with a character).
func (p *likePart) find(v []byte, st *Stopper) (start, end int, ok bool) {
	if p.anchor < 0 { // only '_': the leftmost place is the start
		k, ok := p.matchAt(v)
		return 0, k, ok
	}
	lead := 0 // the '_' before the anchor
	if p.anchor > 0 {
		lead = p.elems[0].n
	}
	from, ok := skipChars(v, lead)
	if !ok {
		return 0, 0, false
	}
	lit := p.elems[p.anchor].lit
	for {
		j := bytes.Index(v[from:], lit)
		if j < 0 {
			st.spend(len(v) - from)
			return 0, 0, false
		}
		c := from + j
		if !st.spend(j + len(lit)) {
			return 0, 0, false
		}
		if charStart(v, c) {
			// c is at least lead characters in: the part starts there.
			s, _ := backChars(v, c, lead)
			if k, ok := p.matchAt(v[s:]); ok {
				return s, s + k, true
			}
			if !st.spend(p.size) {
				return 0, 0, false
			}
		}
		from = c + 1
	}
}

// matchLike matches a value against a compiled pattern: each part in turn
// at its leftmost place (every part spans a fixed number of characters,
// so the leftmost place never loses a match), the last at the end. It is
// false once st has stopped.
func matchLike(parts []likePart, v []byte, st *Stopper) bool {
	if !st.spend(0) {
		return false
	}
	k, ok := parts[0].matchAt(v)
	if !ok || !st.spend(parts[0].size) {
		return false
	}
	if len(parts) == 1 {
		return k == len(v)
	}
	v = v[k:]
	for i := 1; i < len(parts)-1; i++ {
		_, end, ok := parts[i].find(v, st)
		if !ok {
			return false
		}
		v = v[end:]
	}
	// The last part ends the value: try it where its characters would start.
	last := &parts[len(parts)-1]
	i, ok := backChars(v, len(v), last.chars)
	if !ok {
		return false
	}
	k, ok = last.matchAt(v[i:])
	return ok && i+k == len(v) && st.spend(last.size)
}
