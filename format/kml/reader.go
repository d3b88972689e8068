package kml

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/archive"
	"mapcommons/format/infer"
)

// Reader reads the Placemarks of a KML document as features. It is a
// mapcommons.FeatureSource. A Reader is not safe for concurrent use.
type Reader struct {
	docs  []io.ReadSeeker // the first document, then those it links to (KMZ)
	cur   int             // the document pass 2 is in
	opt   Options
	p     *parser
	attrs []mapcommons.Attribute
	types []mapcommons.AttrType
	index map[attrKey]int
	count int64 // Placemarks counted in pass 1
	name  string
	desc  string
	links [][]string // the NetworkLink hrefs of each document
	// unfollowed is the first link not read as part of this source.
	unfollowed string

	feat   mapcommons.Feature
	geom   []byte
	pos    int64
	sticky format.Sticky
}

var _ mapcommons.FeatureSource = (*Reader)(nil)

type attrKey struct {
	kind uint8
	name string
}

// Open reads the whole document once (pass 1: attributes, their types,
// validation of every Placemark), then seeks back to the start; Next then
// streams pass 2. The input is read from its offset 0. Bad input gives a
// *mapcommons.Error with code EINVALID saying where; errors of rs are
// returned wrapped.
func Open(rs io.ReadSeeker, opt Options) (*Reader, error) {
	r, err := openDocs([]io.ReadSeeker{rs}, opt)
	if err != nil {
		return nil, err
	}
	if len(r.links[0]) > 0 {
		r.unfollowed = r.links[0][0]
	}
	return r, nil
}

// Empty is nil when the source has features, else an EINVALID error
// saying why it has none: no Placemarks, or only links to documents that
// are not fetched.
func (r *Reader) Empty() error {
	switch {
	case r.count > 0:
		return nil
	case r.unfollowed != "":
		return mapcommons.Errorf(mapcommons.EINVALID, "kml: no Placemarks: the document only links to other documents (%s), which are not fetched", r.unfollowed)
	}
	return mapcommons.Errorf(mapcommons.EINVALID, "kml: no Placemarks: the document holds no features")
}

// openDocs opens documents read one after the other as one source: the
// attributes of all of them, the Placemarks of the first, then of the
// second … The name and description are the first document's that has
// them.
func openDocs(docs []io.ReadSeeker, opt Options) (*Reader, error) {
	r := &Reader{docs: docs, opt: opt.withDefaults()}
	if err := r.pass1(); err != nil {
		return nil, err
	}
	p, err := r.start(0)
	if err != nil {
		return nil, err
	}
	r.p = p
	return r, nil
}

// start seeks to the start of document i and returns a parser of it.
func (r *Reader) start(i int) (*parser, error) {
	rs := r.docs[i]
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("kml: %w", err)
	}
	var head [4]byte
	n, err := io.ReadFull(rs, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("kml: %w", err)
	}
	h := string(head[:n])
	if strings.HasPrefix(h, "\xFE\xFF") || strings.HasPrefix(h, "\xFF\xFE") ||
		strings.HasPrefix(h, "\x00<") || strings.HasPrefix(h, "<\x00") {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "kml: the file is UTF-16 text, which is not supported: save it as UTF-8")
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("kml: %w", err)
	}
	return newParser(rs, r.opt), nil
}

// column gathers what pass 1 learns of one attribute.
type column struct {
	key  attrKey
	disp string
	obs  infer.Column
}

func (r *Reader) pass1() error {
	declared := map[string]string{}
	index := map[attrKey]int{}
	var cols []column
	for i := range r.docs {
		p, err := r.start(i)
		if err != nil {
			return err
		}
		r.links = append(r.links, nil)
		p.declared, p.links = declared, &r.links[i]
		if cols, err = r.pass1Doc(p, index, cols); err != nil {
			return err
		}
		if r.name == "" {
			r.name = p.docName
		}
		if r.desc == "" {
			r.desc = p.docDescription
		}
	}
	return r.columns(declared, index, cols)
}

// pass1Doc observes the Placemarks of one document.
func (r *Reader) pass1Doc(p *parser, index map[attrKey]int, cols []column) ([]column, error) {
	for {
		pm, err := p.nextPlacemark()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		for i := range pm.fields {
			f := &pm.fields[i]
			k := attrKey{f.kind, f.name}
			c, ok := index[k]
			if !ok {
				if len(cols) >= r.opt.MaxAttributes {
					return nil, mapcommons.Errorf(mapcommons.EINVALID, "kml: line %d: Placemark %d: more than %d attributes", f.line, pm.num, r.opt.MaxAttributes)
				}
				c = len(cols)
				index[k] = c
				cols = append(cols, column{key: k})
			}
			if cols[c].disp == "" {
				cols[c].disp = f.disp
			}
			if f.kind == kindData {
				cols[c].obs.Observe(f.text)
			}
		}
		r.count++
	}
	return cols, nil
}

