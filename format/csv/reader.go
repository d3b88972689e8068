// Package csv reads uploaded CSV files as features and writes datasets as
// CSV.
//
// The Reader reads its input twice: pass 1 (in Open) finds the delimiter,
// the header, the coordinate columns and the type of every attribute column
// and validates every row, so that a bad file is refused before the caller
// stores anything; pass 2 (Next) streams the features. Only per-column state
// is kept between rows, and one record is never more than 16 MiB: a byte
// scanner under the csv.Reader in pass 1 follows the record structure exactly
// as encoding/csv does and stops a record with more than 1002 cells, a cell
// over 1 MiB or a record over 16 MiB before it is buffered.
//
// Errors name the data row (1-based, counting rows that are not skipped as
// blank, so row n is the feature at Position n-1) and the physical line
// (1-based, the header's first line is 1, quoted line breaks count): the line
// of the offending cell, or where the row starts.
//
// Reading rules beyond the obvious ones:
//
//   - Quotes follow RFC 4180, parsed by encoding/csv with LazyQuotes: for
//     correct files this parses exactly as strict mode (encoding/csv differs
//     only on input strict mode rejects), and it accepts the stray quotes real
//     files have: `12" pipe` in an unquoted field, an undoubled quote inside a
//     quoted field when a delimiter or line end does not follow it. A quoted
//     field still open at the end of the file is an error.
//   - Lines end in LF or CRLF; a file whose first line ends in a lone CR
//     (classic Mac OS) has every CR read as a line end. encoding/csv reads a
//     CRLF inside a quoted cell as LF.
//   - The delimiter is the one of comma, semicolon and tab found most often
//     outside quotes in the header line; comma on a tie or when none occurs.
//   - A UTF-8 byte order mark is dropped; UTF-16 text is refused with a hint.
//   - Blank lines are skipped, and so are rows whose cells are all empty or
//     white space (spreadsheets write ",,," for rows that once had
//     formatting); row numbers count only the rows that are not skipped.
//   - A row with more cells than the header is an error unless the extra
//     cells are all empty or white space (a trailing delimiter).
//   - A cell that is empty is null. In a numeric column a cell of white space
//     only is null too, and spaces around numbers are ignored; string cells
//     are kept exactly as they are.
//   - Type inference: integer when every value is a decimal integer that fits
//     int64 without a leading zero ("0" and "-5" are integers, "007" is not),
//     else float when every value is a finite decimal number in plain or
//     exponent notation (an optional sign, "+" included; "NaN", "Inf", hex
//     and digit separators are not numbers, and the leading-zero rule holds
//     for the integer part, so zip codes such as "02134" stay strings),
//     else string. Integers too big for int64 make the column float (with
//     the precision of float64). Dates stay strings.
//   - Coordinates may have leading zeros and surrounding spaces and, in files
//     delimited by ';' or tab, a decimal comma ("48,85"). Every row needs
//     them.
//   - A lone latitude or longitude column does not count when there is a
//     geometry column: the geometry column is used and the lone column is an
//     attribute. With a latitude/longitude pair a geometry column is an
//     attribute, but for a column named WKT last, right after the pair: that
//     is the copy of the points a Writer adds for GDAL, and it is dropped.
//   - A geometry column holds WKT, EWKT with SRID 4326, or hex (E)WKB as
//     PostGIS exports it (another SRID is an error); an empty geometry is an
//     error like missing coordinates.
//   - A Windows-1252 file (one that is not valid UTF-8) has the five bytes the
//     code page leaves undefined decoded as the C1 controls of the same value
//     (the WHATWG mapping).
package csv

