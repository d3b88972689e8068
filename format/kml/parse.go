package kml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Kinds of values a Placemark gives.
const (
	kindData uint8 = iota // ExtendedData Data or SimpleData, by name
	kindName
	kindDescription
	kindTimestamp
	kindBegin
	kindEnd
)

// field is one value of a Placemark.
type field struct {
	kind uint8
	name string // the Data or SimpleData name
	disp string // the Data's displayName
	text string // trimmed
	line int
}

// placemark is what the parser gives for one Placemark.
type placemark struct {
	num, line int
	fields    []field
	geoms     []wkb.Geom
}

// elem is an open element.
type elem struct {
	name string
	line int
}

// parser walks a KML document token by token.
type parser struct {
	d     *xml.Decoder
	g     *guard
	opt   Options
	stack []elem
	buf   []byte
	roots int
	// markup is set once the decoder returned a token other than text: an
	// XML declaration must come before.
	markup bool

	num    int  // Placemarks started so far
	in     bool // inside Placemark num
	pm     placemark
	coords int       // coordinate tuples of the current Placemark
	fbytes int       // value bytes of the current Placemark
	arena  []float64 // the coordinates of the current Placemark

	declared       map[string]string // Schema SimpleField name to type, pass 1 only
	links          *[]string         // NetworkLink hrefs, gathered in pass 1 only
	declaredBytes  int
	docName        string
	docDescription string
}

func newParser(r io.Reader, opt Options) *parser {
	p := &parser{opt: opt}
	p.g = p.newGuard(r, 0)
	p.d = xml.NewDecoder(p.g)
	p.d.Strict = true
	p.d.Entity = xml.HTMLEntity
	p.d.CharsetReader = p.charsetReader
	return p
}

func (p *parser) newGuard(r io.Reader, base int64) *guard {
	return &guard{src: r, base: base, limited: true,
		maxTag: maxTagBytes, text: int64(p.opt.MaxValueBytes) + 64<<10, bigOK: p.opt.MaxCoordBytes + 64<<10}
}

// charsetReader is the decoder's CharsetReader: it puts a decoder of the
// charset between the current guard and a new one, which bounds tokens in
// decoded bytes.
func (p *parser) charsetReader(label string, input io.Reader) (io.Reader, error) {
	if p.markup {
		return nil, errLateDeclaration
	}
	t, ok := charsetTable(label)
	if !ok {
		return nil, &charsetError{label}
	}
	if t == nil {
		return input, nil
	}
	old := p.g
	old.limited = false
	p.g = p.newGuard(&charsetReader{src: old, t: t}, old.base+old.n)
	return p.g, nil
}

func (p *parser) line() int {
	l, _ := p.d.InputPos()
	return l
}

// fail returns an EINVALID error at line, naming the Placemark when inside one.
func (p *parser) fail(line int, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if p.in {
		return mapcommons.Errorf(mapcommons.EINVALID, "kml: line %d: Placemark %d: %s", line, p.num, msg)
	}
	return mapcommons.Errorf(mapcommons.EINVALID, "kml: line %d: %s", line, msg)
}

func (p *parser) top() string {
	if len(p.stack) == 0 {
		return ""
	}
	return p.stack[len(p.stack)-1].name
}

// next returns the next StartElement, EndElement or CharData, keeping the
// stack of open elements and enforcing the limits. Comments and processing
// instructions are skipped; a directive that declares entities is an error.
// At the end of the document it returns io.EOF.
func (p *parser) next() (xml.Token, error) {
	for {
		p.g.arm(p.d.InputOffset(), p.top() == "coordinates")
		t, err := p.d.Token()
		if err != nil {
			return nil, p.xmlError(err)
		}
		if pi, ok := t.(xml.ProcInst); ok && pi.Target == "xml" && p.markup {
			return nil, p.fail(p.line(), "an XML declaration that is not at the start")
		}
		if _, ok := t.(xml.CharData); !ok {
			p.markup = true
		}
		switch t := t.(type) {
		case xml.StartElement:
			line := p.line()
			if len(p.stack) >= p.opt.MaxDepth {
				return nil, p.fail(line, "elements nested more than %d deep", p.opt.MaxDepth)
			}
			if len(p.stack) == 0 {
				if p.roots++; p.roots > 1 {
					return nil, p.fail(line, "a second root element <%s> after the document", t.Name.Local)
				}
				switch t.Name.Local {
				case "kml", "Document", "Folder", "Placemark":
				default:
					return nil, p.fail(line, "the root element is <%s>, not <kml>: not a KML document", t.Name.Local)
				}
			}
			p.stack = append(p.stack, elem{t.Name.Local, line})
			return t, nil
		case xml.EndElement:
			p.stack = p.stack[:len(p.stack)-1]
			return t, nil
		case xml.CharData:
			return t, nil
		case xml.Directive:
			if bytes.Contains(bytes.ToUpper(t), []byte("ENTITY")) {
				return nil, p.fail(p.line(), "a DOCTYPE that declares entities is not allowed (entity expansion)")
			}
		}
	}
}