// columns makes the attributes of what pass 1 observed.
func (r *Reader) columns(declared map[string]string, index map[attrKey]int, cols []column) error {
	// name and description first, the others in order of first appearance.
	order := make([]int, 0, len(cols))
	for _, k := range []attrKey{{kind: kindName}, {kind: kindDescription}} {
		if c, ok := index[k]; ok {
			order = append(order, c)
		}
	}
	for c, col := range cols {
		if col.key.kind != kindName && col.key.kind != kindDescription {
			order = append(order, c)
		}
	}
	r.index = make(map[attrKey]int, len(cols))
	r.attrs = make([]mapcommons.Attribute, len(order))
	r.types = make([]mapcommons.AttrType, len(order))
	for i, c := range order {
		col := cols[c]
		r.index[col.key] = i
		a := mapcommons.Attribute{Type: mapcommons.AttrString, Description: col.disp}
		switch col.key.kind {
		case kindName:
			a.Name = "name"
		case kindDescription:
			a.Name = "description"
		case kindTimestamp:
			a.Name = "timestamp"
		case kindBegin:
			a.Name = "begin"
		case kindEnd:
			a.Name = "end"
		default:
			a.Name = col.key.name
			if declared[col.key.name] != "string" {
				a.Type = col.obs.Type()
			}
		}
		r.attrs[i] = a
		r.types[i] = a.Type
	}
	return mapcommons.NormalizeAttributes(r.attrs)
}

// Attributes returns the attributes found in pass 1, named by
// mapcommons.NormalizeAttributes, typed by inference.
func (r *Reader) Attributes() []mapcommons.Attribute {
	return append([]mapcommons.Attribute(nil), r.attrs...)
}

// Name returns the name of the document's outermost Document or Folder
// ("" when it has none).
func (r *Reader) Name() string { return r.name }

// Description returns the description of the document's outermost Document
// or Folder ("" when it has none).
func (r *Reader) Description() string { return r.desc }

// Count returns the number of features (Placemarks) found in pass 1.
func (r *Reader) Count() int64 { return r.count }

func changed() error {
	return mapcommons.Errorf(mapcommons.EINVALID, "kml: the file changed while it was read")
}

// Next returns the next feature: Values typed per attribute (int64,
// float64, string or nil), Geometry as WKB (nil for a Placemark without
// one), Position the zero-based index of the Placemark. It returns io.EOF
// after the last feature, and after an error that error again. The
// feature, its Values and its Geometry are reused by the following call.
func (r *Reader) Next() (*mapcommons.Feature, error) { return r.sticky.Next(r.next) }

func (r *Reader) next() (*mapcommons.Feature, error) {
	pm, err := r.p.nextPlacemark()
	for err == io.EOF && r.cur+1 < len(r.docs) {
		r.cur++
		if r.p, err = r.start(r.cur); err != nil {
			return nil, err
		}
		pm, err = r.p.nextPlacemark()
	}
	if err == io.EOF {
		if r.pos != r.count {
			return nil, changed()
		}
		return nil, io.EOF
	} else if err != nil {
		return nil, err
	}
	if r.pos >= r.count {
		return nil, changed()
	}
	f := &r.feat
	if cap(f.Values) < len(r.attrs) {
		f.Values = make([]any, len(r.attrs))
	}
	f.Values = f.Values[:len(r.attrs)]
	clear(f.Values)
	for i := range pm.fields {
		fl := &pm.fields[i]
		c, ok := r.index[attrKey{fl.kind, fl.name}]
		if !ok {
			return nil, changed()
		}
		v, ok := convert(r.types[c], fl.text)
		if !ok {
			return nil, changed()
		}
		f.Values[c] = v
	}
	f.Geometry = nil
	if g, ok := pm.geometry(); ok {
		r.geom = g.AppendWKB(r.geom[:0])
		f.Geometry = r.geom
	}
	f.Position = r.pos
	r.pos++
	return f, nil
}