import (
	"bufio"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mapcommons/format/infer"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// Names of the coordinate columns, in order of priority.
var (
	latNames = []string{"latitude", "lat", "y"}
	lonNames = []string{"longitude", "lon", "lng", "long", "x"}
	wktNames = []string{"wkt", "geometry", "the_geom"}
)

// maxFields bounds the cells of one record: the attribute columns plus a
// latitude, a longitude and a WKT column.
const maxFields = mapcommons.MaxAttributes + 3

// Column type candidates tracked in pass 1.
const (
	canInt   = 1
	canFloat = 2
	hasValue = 4
)

// Reader reads features from a CSV file. It is a mapcommons.FeatureSource.
// A Reader is not safe for concurrent use.
type Reader struct {
	rs     io.ReadSeeker
	sn     sniffed
	cp1252 bool

	header         []string // raw header cells
	latCol, lonCol int      // -1 when the geometry comes from wktCol
	wktCol         int      // -1 when the geometry comes from latCol and lonCol
	attrCol        []int    // header index of each attribute
	attrs          []mapcommons.Attribute
	types          []mapcommons.AttrType
	rows           int64 // rows counted in pass 1
	decimalComma   bool

	cr     *csv.Reader
	in     *input // under cr when it checks (pass 1) or translates CR line ends
	feat   mapcommons.Feature
	pos    int64
	sticky format.Sticky
}

var _ mapcommons.FeatureSource = (*Reader)(nil)

// Open reads the whole input once (pass 1: delimiter, header, coordinate
// columns, column types, validation of every row), then seeks back to the
// start; Next then streams pass 2. The input is read from its offset 0.
// Bad input gives a *mapcommons.Error with code EINVALID naming the row and
// line; errors of rs are returned wrapped.
func Open(rs io.ReadSeeker) (*Reader, error) {
	sn, err := sniff(rs)
	if err != nil {
		return nil, err
	}
	r := &Reader{rs: rs, sn: sn, decimalComma: sn.delim != ','}
	if err := r.pass1(); err != nil {
		return nil, err
	}
	if err := r.start(false); err != nil {
		return nil, err
	}
	if _, err := r.read(); err != nil { // the header
		return nil, r.readError(err, 0)
	}
	return r, nil
}

// start seeks to the first byte after the BOM and sets up a csv.Reader.
func (r *Reader) start(check bool) error {
	if _, err := r.rs.Seek(r.sn.bomLen, io.SeekStart); err != nil {
		return ioError(err)
	}
	var src io.Reader = r.rs
	r.in = nil
	if check || r.sn.crOnly {
		r.in = newInput(r.rs, r.sn, check, maxFields)
		src = r.in
	}
	r.cr = csv.NewReader(bufio.NewReaderSize(src, bufSize))
	r.cr.Comma = rune(r.sn.delim)
	r.cr.LazyQuotes = true
	r.cr.FieldsPerRecord = -1
	r.cr.ReuseRecord = true
	return nil
}

// read returns the next record that is not blank.
func (r *Reader) read() ([]string, error) {
	for {
		rec, err := r.cr.Read()
		if err != nil {
			return nil, err
		}
		for _, f := range rec {
			if !isBlank(f) {
				return rec, nil
			}
		}
	}
}

func invalid(format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, format, args...)
}

// rowError reports bad input in data row row (0 for the header) whose
// offending cell is cell (-1 for the row as a whole).
func (r *Reader) rowError(row int64, cell int, format string, args ...any) error {
	if cell < 0 {
		cell = 0
	}
	line, _ := r.cr.FieldPos(cell)
	msg := fmt.Sprintf(format, args...)
	if row == 0 {
		return invalid("header (line %d): %s", line, msg)
	}
	return invalid("row %d (line %d): %s", row, line, msg)
}

