package shapefile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"mapcommons"
)

// This file is the .dbf half of the writer: field names (ShortNames), field
// types and widths, and the two-step encoding of records. While features
// stream in, each record is appended to a temporary file in a compact form
// (per field: one length byte, then the text; length 0 for a blank) and the
// widest text of every field is remembered. When the stream ends the widths
// are known, and the final fixed-width records are built from the compact
// ones as they are copied into the zip. So every field is sized to fit its
// widest value, however the values come, with one pass over the features.

const (
	wDBFNameLen   = 10  // dBase III field names: at most 10 ASCII bytes
	wDBFMaxText   = 254 // widest C field we write (GDAL's limit too)
	wDBFMaxRecLen = 0xFFFF
)

// ShortNames returns a dBase field name for each attribute, in order: at
// most 10 bytes of [A-Za-z0-9_], starting with a letter, never empty, and
// unique ignoring case. An attribute name that is already such a name (and
// not taken by an earlier one) is kept as is; the others are derived from
// it: accents dropped (é → e), every run of other characters turned into
// one '_', leading and trailing '_' trimmed, an 'F' put in front of a
// leading digit, "FIELD_<n>" (n the 1-based column) when nothing is left,
// cut to 10 bytes, and, when that collides with a name already given, the
// tail replaced by "_1", "_2", … (the first free one). changed reports
// whether any name differs from its attribute's Name.
func ShortNames(attrs []mapcommons.Attribute) (names []string, changed bool) {
	names = make([]string, len(attrs))
	taken := make(map[string]bool, len(attrs))
	// Names that are valid already keep priority over derived ones, so that
	// "population_total" cannot take the name of a later "population".
	for i, a := range attrs {
		if wValidFieldName(a.Name) && !taken[strings.ToLower(a.Name)] {
			names[i] = a.Name
			taken[strings.ToLower(a.Name)] = true
		}
	}
	for i, a := range attrs {
		if names[i] != "" {
			continue
		}
		base := wLaunderName(a.Name)
		if base == "" {
			base = "FIELD_" + strconv.Itoa(i+1)
		}
		if len(base) > wDBFNameLen {
			base = base[:wDBFNameLen]
		}
		name := base
		for n := 1; taken[strings.ToLower(name)]; n++ {
			suffix := "_" + strconv.Itoa(n)
			name = base[:min(len(base), wDBFNameLen-len(suffix))] + suffix
		}
		names[i] = name
		taken[strings.ToLower(name)] = true
	}
	for i, a := range attrs {
		if names[i] != a.Name {
			changed = true
		}
	}
	return names, changed
}

func wNameByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
}

func wLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// wValidFieldName reports whether s can be a dBase field name as it is.
func wValidFieldName(s string) bool {
	if len(s) == 0 || len(s) > wDBFNameLen || !wLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !wNameByte(s[i]) {
			return false
		}
	}
	return true
}

// wLaunderName maps s to [A-Za-z0-9_], starting with a letter (possibly
// empty, and not yet cut to length).
func wLaunderName(s string) string {
	var b strings.Builder
	under := false
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue // a combining accent: é is e + U+0301
		}
		if r < utf8.RuneSelf && wNameByte(byte(r)) && r != '_' {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(b.String(), "_")
	if out != "" && !wLetter(out[0]) {
		out = "F" + out
	}
	return out
}

// wFieldsText is the <name>_fields.txt mapping: one "short<TAB>original"
// line per field, control characters of the original name (which would
// break the lines) turned into spaces.
func wFieldsText(names []string, attrs []mapcommons.Attribute) []byte {
	var b []byte
	for i, n := range names {
		b = append(b, n...)
		b = append(b, '\t')
		b = append(b, strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7F {
				return ' '
			}
			return r
		}, attrs[i].Name)...)
		b = append(b, '\n')
	}
	return b
}

// wField is a .dbf field being written.
type wField struct {
	name  string
	kind  mapcommons.AttrType
	typ   byte // 'N', 'C', 'L' or 'D' (decided at the end for dates)
	width int  // widest text seen so far (final width at the end)
	dec   int  // float fields: most digits after the point seen
	iso   bool // date fields: every value so far is a YYYY-MM-DD date
}

// wDBF plans the fields and encodes the compact records.
type wDBF struct {
	fields []wField
	fid    bool   // no attributes: a single FID field holds the position
	row    []byte // the compact record of the current feature
	recLen int    // record length with the widths seen so far
}

