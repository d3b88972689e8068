// Package infer decides the types of attribute columns from the text of
// their values, as every reader of text formats (CSV, KML, GeoRSS) must:
// a column is integer when every non-blank value is a decimal integer that
// fits int64, float when every one is a finite decimal number, else string.
package infer

import (
	"math"
	"strconv"
	"strings"

	"mapcommons"
)

// Kinds of cell values, as NumberKind classifies them.
const (
	NotNumber   = 0
	IntNumber   = 1 // a decimal integer that fits int64
	FloatNumber = 2 // any other finite decimal number
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// NumberKind classifies the trimmed cell s without allocating: an optional
// sign, digits, an optional fraction and an optional exponent, at least one
// digit before the exponent. With strictZeros an integer part of more than
// one digit must not start with 0 ("007", "02134" and "00.5" are not
// numbers). Integers beyond int64 are floats; values that overflow float64
// are not numbers.
func NumberKind(s string, strictZeros bool) int {
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
		return NotNumber
	}
	kind := IntNumber
	digits := intDigits
	if i < n && s[i] == '.' {
		kind = FloatNumber
		i++
		f := i
		for i < n && isDigit(s[i]) {
			i++
		}
		digits += i - f
	}
	if digits == 0 {
		return NotNumber
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
			return NotNumber
		}
		kind, exp = FloatNumber, true
	}
	if i != n {
		return NotNumber
	}
	if kind == IntNumber {
		if intDigits < 19 || intDigits == 19 && fitsInt64(s[start:], s[0] == '-') {
			return IntNumber
		}
		kind = FloatNumber
	}
	if exp || intDigits > 300 { // may overflow float64
		if v, err := strconv.ParseFloat(s, 64); err != nil || math.IsInf(v, 0) {
			return NotNumber
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

// ParseFloat parses a trimmed cell that NumberKind accepted.
func ParseFloat(s string) float64 {
	if v, ok := FastFloat(s); ok {
		return v
	}
	v, _ := strconv.ParseFloat(s, 64) // underflow gives 0 (no error), overflow was excluded
	return v
}

// pow10 holds the powers of ten that float64 represents exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// FastFloat parses a plain decimal of at most 15 digits without exponent,
// such as "-122.419416", exactly as strconv.ParseFloat does: the digits and
// the power of ten are both exact in float64, so one division rounds
// correctly. ok is false for anything else.
func FastFloat(s string) (v float64, ok bool) {
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

// Column gathers the evidence for one column's type.
type Column struct {
	seen, notInt, notNumber bool
}

// Observe records one value (blank values say nothing).
func (c *Column) Observe(s string) {
	s = strings.TrimSpace(s)
	if s == "" || c.notNumber {
		return
	}
	c.seen = true
	switch NumberKind(s, true) {
	case IntNumber:
	case FloatNumber:
		c.notInt = true
	default:
		c.notNumber = true
	}
}

// Type is the column's type: string when it had no value at all.
func (c *Column) Type() mapcommons.AttrType {
	switch {
	case !c.seen || c.notNumber:
		return mapcommons.AttrString
	case c.notInt:
		return mapcommons.AttrFloat
	}
	return mapcommons.AttrInteger
}

// Value converts a value of a column of type t: nil for a blank one.
func Value(t mapcommons.AttrType, s string) any {
	ts := strings.TrimSpace(s)
	switch t {
	case mapcommons.AttrInteger:
		if ts == "" {
			return nil
		}
		if v, err := strconv.ParseInt(ts, 10, 64); err == nil {
			return v
		}
		return ParseFloat(ts)
	case mapcommons.AttrFloat:
		if ts == "" {
			return nil
		}
		return ParseFloat(ts)
	}
	return s
}