// convert types a trimmed value: nil when empty.
func convert(t mapcommons.AttrType, s string) (any, bool) {
	if s == "" {
		return nil, true
	}
	switch t {
	case mapcommons.AttrInteger:
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil && infer.NumberKind(s, true) == infer.IntNumber
	case mapcommons.AttrFloat:
		if infer.NumberKind(s, true) == infer.NotNumber {
			return nil, false
		}
		return infer.ParseFloat(s), true
	}
	return s, true
}

// OpenKMZ opens the KML document of a KMZ (zip) file: doc.kml at the top
// of the archive, else the first other .kml file (at the top, else
// anywhere), with the KML documents inside the archive it links to
// (NetworkLinks, as GDAL's LIBKML driver and QGIS write one document per
// layer), and those they link to, read after it as one source. Links
// outside the archive are never followed. Entries are extracted through
// package archive (within lim) into temporary files in tmpDir ("" for the
// system's). The returned cleanup closes and removes them; call it when
// done with the Reader.
func OpenKMZ(ra io.ReaderAt, size int64, lim archive.Limits, tmpDir string, opt Options) (*Reader, func() error, error) {
	a, err := archive.Open(ra, size, lim)
	if err != nil {
		return nil, nil, err
	}
	entry := mainKML(a.Files())
	if entry == nil {
		return nil, nil, mapcommons.Errorf(mapcommons.EINVALID, "kmz: the zip file holds no .kml file")
	}
	byName := map[string]*zip.File{}
	for _, f := range a.Files() {
		byName[cleanEntry(f.Name)] = f
	}
	var files []*os.File
	var names []string
	cleanup := func() error {
		var errs []error
		for _, f := range files {
			errs = append(errs, f.Close(), os.Remove(f.Name()))
		}
		files = nil
		return errors.Join(errs...)
	}
	add := func(e *zip.File) error {
		path, err := a.Extract(e, tmpDir)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			os.Remove(path)
			return err
		}
		files = append(files, f)
		names = append(names, cleanEntry(e.Name))
		return nil
	}
	fail := func(err error) (*Reader, func() error, error) {
		cleanup()
		return nil, nil, err
	}
	if err := add(entry); err != nil {
		return fail(err)
	}
	seen := map[string]bool{cleanEntry(entry.Name): true}
	for {
		docs := make([]io.ReadSeeker, len(files))
		for i, f := range files {
			docs[i] = f
		}
		r, err := openDocs(docs, opt)
		if err != nil {
			var e *mapcommons.Error
			if errors.As(err, &e) {
				return fail(mapcommons.Errorf(e.Code, "kmz: %s: %s", entry.Name, e.Message))
			}
			return fail(err)
		}
		grew, outside := false, ""
		for i, links := range r.links {
			for _, href := range links {
				target, ok := linkTarget(names[i], href)
				if !ok {
					if outside == "" {
						outside = href
					}
					continue
				}
				e := byName[target]
				if e == nil || seen[target] || archive.Ext(target) != "kml" {
					continue
				}
				if len(files) >= maxKMZDocuments {
					return fail(mapcommons.Errorf(mapcommons.EINVALID, "kmz: more than %d linked KML documents", maxKMZDocuments))
				}
				seen[target] = true
				if err := add(e); err != nil {
					return fail(err)
				}
				grew = true
			}
		}
		if grew {
			continue
		}
		r.unfollowed = outside
		return r, cleanup, nil
	}
}

// maxKMZDocuments bounds the KML documents of a KMZ read as one.
const maxKMZDocuments = 100

// cleanEntry is the normal form of an archive entry's name.
func cleanEntry(name string) string {
	return path.Clean(strings.ReplaceAll(name, "\\", "/"))
}

// linkTarget resolves a NetworkLink href of the document at from (an
// archive entry) to the entry it names, if it names one inside the
// archive: a relative reference, without scheme or host, that does not
// climb out of the archive.
func linkTarget(from, href string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || strings.HasPrefix(u.Path, "/") || u.Path == "" {
		return "", false
	}
	t := path.Clean(path.Join(path.Dir(from), u.Path))
	if t == ".." || strings.HasPrefix(t, "../") {
		return "", false
	}
	return t, true
}

// mainKML picks the document of a KMZ.
func mainKML(files []*zip.File) *zip.File {
	var top, other *zip.File
	for _, f := range files {
		if archive.Hidden(f.Name) || archive.Ext(f.Name) != "kml" {
			continue
		}
		root := !strings.Contains(f.Name, "/")
		if root && strings.EqualFold(f.Name, "doc.kml") {
			return f
		}
		if root && top == nil {
			top = f
		}
		if other == nil {
			other = f
		}
	}
	if top != nil {
		return top
	}
	return other
}
