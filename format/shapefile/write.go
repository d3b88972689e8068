package shapefile

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// wWGS84PRJ is the .prj written with every shapefile: the ESRI WKT of
// WGS 84 lon/lat, the coordinate system of every stored geometry.
const wWGS84PRJ = `GEOGCS["GCS_WGS_1984",DATUM["D_WGS_1984",SPHEROID["WGS_1984",6378137.0,298.257223563]],PRIMEM["Greenwich",0.0],UNIT["Degree",0.0174532925199433]]`

// wMaxFileSize is the largest .shp or .dbf written: offsets in the .shx
// count 16-bit words in a signed 32-bit integer, and most programs take
// 2 GB as the limit of both files. A variable so that tests can lower it.
var wMaxFileSize int64 = math.MaxInt32

// wCompression is the deflate level of the zip entries: padded .dbf
// records and coordinates compress well enough at the fastest level, and
// it is several times faster than the default one.
var wCompression = flate.BestSpeed

const wCopyBuf = 64 << 10

// WriteZip writes the features of scan as a zipped shapefile to w, the
// GET /datasets/{id}.zip download. The zip holds <m.Name>.shp, .shx, .dbf,
// .prj (WGS 84 lon/lat in ESRI WKT) and .cpg ("UTF-8"), in that order;
// when the names of attributes had to change for the .dbf (see
// ShortNames), also <m.Name>_fields.txt, one "short<TAB>original" line
// per field. Entries are deflated and carry m.Updated as their time
// (1980-01-01 when it is zero), so equal datasets give equal bytes.
//
// Geometry. A shapefile holds one shape type: Point for Points, MultiPoint
// for MultiPoints, PolyLine for LineStrings and MultiLineStrings, Polygon
// for Polygons and MultiPolygons, whose rings are closed and turned as the
// format wants (outer rings clockwise, holes counter-clockwise). When the
// features fall into more than one of these four families (by their
// geometries, or by m.GeometryMask), each family gets a shapefile of its
// own, <m.Name>_point, _multipoint, _line and _polygon (in that order),
// all with the same .dbf fields and each with the rows of its own
// features, in order; a family that m.GeometryMask names but no feature
// has gives an empty shapefile.
//
// A GeometryCollection is split: its lines become one PolyLine record (a
// part each), its polygons one Polygon record, its points one Point record
// (one point) or MultiPoint record (several points, or any MultiPoint);
// each of these records, in its family's shapefile, carries the feature's
// attributes, so one feature can give a row in several shapefiles.
// Collections nest; their empty members are left out.
//
// A feature without geometry (or with an empty GeometryCollection) is a
// Null shape record in the shapefile of the first family of
// m.GeometryMask (point, multipoint, line, polygon). When the mask names
// none (no geometry, or collections only), such features go to a
// shapefile of shape type Null: <m.Name> when it is the only one,
// <m.Name>_null beside the others. An empty geometry of a family is a
// Null record of that family. Lines of fewer than 2 points and rings of
// fewer than 3 corners are left out (with a shell, its holes), and a shape
// left with no part is a Null record. Readers give a one-member
// MultiLineString or MultiPolygon back as a LineString or Polygon.
//
// Attributes: dBase III (version 0x03), text in UTF-8 as the .cpg says
// (language driver byte 0: there is no standard one for UTF-8). Field
// names are ShortNames. Every field is sized to fit its widest value.
// Integers are N(w,0); above 18 characters (values beyond -10^17 or
// 10^18) readers take the field as real numbers. Floats are N(w,d) holding
// the shortest decimal text that parses back to the same float64 (plain
// digits, exponent form below 1e-6 and from 1e21), so GDAL and our reader
// get the exact value back; d is the most decimals of any value, at least
// 1 so that the field reads as real even when every value is integral.
// Strings are C(w), w at most 254: a longer value is cut to 254 bytes at a
// character boundary; trailing spaces do not survive (readers trim them).
// Booleans are L ('T' or 'F'). Dates are D (YYYYMMDD) when every value is
// a valid YYYY-MM-DD date, C holding the text otherwise. Nulls, NaN and
// infinities are blank fields, read back as null except in C fields
// (read as ""). A dataset without attributes gets one field FID holding
// the feature's position, as GDAL does: some programs cannot read a .dbf
// without fields.
//
// The features are streamed once: records go to temporary files in a
// directory made in tmpDir ("" for the system's), always removed before
// WriteZip returns, and are copied into the zip at the end, when the
// counts, lengths, bounding boxes and field widths are known; memory use
// does not grow with the number of features (the temporary files take
// about as much disk as the shapefiles uncompressed). Nothing is written to w
// before the last feature has been read, so an error of scan, a bad
// geometry (invalid WKB, a coordinate that is not finite) or a file over
// the format's limits leaves w untouched: a .shp or .dbf over 2 GB, or a
// .dbf record over 65535 bytes, is a mapcommons.ETOOLARGE error. Errors
// of w are returned as they come.
func WriteZip(w io.Writer, m format.Meta, scan format.Scan, tmpDir string) (err error) {
	dir, err := os.MkdirTemp(tmpDir, "mapcommons-shp-")
	if err != nil {
		return fmt.Errorf("shapefile: %w", err)
	}
	sw := &shpWriter{dir: dir, meta: m, name: wBaseName(m.Name)}
	defer func() {
		if cerr := sw.close(); err == nil && cerr != nil {
			err = cerr
		}
		if rerr := os.RemoveAll(dir); err == nil && rerr != nil {
			err = fmt.Errorf("shapefile: %w", rerr)
		}
	}()
	sw.modified = m.Updated.UTC()
	if sw.modified.Year() < 1980 || sw.modified.Year() > 2107 {
		sw.modified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	sw.dbf, sw.names, sw.renamed = newWDBF(m.Attributes)
	sw.maskFams = wMaskFamilies(m.GeometryMask)
	sw.nullFam = wFamNull
	for fam := range wFamNull {
		if sw.maskFams[fam] {
			sw.nullFam = fam
			break
		}
	}
	if err := scan(sw.write); err != nil {
		return err
	}
	return sw.finish(w)
}

// wBaseName keeps the file names in the zip to [A-Za-z0-9_-].
func wBaseName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !wNameByte(c) && c != '-' {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "dataset"
	}
	return string(b)
}