func newWDBF(attrs []mapcommons.Attribute) (*wDBF, []string, bool) {
	names, changed := ShortNames(attrs)
	d := &wDBF{}
	if len(attrs) == 0 {
		// Some programs cannot read a .dbf without fields; GDAL writes FID.
		d.fid = true
		d.fields = []wField{{name: "FID", kind: mapcommons.AttrInteger, typ: 'N'}}
	}
	for i, a := range attrs {
		f := wField{name: names[i], kind: a.Type}
		switch a.Type {
		case mapcommons.AttrInteger, mapcommons.AttrFloat:
			f.typ = 'N'
		case mapcommons.AttrBoolean:
			f.typ = 'L'
		case mapcommons.AttrDate:
			f.typ, f.iso = 'D', true
		default:
			f.typ = 'C'
		}
		d.fields = append(d.fields, f)
	}
	d.recLen = 1
	for i := range d.fields {
		d.recLen += d.fields[i].finalWidth()
	}
	return d, names, changed
}

// finalWidth is the width the field would get now.
func (f *wField) finalWidth() int {
	switch {
	case f.typ == 'L':
		return 1
	case f.kind == mapcommons.AttrDate && f.iso:
		return 8
	case f.kind == mapcommons.AttrFloat:
		return max(f.width, f.finalDec()+2)
	}
	return max(f.width, 1)
}

// finalDec is the decimal count declared for the field: at least 1 for a
// float field, so that readers (GDAL, ours) take it as real numbers even
// when every value is integral.
func (f *wField) finalDec() int {
	if f.kind == mapcommons.AttrFloat {
		return max(f.dec, 1)
	}
	return 0
}

// finalType is the dBase type letter written in the header.
func (f *wField) finalType() byte {
	if f.kind == mapcommons.AttrDate && !f.iso {
		return 'C'
	}
	return f.typ
}

// encode builds the compact record of the values into d.row and grows the
// field widths; it returns the record length with the new widths.
func (d *wDBF) encode(vals []any, pos int64) int {
	d.row = d.row[:0]
	grew := false
	for i := range d.fields {
		f := &d.fields[i]
		start := len(d.row)
		d.row = append(d.row, 0)
		switch {
		case d.fid:
			d.row = strconv.AppendInt(d.row, pos, 10)
		case i < len(vals):
			d.row = d.appendValue(d.row, f, vals[i])
		}
		n := len(d.row) - start - 1
		d.row[start] = byte(n)
		if n > f.width {
			f.width = n
			grew = true
		}
		if f.kind == mapcommons.AttrFloat && n > 0 {
			txt := d.row[start+1:]
			if dot := bytes.IndexByte(txt, '.'); dot >= 0 && bytes.IndexByte(txt, 'e') < 0 {
				if dec := len(txt) - dot - 1; dec > f.dec {
					f.dec = dec
					grew = true
				}
			}
		}
		if f.iso && n > 0 {
			if !wISODate(d.row[start+1:]) {
				f.iso = false
				grew = true
			}
		}
	}
	if grew {
		d.recLen = 1
		for i := range d.fields {
			d.recLen += d.fields[i].finalWidth()
		}
	}
	return d.recLen
}

// wISODate reports whether b is a date the reader takes back from a D
// field: YYYY-MM-DD or YYYYMMDD, a valid day (parseDate without its result).
func wISODate(b []byte) bool {
	_, _, _, ok := splitDate(b)
	return ok
}

// appendValue appends the text of v for field f (nothing for a blank). A
// value of another type than the field's is converted where that is exact
// (an integral float in an integer field, a numeric string in a number
// field), and blank otherwise.
func (d *wDBF) appendValue(dst []byte, f *wField, v any) []byte {
	if v == nil {
		return dst
	}
	switch f.kind {
	case mapcommons.AttrInteger:
		switch v := v.(type) {
		case int64:
			return strconv.AppendInt(dst, v, 10)
		case int:
			return strconv.AppendInt(dst, int64(v), 10)
		case float64:
			if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
				return strconv.AppendInt(dst, int64(v), 10)
			}
		case string:
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return strconv.AppendInt(dst, n, 10)
			}
		}
		return dst
	case mapcommons.AttrFloat:
		switch v := v.(type) {
		case float64:
			return wAppendFloat(dst, v)
		case int64:
			return wAppendFloat(dst, float64(v))
		case int:
			return wAppendFloat(dst, float64(v))
		case string:
			if x, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return wAppendFloat(dst, x)
			}
		}
		return dst
	case mapcommons.AttrBoolean:
		switch v := v.(type) {
		case bool:
			if v {
				return append(dst, 'T')
			}
			return append(dst, 'F')
		case string:
			if b, err := strconv.ParseBool(v); err == nil {
				return d.appendValue(dst, f, b)
			}
		case int64:
			return d.appendValue(dst, f, v != 0)
		}
		return dst
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	case time.Time:
		s = v.Format(time.DateOnly)
	default:
		s = fmt.Sprint(v)
	}
	return append(dst, wTruncateUTF8(s, wDBFMaxText)...)
}

