package csv

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Kinds of cell values, as numberKind classifies them.
const (
	notNumber   = 0
	intNumber   = 1 // a decimal integer that fits int64
	floatNumber = 2 // any other finite decimal number
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

// numberKind classifies the trimmed cell s without allocating: an optional
// sign, digits, an optional fraction and an optional exponent, at least one
// digit before the exponent. With strictZeros an integer part of more than
// one digit must not start with 0 ("007", "02134" and "00.5" are not
// numbers). Integers beyond int64 are floats; values that overflow float64
// are not numbers.
func numberKind(s string, strictZeros bool) int {
	n := len(s)
	i := 0
	if i < n && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	for i < n && isDigit(s[i]) {
		i++
	}
	intDigits := i - start
	if strictZeros && intDigits > 1 && s[start] == '0' {
		return notNumber
	}
	kind := intNumber
	digits := intDigits
	if i < n && s[i] == '.' {
		kind = floatNumber
		i++
		f := i
		for i < n && isDigit(s[i]) {
			i++
		}
		digits += i - f
	}
	if digits == 0 {
		return notNumber
	}
	exp := false
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < n && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := i
		for i < n && isDigit(s[i]) {
			i++
		}
		if i == e {
			return notNumber
		}
		kind, exp = floatNumber, true
	}
	if i != n {
		return notNumber
	}
	if kind == intNumber {
		if intDigits < 19 || intDigits == 19 && fitsInt64(s[start:], s[0] == '-') {
			return intNumber
		}
		kind = floatNumber
	}
	if exp || intDigits > 300 { // may overflow float64
		if v, err := strconv.ParseFloat(s, 64); err != nil || math.IsInf(v, 0) {
			return notNumber
		}
	}
	return kind
}

// fitsInt64 reports whether the 19 digits d, negated when neg, fit int64.
func fitsInt64(d string, neg bool) bool {
	if neg {
		return d <= "9223372036854775808"
	}
	return d <= "9223372036854775807"
}

// parseFloat parses a trimmed cell that numberKind accepted.
func parseFloat(s string) float64 {
	if v, ok := fastFloat(s); ok {
		return v
	}
	v, _ := strconv.ParseFloat(s, 64) // underflow gives 0 (no error), overflow was excluded
	return v
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fastFloat parses a plain decimal of at most 15 digits without exponent,
// such as "-122.419416", exactly as strconv.ParseFloat does: the digits and
// the power of ten are both exact in float64, so one division rounds
// correctly. ok is false for anything else.
func fastFloat(s string) (v float64, ok bool) {
	i, n, neg := 0, len(s), false
	if n > 0 && (s[0] == '-' || s[0] == '+') {
		neg, i = s[0] == '-', 1
	}
	var m uint64
	start := i
	for ; i < n && isDigit(s[i]); i++ {
		m = m*10 + uint64(s[i]-'0')
	}
	digits, frac := i-start, 0
	if i < n && s[i] == '.' {
		i++
		f := i
		for ; i < n && isDigit(s[i]); i++ {
			m = m*10 + uint64(s[i]-'0')
		}
		frac = i - f
		digits += frac
	}
	if i != n || digits == 0 || digits > 15 {
		return 0, false
	}
	v = float64(m) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}

// parseCoord parses a coordinate cell. Leading zeros are fine here, and with
// decimalComma (files delimited by ';' or tab, as European spreadsheets
// write them) "48,85" means 48.85.
func parseCoord(s string, decimalComma bool) (float64, bool) {
	t := trimSpace(s)
	if v, ok := fastFloat(t); ok {
		return v, true
	}
	if numberKind(t, false) != notNumber {
		return parseFloat(t), true
	}
	if decimalComma && strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
		t = strings.Replace(t, ",", ".", 1)
		if numberKind(t, false) != notNumber {
			return parseFloat(t), true
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

// parseInt parses a trimmed cell that numberKind found to be an integer.
func parseInt(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }
