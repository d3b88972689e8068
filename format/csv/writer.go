package csv

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Writer streams a dataset as CSV: a header of the attribute names, then the
// geometry columns, then one line per feature.
//
// The geometry is in a column named "WKT" holding WKT, which is the name
// GDAL's CSV driver (and so QGIS opening the file) takes as geometry
// without being told. A points-only dataset has "latitude" and "longitude"
// columns before it, as spreadsheets and QGIS's delimited-text dialog
// read them (empty cells for a null geometry, and an empty WKT). When an
// attribute already has such a name (ignoring case), they are "geometry",
// then "_geometry" (points: "_latitude" and "_longitude", and no WKT
// column: the attribute named WKT is the one GDAL would read), then those
// with a numeric suffix. A dataset without attributes and not of points
// starts with an "id" column of the features' ids: GDAL opens no CSV of one
// column. A Reader reads the file back (the WKT column after latitude and
// longitude ends as it started: see Reader) unless an attribute name is
// one the Reader prefers as a coordinate column (say "lat" and "lon" next
// to a WKT column).
//
// Cells are quoted as RFC 4180 asks when they contain a comma, a quote, CR
// or LF, or begin or end with a space; also when they contain a semicolon or
// a tab, so that a header full of them cannot make a reader that sniffs the
// delimiter (as Reader does) pick the wrong one. The delimiter is a comma and
// lines end in "\n" (RFC 4180 says CRLF, but every reader takes LF, and it is
// what Unix tools expect). Values: int64 in decimal, float64 in the shortest
// exact form of wkb.AppendFloat with ".0" added to integral values so that
// the column reads back as float, bool as true/false, strings as they are,
// nil as an empty cell.
type Writer struct {
	w         *bufio.Writer
	attrs     []mapcommons.Attribute
	points    bool
	geomNames []string
	ids       bool // an "id" column first: no attributes, not points
	header    bool
	line      []byte
	scratch   []byte
	err       error
}

// NewWriter returns a Writer of a dataset with the attributes attrs;
// pointsOnly selects latitude and longitude columns instead of WKT.
func NewWriter(w io.Writer, attrs []mapcommons.Attribute, pointsOnly bool) *Writer {
	taken := make(map[string]bool, len(attrs))
	for _, a := range attrs {
		taken[strings.ToLower(a.Name)] = true
	}
	free := func(names ...string) bool {
		for _, n := range names {
			if taken[strings.ToLower(n)] {
				return false
			}
		}
		return true
	}
	var names []string
	if pointsOnly {
		names = []string{"latitude", "longitude"}
		if !free(names...) {
			names = []string{"_latitude", "_longitude"}
			for n := 2; !free(names...); n++ {
				names = []string{"_latitude_" + strconv.Itoa(n), "_longitude_" + strconv.Itoa(n)}
			}
		}
		if free(WKTColumn) {
			names = append(names, WKTColumn)
		}
	} else {
		names = []string{WKTColumn}
		for i, n := 0, WKTColumn; !free(n); i++ {
			switch i {
			case 0:
				n = "geometry"
			case 1:
				n = "_geometry"
			default:
				n = "_geometry_" + strconv.Itoa(i)
			}
			names[0] = n
		}
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), attrs: attrs, points: pointsOnly, geomNames: names, ids: len(attrs) == 0 && !pointsOnly}
}

// WKTColumn is the name of the geometry column the Writer writes, the one
// GDAL's CSV driver reads as WKT geometry by default.
const WKTColumn = "WKT"