// wAppendFloat appends the shortest decimal text that parses back to v:
// plain digits for 1e-6 <= |v| < 1e21, exponent form beyond; non-finite
// values are blank (dBase has no NaN or infinity).
func wAppendFloat(dst []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return dst
	}
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(dst, v, 'e', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// wTruncateUTF8 cuts s to at most n bytes without splitting a character.
func wTruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// wDBFHeaderLen is the length of the header with its field descriptors.
func (d *wDBF) headerLen() int { return 32 + 32*len(d.fields) + 1 }

// size is the size of a .dbf of n records with the widths seen so far.
func (d *wDBF) size(n int64) int64 {
	return int64(d.headerLen()) + n*int64(d.recLen) + 1
}

// header encodes the final header for n records.
func (d *wDBF) header(n int64, updated time.Time) []byte {
	h := make([]byte, 32, d.headerLen())
	h[0] = 0x03 // dBase III without memo
	h[1] = byte(updated.Year() - 1900)
	h[2] = byte(updated.Month())
	h[3] = byte(updated.Day())
	binary.LittleEndian.PutUint32(h[4:], uint32(n))
	binary.LittleEndian.PutUint16(h[8:], uint16(d.headerLen()))
	binary.LittleEndian.PutUint16(h[10:], uint16(d.recLen))
	// h[29], the language driver, stays 0: no driver id means UTF-8, and
	// the .cpg says so.
	for i := range d.fields {
		f := &d.fields[i]
		var desc [32]byte
		copy(desc[:11], f.name)
		desc[11] = f.finalType()
		desc[16] = byte(f.finalWidth())
		desc[17] = byte(f.finalDec())
		h = append(h, desc[:]...)
	}
	return append(h, descEnd)
}

// copyRecords turns n compact records read from r into fixed-width records
// written to w.
func (d *wDBF) copyRecords(w io.Writer, r *bufio.Reader, n int64) error {
	type col struct {
		off, width int
		right      bool // numbers are right-aligned
		date       bool // YYYY-MM-DD to YYYYMMDD
	}
	cols := make([]col, len(d.fields))
	off := 1
	for i := range d.fields {
		f := &d.fields[i]
		c := col{off: off, width: f.finalWidth()}
		switch f.finalType() {
		case 'N':
			c.right = true
		case 'D':
			c.date = true
		}
		cols[i] = c
		off += c.width
	}
	rec := make([]byte, d.recLen)
	var scratch [256]byte
	bad := func(err error) error {
		return fmt.Errorf("shapefile: reading back the temporary records: %w", err)
	}
	for range n {
		for i := range rec {
			rec[i] = ' '
		}
		for _, c := range cols {
			l, err := r.ReadByte()
			if err != nil {
				return bad(err)
			}
			field := rec[c.off : c.off+c.width]
			switch {
			case l == 0: // blank
			case c.date:
				t := scratch[:l]
				if _, err = io.ReadFull(r, t); err == nil {
					if len(t) == 10 {
						copy(field, t[0:4])
						copy(field[4:], t[5:7])
						copy(field[6:], t[8:10])
					} else {
						copy(field, t)
					}
				}
			case int(l) > c.width:
				return bad(fmt.Errorf("a value of %d bytes in a field of %d", l, c.width))
			case c.right:
				_, err = io.ReadFull(r, field[c.width-int(l):])
			default:
				_, err = io.ReadFull(r, field[:l])
			}
			if err != nil {
				return bad(err)
			}
		}
		if _, err := w.Write(rec); err != nil {
			return err
		}
	}
	return nil
}
