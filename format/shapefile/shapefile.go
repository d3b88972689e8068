// Package shapefile reads ESRI shapefiles as a stream of mapcommons features,
// and writes a dataset as a zipped shapefile (WriteZip, in write.go).
//
// A shapefile is a set of sidecar files: the .shp holds the geometries, the
// .dbf (dBase III/IV) the attributes, one record in each per feature; the
// .shx is an index into the .shp, the .cpg names the text encoding of the
// .dbf and the .prj describes the coordinate reference system in WKT.
//
// Open reads the headers; Next then reads one record of the .shp and the
// .dbf at a time through buffered readers, so memory use is bounded by the
// largest record, not by the size of the files. Geometries are produced as
// 2-D WKB (Z and M values are dropped). Every error caused by bad input is a
// *mapcommons.Error with code mapcommons.EINVALID that names the file and,
// where there is one, the record (record numbers are 1-based, as in the
// files themselves).
package shapefile

import (
	"errors"
	"io"
	"strings"

	"mapcommons"
	"mapcommons/format"
)

// Options carries the optional sidecar files.
type Options struct {
	CPG string // contents of the .cpg file ("" when absent)
	PRJ string // contents of the .prj file ("" when absent)
}

// Reader streams the features of a shapefile. It implements
// mapcommons.FeatureSource. A Reader is not safe for concurrent use.
type Reader struct {
	shp    *shpReader
	dbf    *dbfReader
	crs    string
	attrs  []mapcommons.Attribute
	feat   mapcommons.Feature
	index  int           // zero-based index of the next record of both files
	pos    int64         // Position of the next feature returned
	sticky format.Sticky // io.EOF or the first error, for ever after
}

var _ mapcommons.FeatureSource = (*Reader)(nil)

// Open reads the headers of the .shp and the .dbf and returns a Reader
// positioned before the first feature. shx may be nil; when given, it is only
// cross-checked against the other two (its header and record count), never
// needed to read them. opt.PRJ, when not blank, must describe a geographic
// (lon/lat) coordinate system: a projected one is refused with EINVALID.
// opt.CPG, when not blank, must name a supported encoding (UTF-8,
// ISO-8859-1 or Windows-1252).
func Open(shp, dbf io.ReadSeeker, shx io.ReadSeeker, opt Options) (*Reader, error) {
	if shp == nil || dbf == nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "a shapefile needs both its .shp and its .dbf file")
	}
	r := &Reader{}
	if strings.TrimSpace(opt.PRJ) != "" {
		name, geographic, err := ClassifyPRJ(opt.PRJ)
		if err != nil {
			return nil, err
		}
		if !geographic {
			return nil, mapcommons.Errorf(mapcommons.EINVALID,
				"projected coordinate system %q is not supported yet (reprojection comes later); upload data in geographic lon/lat", name)
		}
		r.crs = name
	}
	enc, err := parseCPG(opt.CPG)
	if err != nil {
		return nil, err
	}
	if r.shp, err = openSHP(shp); err != nil {
		return nil, err
	}
	if r.dbf, err = openDBF(dbf, enc); err != nil {
		return nil, err
	}
	if shx != nil {
		if err := checkSHX(shx, r.shp.typ, r.dbf.count); err != nil {
			return nil, err
		}
	}
	r.attrs = make([]mapcommons.Attribute, len(r.dbf.fields))
	for i, f := range r.dbf.fields {
		r.attrs[i] = mapcommons.Attribute{Name: f.name, Type: f.kind}
	}
	if err := mapcommons.NormalizeAttributes(r.attrs); err != nil {
		return nil, err
	}
	r.feat.Values = make([]any, len(r.attrs))
	return r, nil
}

// Attributes returns the attribute columns, one per .dbf field in order,
// with names normalised by mapcommons.NormalizeAttributes. The caller must
// not modify the slice.
func (r *Reader) Attributes() []mapcommons.Attribute { return r.attrs }

// CRS returns the name of the coordinate reference system given in the .prj
// ("" when there was none).
func (r *Reader) CRS() string { return r.crs }

// Next returns the next feature, skipping records the .dbf marks deleted, or
// io.EOF after the last one. Feature.Position counts the features returned
// from zero; Values are aligned with Attributes; Geometry is 2-D WKB, nil for
// a Null shape. The returned Feature, its Values slice and its Geometry bytes
// are reused by the following call: copy what must outlive it. After an
// error every further call returns the same error.
func (r *Reader) Next() (*mapcommons.Feature, error) { return r.sticky.Next(r.next) }

func (r *Reader) next() (*mapcommons.Feature, error) {
	for {
		if r.index >= r.dbf.count {
			more, err := r.shp.countRest()
			if err != nil {
				return nil, err
			}
			if more > 0 {
				return nil, countMismatch(r.index+more, r.dbf.count)
			}
			return nil, io.EOF
		}
		deleted, err := r.dbf.readRecord(r.index)
		if err != nil {
			return nil, err
		}
		geom, ok, err := r.shp.readRecord(deleted)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, countMismatch(r.index, r.dbf.count)
		}
		r.index++
		if deleted {
			continue
		}
		r.dbf.decodeValues(r.feat.Values)
		r.feat.Geometry = geom
		r.feat.Position = r.pos
		r.pos++
		return &r.feat, nil
	}
}

func countMismatch(shp, dbf int) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "the .shp has %d records, the .dbf %d", shp, dbf)
}

func invalid(format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, format, args...)
}

// unexpectedEOF turns a short read into an EINVALID error about what, and
// passes other errors through.
func unexpectedEOF(err error, format string, args ...any) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return invalid(format, args...)
	}
	return err
}

// fileSize returns the size of f and seeks it back to the start.
func fileSize(f io.ReadSeeker) (int64, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return size, nil
}