// Write writes one feature, whose Values are aligned with the attributes
// (missing trailing values are written as null).
func (w *Writer) Write(f *mapcommons.Feature) error {
	if w.err != nil {
		return w.err
	}
	if err := w.writeHeader(); err != nil {
		return err
	}
	if len(f.Values) > len(w.attrs) {
		return fmt.Errorf("csv: feature %d has %d values for %d attributes", f.Position, len(f.Values), len(w.attrs))
	}
	b := w.line[:0]
	if w.ids {
		b = append(strconv.AppendInt(b, f.ID, 10), ',')
	}
	for i := range w.attrs {
		if i > 0 {
			b = append(b, ',')
		}
		if i < len(f.Values) {
			b = w.appendValue(b, f.Values[i])
		}
	}
	if len(w.attrs) > 0 {
		b = append(b, ',')
	}
	var err error
	if b, err = w.appendGeometry(b, f); err != nil {
		return err
	}
	if len(b) == 0 {
		b = append(b, '"', '"') // a lone empty cell; an empty line would be skipped
	}
	b = append(b, '\n')
	w.line = b
	if _, err := w.w.Write(b); err != nil {
		w.err = err
	}
	return w.err
}

func (w *Writer) appendGeometry(b []byte, f *mapcommons.Feature) ([]byte, error) {
	if w.points {
		wkt := len(w.geomNames) == 3
		if len(f.Geometry) == 0 {
			if wkt {
				return append(b, ',', ','), nil
			}
			return append(b, ','), nil
		}
		x, y, ok := wkb.PointXY(f.Geometry)
		if !ok {
			g, err := wkb.Decode(f.Geometry)
			if err != nil {
				return b, fmt.Errorf("csv: feature %d: %w", f.Position, err)
			}
			if g.Type != wkb.Point {
				return b, fmt.Errorf("csv: feature %d: a %s in a points-only dataset", f.Position, wkb.TypeName(g.Type))
			}
			if wkt {
				return append(b, ',', ',', 'P', 'O', 'I', 'N', 'T', ' ', 'E', 'M', 'P', 'T', 'Y'), nil
			}
			return append(b, ','), nil // an empty point
		}
		b = wkb.AppendFloat(b, y)
		b = append(b, ',')
		b = wkb.AppendFloat(b, x)
		if wkt {
			b = append(b, ",POINT ("...)
			b = wkb.AppendFloat(b, x)
			b = append(b, ' ')
			b = append(wkb.AppendFloat(b, y), ')')
		}
		return b, nil
	}
	if len(f.Geometry) == 0 {
		return b, nil
	}
	var err error
	if w.scratch, err = wkb.ToWKT(w.scratch[:0], f.Geometry); err != nil {
		return b, fmt.Errorf("csv: feature %d: %w", f.Position, err)
	}
	return appendCell(b, w.scratch), nil
}

// appendValue appends one attribute value.
func (w *Writer) appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return b
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		n := len(b)
		b = wkb.AppendFloat(b, v)
		if bytes.IndexAny(b[n:], ".eE") < 0 {
			b = append(b, '.', '0')
		}
		return b
	case string:
		return appendCell(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	}
	w.scratch = fmt.Append(w.scratch[:0], v)
	return appendCell(b, w.scratch)
}

func needsQuotes[T string | []byte](s T) bool {
	if len(s) == 0 {
		return false
	}
	if c := s[0]; c == ' ' || c == '\t' {
		return true
	}
	if c := s[len(s)-1]; c == ' ' || c == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', '"', '\r', '\n', ';', '\t':
			return true
		}
	}
	return false
}

// appendCell appends s as a cell, quoted when it needs to be.
func appendCell[T string | []byte](b []byte, s T) []byte {
	if !needsQuotes(s) {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

func (w *Writer) writeHeader() error {
	if w.header {
		return nil
	}
	w.header = true
	b := w.line[:0]
	if w.ids {
		b = append(b, "id,"...)
	}
	for _, a := range w.attrs {
		b = appendCell(b, a.Name)
		b = append(b, ',')
	}
	for i, n := range w.geomNames {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, n...)
	}
	b = append(b, '\n')
	w.line = b
	if _, err := w.w.Write(b); err != nil {
		w.err = err
	}
	return w.err
}

// Flush writes the header if no feature was written, then any buffered
// data to the underlying writer.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.writeHeader(); err != nil {
		return err
	}
	if err := w.w.Flush(); err != nil {
		w.err = err
	}
	return w.err
}