// xmlError turns an error of the decoder into the error to return.
func (p *parser) xmlError(err error) error {
	var (
		se *xml.SyntaxError
		le *limitError
		ie *ioError
		ce *charsetError
	)
	line := p.line()
	switch {
	case err == io.EOF:
		if p.roots == 0 {
			return mapcommons.Errorf(mapcommons.EINVALID, "kml: the file holds no XML element: not a KML document")
		}
		return io.EOF
	case errors.As(err, &ie):
		return fmt.Errorf("kml: %w", ie.err)
	case errors.As(err, &le):
		top := p.top()
		switch {
		case le.tag:
			return p.fail(line, "a tag longer than %d bytes", le.max)
		case top == "coordinates":
			return p.fail(line, "coordinates: longer than %d bytes", p.opt.MaxCoordBytes)
		case top != "":
			return p.fail(line, "<%s>: text longer than %d bytes", top, p.opt.MaxValueBytes)
		}
		return p.fail(line, "text longer than %d bytes", p.opt.MaxValueBytes)
	case errors.Is(err, errLateDeclaration):
		return p.fail(line, "an XML declaration that is not at the start")
	case errors.As(err, &ce):
		return p.fail(line, "the encoding %q is not supported: use UTF-8 (ISO-8859-1, ISO-8859-15 and windows-1252 are read too)", ce.label)
	case errors.As(err, &se):
		switch {
		case strings.HasPrefix(se.Msg, "unexpected EOF") && len(p.stack) > 0:
			e := p.stack[len(p.stack)-1]
			return p.fail(se.Line, "the file ends before <%s> (line %d) is closed", e.name, e.line)
		case se.Msg == "invalid UTF-8":
			return p.fail(se.Line, "the text is not valid UTF-8: declare its encoding, as in <?xml version=\"1.0\" encoding=\"windows-1252\"?>")
		}
		return p.fail(se.Line, "XML syntax error: %s", se.Msg)
	}
	return p.fail(line, "%v", err)
}

// children calls fn for each child element of the element just started,
// until that element ends; fn consumes the child (reads or skips it).
func (p *parser) children(fn func(t xml.StartElement) error) error {
	depth := len(p.stack)
	for {
		t, err := p.next()
		if err != nil {
			return err
		}
		switch t := t.(type) {
		case xml.EndElement:
			if len(p.stack) < depth {
				return nil
			}
		case xml.StartElement:
			if err := fn(t); err != nil {
				return err
			}
		}
	}
}

// skip consumes the rest of the element just started.
func (p *parser) skip() error {
	depth := len(p.stack)
	for len(p.stack) >= depth {
		if _, err := p.next(); err != nil {
			return err
		}
	}
	return nil
}

// text consumes the rest of the element just started and returns the text
// of it and its descendants, valid until the next call.
func (p *parser) text(limit int64) ([]byte, error) {
	depth := len(p.stack)
	name := p.top()
	p.buf = p.buf[:0]
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		switch t := t.(type) {
		case xml.CharData:
			if int64(len(p.buf))+int64(len(t)) > limit {
				if name == "coordinates" {
					return nil, p.fail(p.line(), "coordinates: longer than %d bytes", limit)
				}
				return nil, p.fail(p.line(), "<%s>: text longer than %d bytes", name, limit)
			}
			p.buf = append(p.buf, t...)
		case xml.EndElement:
			if len(p.stack) < depth {
				return p.buf, nil
			}
		}
	}
}

// value reads the text of the element just started as a value.
func (p *parser) value() (string, error) {
	b, err := p.text(int64(p.opt.MaxValueBytes))
	if err != nil {
		return "", err
	}
	return string(bytes.TrimSpace(b)), nil
}

func attr(se xml.StartElement, local string) (string, bool) {
	for _, a := range se.Attr {
		if a.Name.Local == local && a.Name.Space == "" {
			return a.Value, true
		}
	}
	return "", false
}

// nextPlacemark returns the next Placemark of the document, io.EOF at its
// end. The result is valid until the next call.
func (p *parser) nextPlacemark() (*placemark, error) {
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		se, ok := t.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "Placemark":
			return p.placemark()
		case "Schema": // consumed in both passes, so that both see the same Placemarks
			if err := p.schema(); err != nil {
				return nil, err
			}
		case "NetworkLink":
			if err := p.networkLink(); err != nil {
				return nil, err
			}
		case "name", "description":
			// The name and description of the outermost container.
			if n := len(p.stack); n >= 2 && n <= 3 && (p.stack[n-2].name == "Document" || p.stack[n-2].name == "Folder") &&
				(n == 2 || p.stack[0].name == "kml") {
				v, err := p.value()
				if err != nil {
					return nil, err
				}
				if se.Name.Local == "name" && p.docName == "" {
					p.docName = v
				} else if se.Name.Local == "description" && p.docDescription == "" {
					p.docDescription = v
				}
			}
		}
	}
}

// maxLinks bounds the NetworkLinks a document's pass 1 records.
const maxLinks = 1000

