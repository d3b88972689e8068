package mapcommons_test

import (
	"testing"

	"mapcommons"
)

// TestFoldText: full case folding, accents off, and both, ASCII or not;
// invalid UTF-8 kept.
func TestFoldText(t *testing.T) {
	for _, c := range []struct {
		in             string
		caseI, accentI bool
		want           string
	}{
		{"Straße", true, false, "strasse"},
		{"STRASSE", true, false, "strasse"},
		{"Οδος", true, false, "οδοσ"},
		{"ΟΔΟΣ", true, false, "οδοσ"},
		{"débárquér", false, true, "debarquer"},
		{"Beyoncé", true, true, "beyonce"},
		{"BEYONCÉ", false, true, "BEYONCE"},
		{"Beyonce\u0301", false, true, "Beyonce"}, // decomposed
		{"Ǆ", true, false, "ǆ"},
		{"İ", true, false, "i̇"},
		{"Hello, World!", true, false, "hello, world!"},
		{"Hello", false, true, "Hello"},
		{"한국어", false, true, "한국어"}, // Hangul composes again
		{"\xffÉ", true, true, "\xffÉ"},
	} {
		if got := mapcommons.FoldText(c.in, c.caseI, c.accentI); got != c.want {
			t.Errorf("FoldText(%q, %v, %v) = %q, want %q", c.in, c.caseI, c.accentI, got, c.want)
		}
	}
	buf := make([]byte, 0, 64)
	v := []byte("Hello, World")
	if n := testing.AllocsPerRun(100, func() { buf = mapcommons.AppendFold(buf[:0], v, true, true) }); n != 0 {
		t.Errorf("AppendFold of ASCII: %v allocations", n)
	}
}
