// Package xmltext escapes text for the XML the download writers produce
// (KML, Atom): character data and attribute values, without the characters
// XML 1.0 does not allow, invalid UTF-8 replaced by U+FFFD.
package xmltext

import "unicode/utf8"

// ValidChar reports whether XML 1.0 allows r.
func ValidChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// Entity returns the reference that stands for the ASCII byte c in markup:
// "&amp;", "&lt;", "&gt;" and, with quote (an attribute value in double
// quotes), "&quot;"; "" when c stands for itself.
func Entity(c byte, quote bool) string {
	switch {
	case c == '&':
		return "&amp;"
	case c == '<':
		return "&lt;"
	case c == '>':
		return "&gt;"
	case c == '"' && quote:
		return "&quot;"
	}
	return ""
}

// AppendEscaped appends s escaped as XML character data (attr: as an
// attribute value in double quotes), without the characters XML 1.0 does
// not allow; bytes that are not UTF-8 become U+FFFD. Line breaks and tabs
// that a parser would normalise are written as character references.
func AppendEscaped(dst []byte, s string, attr bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			var size int
			dst, size = appendRune(dst, s[i:])
			i += size
			continue
		}
		i++
		if e := Entity(c, attr); e != "" {
			dst = append(dst, e...)
			continue
		}
		switch {
		case c == '\r':
			dst = append(dst, "&#xD;"...)
		case c == '\n' && attr:
			dst = append(dst, "&#xA;"...)
		case c == '\t' && attr:
			dst = append(dst, "&#x9;"...)
		case c < 0x20 && c != '\n' && c != '\t': // not allowed in XML 1.0
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// AppendValid appends s as it is but for the characters XML 1.0 does not
// allow, which it drops, and bytes that are not UTF-8, which become U+FFFD
// (for a CDATA section, say).
func AppendValid(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		var size int
		dst, size = appendRune(dst, s[i:])
		i += size
	}
	return dst
}

// appendRune appends the first character of s (U+FFFD for a byte that is
// not UTF-8, nothing when XML does not allow it) and returns its size.
func appendRune(dst []byte, s string) ([]byte, int) {
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size == 1:
		dst = append(dst, "\uFFFD"...)
	case ValidChar(r):
		dst = append(dst, s[:size]...)
	}
	return dst, size
}