// wSet is the shapefile of one family being written: its records so far in
// three temporary files, the .shp records, the .shx entries and the compact
// .dbf records.
type wSet struct {
	fam    int
	files  [3]*os.File
	bufs   [3]*bufio.Writer
	n      int64    // records
	shpLen int64    // length of the final .shp so far, header included
	box    wkb.Rect // of the non-Null shapes
}

// shpWriter is the state of one WriteZip.
type shpWriter struct {
	dir      string // the temporary directory
	meta     format.Meta
	name     string    // base name of the files in the zip
	modified time.Time // of the zip entries and in the .dbf header

	dbf      *wDBF
	names    []string // the .dbf field names (ShortNames)
	renamed  bool     // some differ from the attribute names
	maskFams [wFamCount]bool
	nullFam  int                 // where features without geometry go
	sets     [wFamCount]*wSet    // by family, made on first use
	shapes   wShapes             // the current feature's record contents
	null     []byte              // a Null record's content
	rec      [recHeaderSize]byte // scratch for record headers and .shx entries
}

func (w *shpWriter) set(fam int) (*wSet, error) {
	if s := w.sets[fam]; s != nil {
		return s, nil
	}
	s := &wSet{fam: fam, shpLen: headerSize, box: wkb.EmptyRect}
	w.sets[fam] = s
	for i, ext := range []string{".shp", ".shx", ".rec"} {
		f, err := os.Create(filepath.Join(w.dir, wFamSuffix[fam]+ext))
		if err != nil {
			return nil, fmt.Errorf("shapefile: %w", err)
		}
		s.files[i] = f
		s.bufs[i] = bufio.NewWriterSize(f, wCopyBuf)
	}
	return s, nil
}

func (w *shpWriter) close() error {
	var first error
	for _, s := range w.sets {
		if s == nil {
			continue
		}
		for _, f := range s.files {
			if f != nil {
				if err := f.Close(); err != nil && first == nil {
					first = fmt.Errorf("shapefile: %w", err)
				}
			}
		}
	}
	return first
}

func (w *shpWriter) tooLarge(s *wSet, ext string) error {
	what := "the " + wFamSuffix[s.fam] + " features"
	if s.fam == wFamNull {
		what = "the features without geometry"
	}
	return mapcommons.Errorf(mapcommons.ETOOLARGE,
		"the dataset is too large for a shapefile: the %s of %s would exceed %d bytes, the limit of the format (after %d records)",
		ext, what, wMaxFileSize, s.n)
}

// write adds one feature.
func (w *shpWriter) write(f *mapcommons.Feature) error {
	recLen := w.dbf.encode(f.Values, f.Position)
	if recLen > wDBFMaxRecLen {
		return mapcommons.Errorf(mapcommons.ETOOLARGE,
			"the dataset is too large for a shapefile: its attributes need .dbf records of %d bytes, more than the format's %d (feature %d)",
			recLen, wDBFMaxRecLen, f.Position)
	}
	ok, err := w.shapes.encode(f.Geometry)
	if err != nil {
		return fmt.Errorf("shapefile: feature %d: %w", f.Position, err)
	}
	if !ok {
		w.null = wAppendNull(w.null[:0])
		return w.put(w.nullFam, w.null, wkb.EmptyRect)
	}
	for fam := range wFamNull {
		if w.shapes.seen[fam] {
			if err := w.put(fam, w.shapes.content[fam], w.shapes.box[fam]); err != nil {
				return err
			}
		}
	}
	return nil
}