// readError turns an error of the csv.Reader met while reading data row row
// (0: the header) into the error to return.
func (r *Reader) readError(err error, row int64) error {
	var le *limitError
	var pe *csv.ParseError
	where := func(line int64) string {
		if row == 0 {
			return fmt.Sprintf("header (line %d)", line)
		}
		return fmt.Sprintf("row %d (line %d)", row, line)
	}
	switch {
	case err == io.EOF && row == 0:
		return invalid("the file is empty: no header row")
	case err == io.EOF:
		return invalid("the file changed while it was read")
	case errors.As(err, &le):
		switch le.kind {
		case tooManyFields:
			if row == 0 {
				return invalid("%s: more than %d columns (at most %d attribute columns)", where(le.line), maxFields, mapcommons.MaxAttributes)
			}
			return invalid("%s: more than %d cells", where(le.line), maxFields)
		case fieldTooLong:
			return invalid("%s: %s is longer than 1 MiB", where(le.line), r.cellName(le.field))
		case recordTooLong:
			return invalid("%s: longer than 16 MiB", where(le.line))
		default:
			return invalid("%s: the quoted field opened on line %d is never closed", where(le.line), le.fieldLine)
		}
	case errors.As(err, &pe):
		return invalid("%s: %v", where(int64(pe.StartLine)), pe.Err)
	}
	return err
}

// cellName names cell i of a row for a message.
func (r *Reader) cellName(i int) string {
	if i < len(r.header) {
		name := trimSpace(r.header[i])
		if r.cp1252 {
			name = decode1252(name)
		}
		return fmt.Sprintf("cell %d (%s)", i+1, quote(name))
	}
	return fmt.Sprintf("cell %d", i+1)
}

// findColumn returns the index of the first header cell equal (ignoring case
// and surrounding space) to the first of names that occurs, or -1.
func findColumn(header []string, names []string) int {
	for _, n := range names {
		for i, h := range header {
			if strings.EqualFold(trimSpace(h), n) {
				return i
			}
		}
	}
	return -1
}

func (r *Reader) layout() error {
	h := r.header
	r.latCol, r.lonCol, r.wktCol = findColumn(h, latNames), findColumn(h, lonNames), -1
	if r.latCol < 0 || r.lonCol < 0 {
		if r.wktCol = findColumn(h, wktNames); r.wktCol >= 0 {
			r.latCol, r.lonCol = -1, -1
		} else if r.latCol >= 0 {
			return r.rowError(0, -1, "a latitude column but no longitude column (longitude, lon, lng, long or x)")
		} else if r.lonCol >= 0 {
			return r.rowError(0, -1, "a longitude column but no latitude column (latitude, lat or y)")
		} else {
			return invalid("no coordinate columns: looked for latitude/lat/y and longitude/lon/lng/long/x, or a WKT column wkt/geometry/the_geom")
		}
	}
	skip := -1
	if n := len(h); r.wktCol < 0 && n >= 3 && r.latCol == n-3 && r.lonCol == n-2 && strings.EqualFold(trimSpace(h[n-1]), "wkt") {
		skip = n - 1 // the points' copy a Writer adds for GDAL
	}
	for i := range h {
		if i != r.latCol && i != r.lonCol && i != r.wktCol && i != skip {
			r.attrCol = append(r.attrCol, i)
		}
	}
	if len(r.attrCol) > mapcommons.MaxAttributes {
		return invalid("too many attribute columns (%d, at most %d)", len(r.attrCol), mapcommons.MaxAttributes)
	}
	return nil
}

