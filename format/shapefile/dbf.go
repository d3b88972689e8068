package shapefile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"mapcommons"
)

// textEncoding is the encoding of the text in a .dbf.
type textEncoding int

const (
	encAuto    textEncoding = iota // unknown: UTF-8 where valid, else Windows-1252
	encUTF8                        // UTF-8, invalid sequences replaced by U+FFFD
	encLatin1                      // ISO-8859-1
	encWindows                     // Windows-1252
)

// parseCPG returns the encoding a .cpg names; a blank one means unknown.
func parseCPG(cpg string) (textEncoding, error) {
	s := strings.TrimSpace(strings.TrimPrefix(cpg, "\uFEFF"))
	if s == "" {
		return encAuto, nil
	}
	key := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == ' ' {
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
	switch key {
	case "UTF8", "65001":
		return encUTF8, nil
	case "ISO88591", "88591", "LATIN1":
		return encLatin1, nil
	case "1252", "CP1252", "WINDOWS1252", "ANSI1252":
		return encWindows, nil
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return 0, invalid("the .cpg names the text encoding %q, which is not supported (use UTF-8, ISO-8859-1 or Windows-1252)", s)
}

// ldidEncoding returns the encoding a dBase language driver id names:
// the Windows ANSI (code page 1252) drivers, or unknown.
func ldidEncoding(ldid byte) textEncoding {
	switch ldid {
	case 0x03, 0x57, 0x58, 0x59:
		return encWindows
	}
	return encAuto
}

// field is one column of a .dbf.
type field struct {
	name  string
	typ   byte // upper-cased dBase type letter
	off   int  // offset within the record
	width int
	dec   int
	kind  mapcommons.AttrType
}

// dbfReader streams the records of a .dbf.
type dbfReader struct {
	br     *bufio.Reader
	count  int // records declared by the header, deleted ones included
	recLen int
	fields []field
	enc    textEncoding
	rec    []byte // the current record
	text   []byte // scratch for decoding text
}

const (
	dbfHeaderSize = 32
	descSize      = 32
	descEnd       = 0x0D
)

func openDBF(f io.ReadSeeker, enc textEncoding) (*dbfReader, error) {
	size, err := fileSize(f)
	if err != nil {
		return nil, err
	}
	d := &dbfReader{br: bufio.NewReaderSize(f, int(min(size, bufSize)))}
	var h [dbfHeaderSize]byte
	if _, err := io.ReadFull(d.br, h[:]); err != nil {
		return nil, unexpectedEOF(err, "the .dbf is too short for a dBase header (%d bytes, need %d)", size, dbfHeaderSize)
	}
	count := int64(binary.LittleEndian.Uint32(h[4:]))
	hdrLen := int(binary.LittleEndian.Uint16(h[8:]))
	d.recLen = int(binary.LittleEndian.Uint16(h[10:]))
	if enc == encAuto {
		enc = ldidEncoding(h[29])
	}
	d.enc = enc
	if hdrLen < dbfHeaderSize+1 {
		return nil, invalid("the .dbf header length %d is too short (at least %d)", hdrLen, dbfHeaderSize+1)
	}
	if int64(hdrLen) > size {
		return nil, invalid("the .dbf header length %d is beyond the end of the file (%d bytes)", hdrLen, size)
	}
	rest := make([]byte, hdrLen-dbfHeaderSize)
	if _, err := io.ReadFull(d.br, rest); err != nil {
		return nil, unexpectedEOF(err, "the .dbf header is truncated")
	}
	off := 1 // the deletion flag
	p := 0
	for ; p+descSize <= len(rest) && rest[p] != descEnd; p += descSize {
		if len(d.fields) == mapcommons.MaxAttributes {
			return nil, invalid("the .dbf has more than %d fields", mapcommons.MaxAttributes)
		}
		desc := rest[p : p+descSize]
		name := desc[:11]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		fl := field{
			name:  d.decode(bytes.TrimSpace(name)),
			typ:   byte(unicode.ToUpper(rune(desc[11]))),
			off:   off,
			width: int(desc[16]),
			dec:   int(desc[17]),
		}
		if fl.typ != 'N' && fl.typ != 'F' {
			// Only numbers have decimals; in other fields writers of long
			// text keep the high byte of the width there (as shapelib reads it).
			fl.width += 256 * fl.dec
			fl.dec = 0
		}
		switch fl.typ {
		case 'N':
			if fl.dec == 0 && fl.width <= 18 {
				fl.kind = mapcommons.AttrInteger
			} else {
				fl.kind = mapcommons.AttrFloat
			}
		case 'F':
			fl.kind = mapcommons.AttrFloat
		case 'L':
			fl.kind = mapcommons.AttrBoolean
		case 'D':
			fl.kind = mapcommons.AttrDate
		default:
			fl.kind = mapcommons.AttrString
		}
		off += fl.width
		d.fields = append(d.fields, fl)
	}
	if p < len(rest) && rest[p] != descEnd {
		return nil, invalid("the .dbf header length %d cuts its field descriptors short (no 0x0D after field %d)", hdrLen, len(d.fields))
	}
	if off > d.recLen {
		return nil, invalid("the .dbf record length %d is shorter than its %d fields need (%d bytes)", d.recLen, len(d.fields), off)
	}
	if need := int64(hdrLen) + count*int64(d.recLen); need > size {
		have := (size - int64(hdrLen)) / int64(d.recLen)
		return nil, invalid("the .dbf is truncated: its header declares %d records of %d bytes, the file holds %d", count, d.recLen, have)
	}
	d.count = int(count)
	d.rec = make([]byte, d.recLen)
	return d, nil
}

// readRecord reads the record of the zero-based index and reports whether
// it is marked deleted.
func (d *dbfReader) readRecord(index int) (deleted bool, err error) {
	if _, err := io.ReadFull(d.br, d.rec); err != nil {
		return false, unexpectedEOF(err, "the .dbf record %d is truncated", index+1)
	}
	return d.rec[0] == '*', nil
}

// decodeValues decodes the fields of the current record into vals.
func (d *dbfReader) decodeValues(vals []any) {
	for i := range d.fields {
		f := &d.fields[i]
		vals[i] = d.value(f, d.rec[f.off:f.off+f.width])
	}
}

func (d *dbfReader) value(f *field, raw []byte) any {
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	switch f.typ {
	case 'C':
		return d.decode(bytes.TrimRight(raw, " "))
	case 'N', 'F':
		return parseNumber(bytes.TrimSpace(raw), f.kind == mapcommons.AttrInteger)
	case 'L':
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 {
			switch raw[0] {
			case 'T', 't', 'Y', 'y':
				return true
			case 'F', 'f', 'N', 'n':
				return false
			}
		}
		return nil
	case 'D':
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || string(raw) == "00000000" {
			return nil
		}
		if s, ok := parseDate(raw); ok {
			return s
		}
		return d.decode(raw)
	}
	return d.decode(bytes.TrimSpace(raw))
}

// parseNumber parses the trimmed text of a numeric field; blank, junk and
// non-finite values are nil. An integer column takes integral values written
// with a fraction or exponent too ("12.0"), and nil for any other.
func parseNumber(b []byte, integer bool) any {
	if len(b) == 0 || b[0] == '*' {
		return nil
	}
	if integer {
		if v, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			return v
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	if integer {
		if v != math.Trunc(v) || v < -(1<<63) || v >= 1<<63 {
			return nil
		}
		return int64(v)
	}
	return v
}

// parseDate turns a dBase date YYYYMMDD (or an already formatted
// YYYY-MM-DD) into "YYYY-MM-DD"; ok is false when it is not a valid date.
func parseDate(b []byte) (string, bool) {
	y, m, dd, ok := splitDate(b)
	if !ok {
		return "", false
	}
	var out [10]byte
	copy(out[0:4], y)
	out[4] = '-'
	copy(out[5:7], m)
	out[7] = '-'
	copy(out[8:10], dd)
	return string(out[:]), true
}

// splitDate returns the year, month and day digits of a date YYYYMMDD or
// YYYY-MM-DD; ok is false when b is neither or not a valid day.
func splitDate(b []byte) (y, m, dd []byte, ok bool) {
	switch {
	case len(b) == 8:
		y, m, dd = b[0:4], b[4:6], b[6:8]
	case len(b) == 10 && b[4] == '-' && b[7] == '-':
		y, m, dd = b[0:4], b[5:7], b[8:10]
	default:
		return nil, nil, nil, false
	}
	num := func(p []byte) int {
		n := 0
		for _, c := range p {
			if c < '0' || c > '9' {
				return -1
			}
			n = 10*n + int(c-'0')
		}
		return n
	}
	year, month, day := num(y), num(m), num(dd)
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return nil, nil, nil, false
	}
	return y, m, dd, true
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// decode turns text of the .dbf into a string in the reader's encoding.
func (d *dbfReader) decode(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b)
	}
	var cm *charmap.Charmap
	switch d.enc {
	case encUTF8:
		if utf8.Valid(b) {
			return string(b)
		}
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	case encAuto:
		if utf8.Valid(b) {
			return string(b)
		}
		cm = charmap.Windows1252
	case encLatin1:
		cm = charmap.ISO8859_1
	default:
		cm = charmap.Windows1252
	}
	t := d.text[:0]
	for _, c := range b {
		t = utf8.AppendRune(t, cm.DecodeByte(c))
	}
	d.text = t
	return string(t)
}