// networkLink reads a NetworkLink, recording its href (Link or the older
// Url) in pass 1.
func (p *parser) networkLink() error {
	return p.children(func(t xml.StartElement) error {
		if (t.Name.Local != "Link" && t.Name.Local != "Url") || p.links == nil {
			return p.skip()
		}
		return p.children(func(t xml.StartElement) error {
			if t.Name.Local != "href" {
				return p.skip()
			}
			v, err := p.value()
			if err == nil && v != "" && len(*p.links) < maxLinks {
				*p.links = append(*p.links, v)
			}
			return err
		})
	})
}

// schema reads the SimpleField declarations of a Schema, recording them
// in pass 1.
func (p *parser) schema() error {
	return p.children(func(t xml.StartElement) error {
		if t.Name.Local == "SimpleField" && p.declared != nil {
			// Declarations only guide inference: past a bound, later
			// ones are ignored.
			name, _ := attr(t, "name")
			typ, _ := attr(t, "type")
			name = strings.TrimSpace(name)
			if _, dup := p.declared[name]; !dup && p.declaredBytes+len(name) <= 1<<20 && len(p.declared) < 10*mapcommons.MaxAttributes {
				p.declared[name] = strings.ToLower(strings.TrimSpace(typ))
				p.declaredBytes += len(name) + 16
			}
		}
		return p.skip()
	})
}

// placemark reads the Placemark just started.
func (p *parser) placemark() (*placemark, error) {
	p.num++
	p.in = true
	pm := &p.pm
	pm.num, pm.line = p.num, p.line()
	pm.fields = pm.fields[:0]
	clear(pm.geoms)
	pm.geoms = pm.geoms[:0]
	p.coords, p.fbytes = 0, 0
	if cap(p.arena) > 1<<20 {
		p.arena = nil
	}
	p.arena = p.arena[:0]
	err := p.children(func(t xml.StartElement) error {
		switch l := t.Name.Local; l {
		case "name":
			return p.field(kindName, "", "")
		case "description":
			return p.field(kindDescription, "", "")
		case "ExtendedData":
			return p.extendedData()
		case "TimeStamp":
			return p.times(map[string]uint8{"when": kindTimestamp})
		case "TimeSpan":
			return p.times(map[string]uint8{"begin": kindBegin, "end": kindEnd})
		default:
			if !isGeometry(l) {
				return p.skip()
			}
			g, ok, err := p.geometry(l)
			if ok {
				pm.geoms = append(pm.geoms, g)
			}
			return err
		}
	})
	if err != nil {
		return nil, err
	}
	p.in = false
	return pm, nil
}

// field reads the element just started as a value of the Placemark.
func (p *parser) field(kind uint8, name, disp string) error {
	line := p.line()
	v, err := p.value()
	if err != nil {
		return err
	}
	return p.addField(field{kind: kind, name: name, disp: disp, text: v, line: line})
}

func (p *parser) addField(f field) error {
	if len(p.pm.fields) >= p.opt.MaxAttributes+5 {
		return p.fail(f.line, "more than %d values", p.opt.MaxAttributes+5)
	}
	if p.fbytes += len(f.text) + len(f.name) + len(f.disp); p.fbytes > maxPlacemarkBytes {
		return p.fail(f.line, "values longer than %d bytes together", maxPlacemarkBytes)
	}
	p.pm.fields = append(p.pm.fields, f)
	return nil
}

// times reads a TimeStamp or TimeSpan: the children named in kinds.
func (p *parser) times(kinds map[string]uint8) error {
	return p.children(func(t xml.StartElement) error {
		if k, ok := kinds[t.Name.Local]; ok {
			return p.field(k, "", "")
		}
		return p.skip()
	})
}

// extendedData reads Data and SchemaData/SimpleData values.
func (p *parser) extendedData() error {
	return p.children(func(t xml.StartElement) error {
		switch t.Name.Local {
		case "Data":
			return p.data(t)
		case "SchemaData":
			return p.schemaData()
		}
		return p.skip()
	})
}

func (p *parser) dataName(se xml.StartElement) (string, error) {
	name, _ := attr(se, "name")
	if len(name) > p.opt.MaxValueBytes {
		return "", p.fail(p.line(), "<%s>: a name longer than %d bytes", se.Name.Local, p.opt.MaxValueBytes)
	}
	return strings.TrimSpace(name), nil
}

// data reads <Data name="x"><displayName>…</displayName><value>…</value></Data>.
func (p *parser) data(se xml.StartElement) error {
	f := field{kind: kindData, line: p.line()}
	var err error
	if f.name, err = p.dataName(se); err != nil {
		return err
	}
	err = p.children(func(t xml.StartElement) error {
		var err error
		switch t.Name.Local {
		case "value":
			f.line = p.line()
			f.text, err = p.value()
		case "displayName":
			f.disp, err = p.value()
		default:
			err = p.skip()
		}
		return err
	})
	if err != nil {
		return err
	}
	return p.addField(f)
}

// schemaData reads <SchemaData><SimpleData name="x">…</SimpleData></SchemaData>.
func (p *parser) schemaData() error {
	return p.children(func(t xml.StartElement) error {
		if t.Name.Local != "SimpleData" {
			return p.skip()
		}
		name, err := p.dataName(t)
		if err != nil {
			return err
		}
		return p.field(kindData, name, "")
	})
}