// pass1 reads and checks the whole input.
func (r *Reader) pass1() error {
	if err := r.start(true); err != nil {
		return err
	}
	rec, err := r.read()
	if err != nil {
		return r.readError(err, 0)
	}
	r.header = make([]string, len(rec))
	for i, f := range rec {
		r.header[i] = strings.Clone(f)
	}
	if err := r.layout(); err != nil {
		return err
	}
	cands := make([]uint8, len(r.attrCol))
	for i := range cands {
		cands[i] = canInt | canFloat
	}
	var geom []byte
	var row int64
	for {
		rec, err := r.read()
		if err == io.EOF {
			break
		} else if err != nil {
			return r.readError(err, row+1)
		}
		row++
		if err := r.checkWidth(rec, row); err != nil {
			return err
		}
		if geom, err = r.geometry(rec, row, geom[:0]); err != nil {
			return err
		}
		for i, col := range r.attrCol {
			c := cands[i]
			if c&(canInt|canFloat) == 0 || col >= len(rec) {
				continue
			}
			s := trimSpace(rec[col])
			if s == "" {
				continue
			}
			switch infer.NumberKind(s, true) {
			case infer.IntNumber:
				cands[i] = c | hasValue
			case infer.FloatNumber:
				cands[i] = c&^canInt | hasValue
			default:
				cands[i] = hasValue
			}
		}
	}
	r.rows = row
	r.cp1252 = !r.in.validUTF8()

	r.attrs = make([]mapcommons.Attribute, len(r.attrCol))
	r.types = make([]mapcommons.AttrType, len(r.attrCol))
	for i, col := range r.attrCol {
		name := trimSpace(r.header[col])
		if r.cp1252 {
			name = decode1252(name)
		}
		t := mapcommons.AttrString
		switch c := cands[i]; {
		case c&hasValue == 0:
		case c&canInt != 0:
			t = mapcommons.AttrInteger
		case c&canFloat != 0:
			t = mapcommons.AttrFloat
		}
		r.attrs[i] = mapcommons.Attribute{Name: name, Type: t}
		r.types[i] = t
	}
	return mapcommons.NormalizeAttributes(r.attrs)
}

// checkWidth refuses a row with more cells than the header unless the extra
// cells are blank.
func (r *Reader) checkWidth(rec []string, row int64) error {
	for i := len(r.header); i < len(rec); i++ {
		if !isBlank(rec[i]) {
			return r.rowError(row, i, "%d cells, but the header has %d columns", len(rec), len(r.header))
		}
	}
	return nil
}

// geometry appends the WKB of the row's coordinates to dst.
func (r *Reader) geometry(rec []string, row int64, dst []byte) ([]byte, error) {
	if r.wktCol >= 0 {
		return r.wktGeometry(rec, row, dst)
	}
	lat, err := r.coord(rec, row, r.latCol, "latitude", 90)
	if err != nil {
		return nil, err
	}
	lon, err := r.coord(rec, row, r.lonCol, "longitude", 180)
	if err != nil {
		return nil, err
	}
	return wkb.AppendPoint(dst, lon, lat), nil
}

func (r *Reader) coord(rec []string, row int64, col int, what string, limit float64) (float64, error) {
	if col >= len(rec) || isBlank(rec[col]) {
		return 0, r.rowError(row, min(col, len(rec)-1), "%s is empty", what)
	}
	v, ok := parseCoord(rec[col], r.decimalComma)
	if !ok {
		return 0, r.rowError(row, col, "%s %s is not a number", what, quote(rec[col]))
	}
	if v < -limit || v > limit {
		return 0, r.rowError(row, col, "%s %s is out of range [%g, %g]", what, quote(trimSpace(rec[col])), -limit, limit)
	}
	return v, nil
}

// wktGeometry parses the geometry cell: WKT, EWKT or hex (E)WKB.
func (r *Reader) wktGeometry(rec []string, row int64, dst []byte) ([]byte, error) {
	col := r.wktCol
	if col >= len(rec) || isBlank(rec[col]) {
		return nil, r.rowError(row, min(col, len(rec)-1), "geometry is empty")
	}
	s := trimSpace(rec[col])
	var g []byte
	if isHexWKB(s) {
		b, err := hex.DecodeString(s)
		if err == nil {
			if srid, ok := ewkbSRID(b); ok && srid != 4326 {
				return nil, r.rowError(row, col, "geometry has SRID %d; only 4326 (longitude/latitude) is supported", srid)
			}
			g, err = wkb.Normalize(b)
		}
		if err != nil {
			return nil, r.rowError(row, col, "geometry %s is not valid WKB: %v", quote(s), err)
		}
	} else {
		if len(s) >= 5 && strings.EqualFold(s[:5], "SRID=") {
			if i := strings.IndexByte(s, ';'); i > 0 && trimSpace(s[5:i]) != "4326" {
				return nil, r.rowError(row, col, "geometry has SRID %s; only 4326 (longitude/latitude) is supported", quote(trimSpace(s[5:i])))
			}
		}
		var err error
		if g, err = wkb.ParseWKT(s); err != nil {
			return nil, r.rowError(row, col, "geometry %s is not valid WKT: %v", quote(s), err)
		}
	}
	b, ok, err := wkb.BoundsOf(g)
	if err != nil || !ok {
		return nil, r.rowError(row, col, "geometry %s is empty", quote(s))
	}
	if g, ok, err = wkb.ClampLonLatWKB(nil, g, b); err != nil || !ok {
		if b.MinX < -180 || b.MaxX > 180 {
			return nil, r.rowError(row, col, "geometry %s has a longitude out of range [-180, 180]", quote(s))
		}
		return nil, r.rowError(row, col, "geometry %s has a latitude out of range [-90, 90]", quote(s))
	}
	return append(dst, g...), nil
}

