// Package geojson reads uploaded GeoJSON files (source.go), writes features
// as GeoJSON (RFC 7946), and holds the JSON value encoding every streamed JSON
// answer of mapcommons shares.
package geojson

import (
	"strconv"
	"unicode/utf8"
	"unsafe"

	"mapcommons"
	"mapcommons/format/wkb"
)

const hexDigits = "0123456789abcdef"

// plainWord says whether the eight bytes of w are all printable ASCII
// other than '"' and '\\': bytes AppendString copies as they are. (Each
// test sets the high bit of a byte that fails it: below 0x20, equal to
// '"' or '\\', or at or above 0x80.)
func plainWord(w string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	below := x - 0x20*ones              // a byte below 0x20 borrows: its high bit set
	quote := x ^ '"'*ones               // a quote becomes zero
	slash := x ^ '\\'*ones              // a backslash becomes zero
	zero := (quote - ones) &^ quote     // high bit of each zero byte (and maybe
	zero |= (slash - ones) &^ slash     // of bytes after one; any is enough)
	return (below&^x|zero|x)&highs == 0 // x's own high bits: non-ASCII
}

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// U+2028 and U+2029 are escaped so the output is also valid JavaScript
// (JSONP).
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look of its own.
		for i+8 <= len(s) && plainWord(s[i:i+8]) {
			i += 8
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendValue appends an attribute value (int64, float64, string, bool or
// nil) as JSON. Non-finite floats become null.
func AppendValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		return appendFloat(dst, x)
	case string:
		return AppendString(dst, x)
	case bool:
		return strconv.AppendBool(dst, x)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	}
	return append(dst, "null"...)
}

// Keys encodes each attribute's name once as a JSON object key with its
// colon ("name":), for writers that repeat them on every feature.
func Keys(attrs []mapcommons.Attribute) [][]byte {
	keys := make([][]byte, len(attrs))
	n := 0
	for _, a := range attrs {
		n += len(a.Name) + 3 // quotes and colon, more if escaped
	}
	buf := make([]byte, 0, n) // all the keys in one allocation
	for i, a := range attrs {
		start := len(buf)
		buf = append(AppendString(buf, a.Name), ':')
		keys[i] = buf[start:len(buf):len(buf)]
	}
	return keys
}

// AppendMembers appends the key:value pairs of one feature's attributes,
// separated by commas.
func AppendMembers(dst []byte, keys [][]byte, values []any) []byte {
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, k...)
		dst = AppendValue(dst, values[i])
	}
	return dst
}

// appendFloat appends a float as JSON: null when it is not finite, and
// with a fraction or exponent always, so that it reads back as a float.
func appendFloat(dst []byte, x float64) []byte {
	if x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308 {
		return append(dst, "null"...)
	}
	n := len(dst)
	dst = wkb.AppendFloat(dst, x)
	for _, c := range dst[n:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, '.', '0') // keep floats recognisable as floats
}

// AppendFeatureMembers appends a feature's values as members: from its Row
// when it was read lazily (attrs give the types), else from its Values.
func AppendFeatureMembers(dst []byte, keys [][]byte, attrs []mapcommons.Attribute, f *mapcommons.Feature) []byte {
	if f.Row != nil {
		return AppendRow(dst, keys, attrs, f.Row)
	}
	return AppendMembers(dst, keys, f.Values)
}

// AppendRow is AppendMembers for a feature read lazily: the values come
// from r, each encoded by its attribute's type, exactly as AppendValue
// encodes the boxed value.
func AppendRow(dst []byte, keys [][]byte, attrs []mapcommons.Attribute, r mapcommons.Row) []byte {
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, k...)
		if r.IsNull(i) {
			dst = append(dst, "null"...)
			continue
		}
		switch attrs[i].Type {
		case mapcommons.AttrInteger:
			dst = strconv.AppendInt(dst, r.Int(i), 10)
		case mapcommons.AttrFloat:
			dst = appendFloat(dst, r.Float(i))
		case mapcommons.AttrBoolean:
			dst = strconv.AppendBool(dst, r.Bool(i))
		default:
			b := r.Bytes(i)
			// The string only lives for this call: no copy of the bytes.
			dst = AppendString(dst, unsafe.String(unsafe.SliceData(b), len(b)))
		}
	}
	return dst
}
