package csv

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mapcommons/format/infer"
)

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// trimSpace drops ASCII spaces, tabs and line breaks around s.
func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// isBlank reports whether s is empty or white space only.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parseCoord parses a coordinate cell. Leading zeros are fine here, and with
// decimalComma (files delimited by ';' or tab, as European spreadsheets
// write them) "48,85" means 48.85.
func parseCoord(s string, decimalComma bool) (float64, bool) {
	t := trimSpace(s)
	if v, ok := infer.FastFloat(t); ok {
		return v, true
	}
	if infer.NumberKind(t, false) != infer.NotNumber {
		return infer.ParseFloat(t), true
	}
	if decimalComma && strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
		t = strings.Replace(t, ",", ".", 1)
		if infer.NumberKind(t, false) != infer.NotNumber {
			return infer.ParseFloat(t), true
		}
	}
	return 0, false
}

// quote quotes a cell for an error message, cut to 40 bytes.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		i := max
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		return strconv.Quote(s[:i]) + "…"
	}
	return strconv.Quote(s)
}

// cp1252High maps the Windows-1252 bytes 0x80-0x9F to Unicode; the five
// bytes the code page leaves undefined map to the C1 control of the same
// value, as the WHATWG Encoding Standard does. Bytes 0xA0-0xFF are Latin-1.
var cp1252High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// decode1252 converts a Windows-1252 string to UTF-8. ASCII strings are
// returned as they are.
func decode1252(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, i, len(s)+(len(s)-i)*2)
	copy(b, s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80:
			b = append(b, c)
		case c < 0xA0:
			b = utf8.AppendRune(b, cp1252High[c-0x80])
		default:
			b = utf8.AppendRune(b, rune(c))
		}
	}
	return string(b)
}

// parseInt parses a trimmed cell that infer.NumberKind found to be an integer.
func parseInt(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
