package xmltext

import (
	"encoding/xml"
	"strings"
	"testing"
)

func TestAppendEscaped(t *testing.T) {
	for _, c := range []struct {
		in         string
		text, attr string
	}{
		{"plain", "plain", "plain"},
		{`<a & "b">`, `&lt;a &amp; "b"&gt;`, `&lt;a &amp; &quot;b&quot;&gt;`},
		{"l1\nl2\tx\r\n", "l1\nl2\tx&#xD;\n", "l1&#xA;l2&#x9;x&#xD;&#xA;"},
		{"nul\x00\x01\x1f.", "nul.", "nul."},
		{"bad \xff utf8", "bad \uFFFD utf8", "bad \uFFFD utf8"},
		{"\ufffe\uffff\ufffd é€ 🌍", "\ufffd é€ 🌍", "\ufffd é€ 🌍"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", "\uFFFD\uFFFD\uFFFD"}, // an encoded surrogate
	} {
		if got := string(AppendEscaped(nil, c.in, false)); got != c.text {
			t.Errorf("AppendEscaped(%q, false) = %q, want %q", c.in, got, c.text)
		}
		if got := string(AppendEscaped([]byte("x"), c.in, true)); got != "x"+c.attr {
			t.Errorf("AppendEscaped(%q, true) = %q, want %q", c.in, got, "x"+c.attr)
		}
	}
}

// TestAppendEscapedParses: what AppendEscaped writes reads back as the
// input less what XML cannot hold.
func TestAppendEscapedParses(t *testing.T) {
	in := "a<b>&c\"d'e\r\nf\tg\x00h\xffi\ufffej"
	want := "a<b>&c\"d'e\r\nf\tgh\uFFFDij"
	doc := `<x a="` + string(AppendEscaped(nil, in, true)) + `">` + string(AppendEscaped(nil, in, false)) + `</x>`
	var v struct {
		A    string `xml:"a,attr"`
		Text string `xml:",chardata"`
	}
	if err := xml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	if v.A != want || v.Text != want {
		t.Errorf("read back %q and %q, want %q", v.A, v.Text, want)
	}
}

func TestAppendValid(t *testing.T) {
	in := "<]]>&\x00\x08\t\n\r\xff\ufffe é"
	if got, want := string(AppendValid(nil, in)), "<]]>&\t\n\r\uFFFD é"; got != want {
		t.Errorf("AppendValid(%q) = %q, want %q", in, got, want)
	}
}

func TestEntity(t *testing.T) {
	var b strings.Builder
	for c := 0; c < 256; c++ {
		if e := Entity(byte(c), true); e != "" {
			b.WriteString(string(rune(c)) + e)
		}
	}
	if got := b.String(); got != `"&quot;&&amp;<&lt;>&gt;` {
		t.Errorf("entities %q", got)
	}
	if Entity('"', false) != "" {
		t.Error(`" escaped outside attributes`)
	}
}

func TestValidChar(t *testing.T) {
	for r, want := range map[rune]bool{
		0: false, 8: false, 9: true, 0xA: true, 0xD: true, 0x1F: false, ' ': true, 0xD7FF: true,
		0xD800: false, 0xDFFF: false, 0xE000: true, 0xFFFD: true, 0xFFFE: false, 0xFFFF: false,
		0x10000: true, 0x10FFFF: true, 0x110000: false, -1: false,
	} {
		if ValidChar(r) != want {
			t.Errorf("ValidChar(%#x) = %v", r, !want)
		}
	}
}