// put appends a record of content to the shapefile of fam, with the
// current feature's compact .dbf record.
func (w *shpWriter) put(fam int, content []byte, box wkb.Rect) error {
	s, err := w.set(fam)
	if err != nil {
		return err
	}
	if s.shpLen+recHeaderSize+int64(len(content)) > wMaxFileSize {
		return w.tooLarge(s, ".shp")
	}
	if w.dbf.size(s.n+1) > wMaxFileSize {
		return w.tooLarge(s, ".dbf")
	}
	s.n++
	words := uint32(len(content) / 2)
	binary.BigEndian.PutUint32(w.rec[0:], uint32(s.n))
	binary.BigEndian.PutUint32(w.rec[4:], words)
	s.bufs[0].Write(w.rec[:]) // an error sticks to the bufio.Writer
	if _, err := s.bufs[0].Write(content); err != nil {
		return fmt.Errorf("shapefile: %w", err)
	}
	// The .shx entry: the record's offset in words, and the same length.
	binary.BigEndian.PutUint32(w.rec[0:], uint32(s.shpLen/2))
	if _, err := s.bufs[1].Write(w.rec[:]); err != nil {
		return fmt.Errorf("shapefile: %w", err)
	}
	if _, err := s.bufs[2].Write(w.dbf.row); err != nil {
		return fmt.Errorf("shapefile: %w", err)
	}
	s.shpLen += recHeaderSize + int64(len(content))
	s.box = s.box.Extend(box)
	return nil
}

// wShpHeader encodes the header of a .shp or .shx of the given length.
func wShpHeader(typ int32, length int64, box wkb.Rect) []byte {
	h := make([]byte, headerSize)
	binary.BigEndian.PutUint32(h[0:], fileCode)
	binary.BigEndian.PutUint32(h[24:], uint32(length/2))
	binary.LittleEndian.PutUint32(h[28:], 1000)
	binary.LittleEndian.PutUint32(h[32:], uint32(typ))
	if !box.IsEmpty() {
		for i, v := range []float64{box.MinX, box.MinY, box.MaxX, box.MaxY} {
			binary.LittleEndian.PutUint64(h[36+8*i:], math.Float64bits(v))
		}
	}
	return h
}

// finish checks the final sizes and writes the zip.
func (w *shpWriter) finish(out io.Writer) error {
	for fam := range wFamNull {
		if w.maskFams[fam] {
			if _, err := w.set(fam); err != nil {
				return err
			}
		}
	}
	if w.sets == [wFamCount]*wSet{} { // no feature, no family in the mask
		if _, err := w.set(w.nullFam); err != nil {
			return err
		}
	}
	split := 0
	for _, s := range w.sets {
		if s == nil {
			continue
		}
		split++
		for _, b := range s.bufs {
			if err := b.Flush(); err != nil {
				return fmt.Errorf("shapefile: %w", err)
			}
		}
		// The widths may have grown since the set's last record.
		if w.dbf.size(s.n) > wMaxFileSize {
			return w.tooLarge(s, ".dbf")
		}
	}
	zw := zip.NewWriter(out)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, wCompression)
	})
	buf := make([]byte, wCopyBuf)
	for _, s := range w.sets {
		if s == nil {
			continue
		}
		base := w.name
		if split > 1 {
			base += "_" + wFamSuffix[s.fam]
		}
		if err := w.writeSet(zw, s, base, buf); err != nil {
			return err
		}
	}
	if w.renamed {
		if err := w.entry(zw, w.name+"_fields.txt", wFieldsText(w.names, w.meta.Attributes)); err != nil {
			return err
		}
	}
	return zw.Close()
}

func (w *shpWriter) create(zw *zip.Writer, name string) (io.Writer, error) {
	fh := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: w.modified}
	fh.SetMode(0o644)
	return zw.CreateHeader(fh)
}

func (w *shpWriter) entry(zw *zip.Writer, name string, b []byte) error {
	e, err := w.create(zw, name)
	if err != nil {
		return err
	}
	_, err = e.Write(b)
	return err
}

// copyFile writes header then the contents of f to the zip entry name.
func (w *shpWriter) copyFile(zw *zip.Writer, name string, header []byte, f *os.File, buf []byte) error {
	e, err := w.create(zw, name)
	if err != nil {
		return err
	}
	if _, err := e.Write(header); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("shapefile: %w", err)
	}
	_, err = io.CopyBuffer(e, struct{ io.Reader }{f}, buf)
	return err
}

func (w *shpWriter) writeSet(zw *zip.Writer, s *wSet, base string, buf []byte) error {
	typ := wFamShape[s.fam]
	if err := w.copyFile(zw, base+".shp", wShpHeader(typ, s.shpLen, s.box), s.files[0], buf); err != nil {
		return err
	}
	if err := w.copyFile(zw, base+".shx", wShpHeader(typ, headerSize+recHeaderSize*s.n, s.box), s.files[1], buf); err != nil {
		return err
	}
	e, err := w.create(zw, base+".dbf")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(e, wCopyBuf)
	bw.Write(w.dbf.header(s.n, w.modified))
	if _, err := s.files[2].Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("shapefile: %w", err)
	}
	if err := w.dbf.copyRecords(bw, bufio.NewReaderSize(s.files[2], wCopyBuf), s.n); err != nil {
		return err
	}
	bw.WriteByte(0x1A)
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := w.entry(zw, base+".prj", []byte(wWGS84PRJ)); err != nil {
		return err
	}
	return w.entry(zw, base+".cpg", []byte("UTF-8"))
}
