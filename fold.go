// fold.go: the case and accent folding of CQL2's CASEI and ACCENTI, the
// one definition the parsers (of a literal) and the evaluator (of a
// value) apply.
package mapcommons

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// FoldText is s as CASEI (caseI) and ACCENTI (accentI) compare it: the
// accents taken off (NFD, the nonspacing marks dropped, NFC again), then
// Unicode full case folding ("Straße" and "STRASSE" fold alike). Invalid
// UTF-8 is kept as it is.
func FoldText(s string, caseI, accentI bool) string {
	return string(AppendFold(nil, []byte(s), caseI, accentI))
}

// AppendFold appends v folded as FoldText folds it to dst: for ASCII
// text, lower case (case) or itself (accents), with no allocation when
// dst has the room.
func AppendFold(dst, v []byte, caseI, accentI bool) []byte {
	ascii := true
	for _, c := range v {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		if !caseI {
			return append(dst, v...)
		}
		for _, c := range v {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
		}
		return dst
	}
	if !utf8.Valid(v) {
		return append(dst, v...)
	}
	s := string(v)
	if accentI {
		// A transformer keeps state: one of each per call.
		t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
		if r, _, err := transform.String(t, s); err == nil {
			s = r
		}
	}
	if caseI {
		s = cases.Fold().String(s)
	}
	return append(dst, s...)
}