// isHexWKB reports whether s looks like hex WKB: an even number of hex
// digits starting with a byte-order byte 00 or 01.
func isHexWKB(s string) bool {
	if len(s) < 10 || len(s)%2 != 0 || s[0] != '0' || (s[1] != '0' && s[1] != '1') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if !isDigit(s[i]) && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ewkbSRID returns the SRID of an EWKB value that has one.
func ewkbSRID(b []byte) (uint32, bool) {
	if len(b) < 9 || b[0] > 1 {
		return 0, false
	}
	var bo binary.ByteOrder = binary.BigEndian
	if b[0] == 1 {
		bo = binary.LittleEndian
	}
	if bo.Uint32(b[1:])&0x20000000 == 0 {
		return 0, false
	}
	return bo.Uint32(b[5:]), true
}

// Attributes returns the attribute columns (all but the coordinate columns),
// their names normalised by mapcommons.NormalizeAttributes, their types
// inferred in pass 1.
func (r *Reader) Attributes() []mapcommons.Attribute {
	return append([]mapcommons.Attribute(nil), r.attrs...)
}

// Next returns the next feature: Values typed per attribute (int64, float64,
// string or nil), Geometry the point of the coordinate columns or the parsed
// geometry column, Position the zero-based index of the row. It returns
// io.EOF after the last feature, and after an error that error again. The
// feature, its Values and its Geometry are reused by the following call;
// string values stay valid (they share memory with their row's text).
func (r *Reader) Next() (*mapcommons.Feature, error) { return r.sticky.Next(r.next) }

func (r *Reader) next() (*mapcommons.Feature, error) {
	row := r.pos + 1
	rec, err := r.read()
	if err == io.EOF && r.pos == r.rows {
		return nil, io.EOF
	} else if err != nil {
		return nil, r.readError(err, row)
	}
	if r.pos >= r.rows {
		return nil, invalid("the file changed while it was read")
	}
	f := &r.feat
	if f.Geometry, err = r.geometry(rec, row, f.Geometry[:0]); err != nil {
		return nil, err
	}
	if cap(f.Values) < len(r.attrCol) {
		f.Values = make([]any, len(r.attrCol))
	}
	f.Values = f.Values[:len(r.attrCol)]
	for i, col := range r.attrCol {
		f.Values[i] = nil
		if col >= len(rec) || rec[col] == "" {
			continue
		}
		s := rec[col]
		switch r.types[i] {
		case mapcommons.AttrInteger:
			if t := trimSpace(s); t != "" {
				v, err := parseInt(t)
				if err != nil {
					return nil, r.rowError(row, col, "the file changed while it was read")
				}
				f.Values[i] = v
			}
		case mapcommons.AttrFloat:
			if t := trimSpace(s); t != "" {
				f.Values[i] = infer.ParseFloat(t)
			}
		default:
			if r.cp1252 {
				s = decode1252(s)
			}
			f.Values[i] = s
		}
	}
	f.Position = r.pos
	r.pos++
	return f, nil
}
