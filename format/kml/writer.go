package kml

import (
	"archive/zip"
	"io"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format"
)

// DefaultStyle is the one style of a dataset written by Write.
var DefaultStyle = Style{
	ID:        "default",
	IconColor: &Color{R: 0xE3, G: 0x4A, B: 0x33, A: 0xFF},
	IconScale: 1,
	IconHref:  "http://maps.google.com/mapfiles/kml/shapes/placemark_circle.png",
	LineColor: &Color{R: 0xE3, G: 0x4A, B: 0x33, A: 0xFF},
	LineWidth: 2,
	PolyColor: &Color{R: 0xE3, G: 0x4A, B: 0x33, A: 0x80},
}

// Write writes a dataset as a KML document: a Document named after the
// dataset (its Title, else its Name) with its Description, the Style
// "default", and one Placemark per feature using it. A Placemark's name is
// the value of the attribute called "name" (ignoring case; no name when
// the value is null), else of the one called "title", else the feature's
// Position; its description is the value of the attribute called
// "description". Every other attribute (and "title") goes into
// ExtendedData as Data/value, nulls left out. So the Reader reads back the
// same attributes and values (a float attribute whose values are all
// whole numbers comes back as integer, a boolean as the strings "true" and
// "false", strings trimmed). Google Earth and GDAL's LIBKML driver read
// Data/value; GDAL's older KML driver reads only SchemaData and leaves
// such attributes out.
func Write(w io.Writer, m format.Meta, scan format.Scan) error {
	e := NewEncoder(w)
	title := m.Title
	if title == "" {
		title = m.Name
	}
	if err := e.StartDocument(title, m.Description); err != nil {
		return err
	}
	if err := e.Style(DefaultStyle); err != nil {
		return err
	}
	nm := NewNaming(m.Attributes)
	nameCol, descCol := nm.nameCol, nm.descCol
	var cols []int
	p := Placemark{StyleURL: "#" + DefaultStyle.ID}
	for i, a := range m.Attributes {
		if i != nameCol && i != descCol {
			cols = append(cols, i)
			p.Names = append(p.Names, a.Name)
		}
	}
	p.Values = make([]any, len(cols))
	err := scan(func(f *mapcommons.Feature) error {
		value := func(i int) any {
			if i >= 0 && i < len(f.Values) {
				return f.Values[i]
			}
			return nil
		}
		p.Name = nm.Name(f)
		p.Description = ""
		if v := value(descCol); v != nil {
			p.Description = formatValue(v)
		}
		for j, c := range cols {
			p.Values[j] = value(c)
		}
		p.Geometry = f.Geometry
		return e.Placemark(p)
	})
	if err != nil {
		return err
	}
	return e.EndDocument()
}

// WriteKMZ writes the document of Write as doc.kml in a zip file,
// streaming.
func WriteKMZ(w io.Writer, m format.Meta, scan format.Scan) error {
	zw := zip.NewWriter(w)
	fh := &zip.FileHeader{Name: "doc.kml", Method: zip.Deflate}
	if !m.Updated.IsZero() {
		fh.Modified = m.Updated
	}
	fw, err := zw.CreateHeader(fh)
	if err != nil {
		return err
	}
	if err := Write(fw, m, scan); err != nil {
		return err
	}
	return zw.Close()
}

// Naming picks the attributes a Placemark takes its name and description
// from: the attribute called "name" (ignoring case), else the one called
// "title"; and the one called "description".
type Naming struct{ nameCol, titleCol, descCol int }

// NewNaming finds the naming attributes among attrs.
func NewNaming(attrs []mapcommons.Attribute) Naming {
	n := Naming{-1, -1, -1}
	for i, a := range attrs {
		switch {
		case strings.EqualFold(a.Name, "name") && n.nameCol < 0:
			n.nameCol = i
		case strings.EqualFold(a.Name, "title") && n.titleCol < 0:
			n.titleCol = i
		case strings.EqualFold(a.Name, "description") && n.descCol < 0:
			n.descCol = i
		}
	}
	return n
}

// Name is a feature's Placemark name: its name value (none when that is
// null), else its title value, else its position.
func (n Naming) Name(f *mapcommons.Feature) string {
	value := func(i int) any {
		if i >= 0 && i < len(f.Values) {
			return f.Values[i]
		}
		return nil
	}
	switch {
	case n.nameCol >= 0:
		if v := value(n.nameCol); v != nil {
			return formatValue(v)
		}
		return ""
	case value(n.titleCol) != nil:
		return formatValue(value(n.titleCol))
	}
	return strconv.FormatInt(f.Position, 10)
}
