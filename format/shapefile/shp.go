package shapefile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"mapcommons/format/wkb"
)

// Shape types of the .shp.
const (
	shapeNull        = 0
	shapePoint       = 1
	shapePolyLine    = 3
	shapePolygon     = 5
	shapeMultiPoint  = 8
	shapePointZ      = 11
	shapePolyLineZ   = 13
	shapePolygonZ    = 15
	shapeMultiPointZ = 18
	shapePointM      = 21
	shapePolyLineM   = 23
	shapePolygonM    = 25
	shapeMultiPointM = 28
	shapeMultiPatch  = 31
)

const (
	fileCode      = 9994
	headerSize    = 100
	recHeaderSize = 8
	bufSize       = 64 << 10
)

// baseType maps a supported shape type to its 2-D base type, and reports
// false for an unsupported one.
func baseType(t int32) (int32, bool) {
	switch t {
	case shapeNull:
		return shapeNull, true
	case shapePoint, shapePointZ, shapePointM:
		return shapePoint, true
	case shapePolyLine, shapePolyLineZ, shapePolyLineM:
		return shapePolyLine, true
	case shapePolygon, shapePolygonZ, shapePolygonM:
		return shapePolygon, true
	case shapeMultiPoint, shapeMultiPointZ, shapeMultiPointM:
		return shapeMultiPoint, true
	}
	return 0, false
}

var typeNames = map[int32]string{
	shapeNull: "Null", shapePoint: "Point", shapePolyLine: "PolyLine", shapePolygon: "Polygon",
	shapeMultiPoint: "MultiPoint", shapePointZ: "PointZ", shapePolyLineZ: "PolyLineZ",
	shapePolygonZ: "PolygonZ", shapeMultiPointZ: "MultiPointZ", shapePointM: "PointM",
	shapePolyLineM: "PolyLineM", shapePolygonM: "PolygonM", shapeMultiPointM: "MultiPointM",
	shapeMultiPatch: "MultiPatch",
}

// typeName names a shape type for messages: "5 (Polygon)", or the bare
// number when unknown.
func typeName(t int32) string {
	if n, ok := typeNames[t]; ok {
		return fmt.Sprintf("%d (%s)", t, n)
	}
	return fmt.Sprintf("%d", t)
}

// shpReader streams the records of a .shp.
type shpReader struct {
	br   *bufio.Reader
	size int64 // actual size of the file
	off  int64 // offset of the next record header
	typ  int32 // shape type of the file header
	rec  int   // 1-based number of the record being read

	hdr  [recHeaderSize]byte
	buf  []byte // the part of the record content read so far
	left int    // bytes of the current record content not read yet

	parts  []int
	xy     []float64 // points of the record, flat x,y
	closed []float64 // polygon rings, closed, back to back
	rings  [][]float64
	info   []ringInfo
	order  [][]float64
	polys  [][][]float64
	geom   []byte
}

func openSHP(f io.ReadSeeker) (*shpReader, error) {
	size, err := fileSize(f)
	if err != nil {
		return nil, err
	}
	s := &shpReader{br: bufio.NewReaderSize(f, int(min(size, bufSize))), size: size, off: headerSize}
	var h [headerSize]byte
	if _, err := io.ReadFull(s.br, h[:]); err != nil {
		return nil, unexpectedEOF(err, "the .shp is too short for a shapefile header (%d bytes, need %d)", size, headerSize)
	}
	if code := binary.BigEndian.Uint32(h[0:]); code != fileCode {
		return nil, invalid("the .shp is not a shapefile (file code %d, want %d)", int32(code), fileCode)
	}
	s.typ = int32(binary.LittleEndian.Uint32(h[32:]))
	if _, ok := baseType(s.typ); !ok {
		return nil, invalid("the .shp has shape type %s, which is not supported", typeName(s.typ))
	}
	return s, nil
}

// readHeader reads the next record header and returns its content length.
// ok is false at the end of the file, including when fewer bytes than a
// record header are left (junk some writers append).
func (s *shpReader) readHeader() (length int64, ok bool, err error) {
	n, err := io.ReadFull(s.br, s.hdr[:])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		s.off += int64(n)
		return 0, false, nil
	} else if err != nil {
		return 0, false, err
	}
	s.off += recHeaderSize
	length = 2 * int64(binary.BigEndian.Uint32(s.hdr[4:]))
	return length, true, nil
}

// readRecord reads the next record and returns its geometry (nil for a Null
// shape, or when skip is set); ok is false at the end of the file.
func (s *shpReader) readRecord(skip bool) (geom []byte, ok bool, err error) {
	length, ok, err := s.readHeader()
	if err != nil || !ok {
		return nil, ok, err
	}
	s.rec++
	if remain := s.size - s.off; length > remain {
		return nil, false, invalid("the .shp record %d is truncated (its header says %d bytes of content, %d are left)", s.rec, length, max(remain, 0))
	}
	s.off += length
	s.buf = s.buf[:0]
	s.left = int(length)
	if skip {
		return nil, true, s.finish()
	}
	if length < 4 {
		return nil, false, invalid("the .shp record %d is too short (%d bytes of content) to hold a shape type", s.rec, length)
	}
	if err := s.fill(4); err != nil {
		return nil, false, err
	}
	t := int32(binary.LittleEndian.Uint32(s.buf))
	base, supported := baseType(t)
	if !supported {
		return nil, false, invalid("the .shp record %d has shape type %s, which is not supported", s.rec, typeName(t))
	}
	switch base {
	case shapePoint:
		geom, err = s.point(t)
	case shapeMultiPoint:
		geom, err = s.multiPoint(t)
	case shapePolyLine:
		geom, err = s.polyLine(t)
	case shapePolygon:
		geom, err = s.polygon(t)
	}
	if err != nil {
		return nil, false, err
	}
	return geom, true, s.finish()
}

// fill makes s.buf hold the first n bytes of the record content.
func (s *shpReader) fill(n int) error {
	have := len(s.buf)
	if n <= have {
		return nil
	}
	if n-have > s.left {
		return invalid("the .shp record %d is corrupt: its content is shorter than its counts say", s.rec)
	}
	if cap(s.buf) < n {
		nb := make([]byte, have, n+n/4)
		copy(nb, s.buf)
		s.buf = nb
	}
	s.buf = s.buf[:n]
	if _, err := io.ReadFull(s.br, s.buf[have:n]); err != nil {
		return unexpectedEOF(err, "the .shp record %d is truncated", s.rec)
	}
	s.left -= n - have
	return nil
}

// finish skips what is left of the record content (Z and M values, padding).
func (s *shpReader) finish() error {
	if s.left > 0 {
		if _, err := s.br.Discard(s.left); err != nil {
			return unexpectedEOF(err, "the .shp record %d is truncated", s.rec)
		}
		s.left = 0
	}
	return nil
}

// need checks that the record content holds n bytes, before they are read.
func (s *shpReader) need(t int32, n int64) error {
	if avail := int64(len(s.buf) + s.left); n > avail {
		return invalid("the .shp record %d is corrupt: a %s shape of its counts needs %d bytes, the record has %d",
			s.rec, typeName(t), n, avail)
	}
	return nil
}

func (s *shpReader) finite(x, y float64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		return invalid("the .shp record %d has a coordinate that is not a finite number", s.rec)
	}
	return nil
}

func (s *shpReader) point(t int32) ([]byte, error) {
	if err := s.need(t, 20); err != nil {
		return nil, err
	}
	if err := s.fill(20); err != nil {
		return nil, err
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(s.buf[4:]))
	y := math.Float64frombits(binary.LittleEndian.Uint64(s.buf[12:]))
	if err := s.finite(x, y); err != nil {
		return nil, err
	}
	s.geom = wkb.AppendPoint(s.geom[:0], x, y)
	return s.geom, nil
}

// readPoints reads n points starting at byte off of the content into s.xy.
func (s *shpReader) readPoints(off, n int) error {
	if err := s.fill(off + 16*n); err != nil {
		return err
	}
	if cap(s.xy) < 2*n {
		s.xy = make([]float64, 2*n, 2*n+2*n/4)
	}
	s.xy = s.xy[:2*n]
	b := s.buf[off : off+16*n]
	for i := range n {
		x := math.Float64frombits(binary.LittleEndian.Uint64(b[16*i:]))
		y := math.Float64frombits(binary.LittleEndian.Uint64(b[16*i+8:]))
		if err := s.finite(x, y); err != nil {
			return err
		}
		s.xy[2*i], s.xy[2*i+1] = x, y
	}
	return nil
}

func (s *shpReader) multiPoint(t int32) ([]byte, error) {
	const fixed = 40 // type, box, count
	if err := s.need(t, fixed); err != nil {
		return nil, err
	}
	if err := s.fill(fixed); err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(s.buf[36:]))
	if err := s.need(t, fixed+16*n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	if err := s.readPoints(fixed, int(n)); err != nil {
		return nil, err
	}
	s.geom = wkb.AppendMultiPoint(s.geom[:0], s.xy)
	return s.geom, nil
}

// multiPart reads the parts and points of a PolyLine or Polygon record into
// s.parts and s.xy; it reports false for an empty shape.
func (s *shpReader) multiPart(t int32) (bool, error) {
	const fixed = 44 // type, box, part count, point count
	if err := s.need(t, fixed); err != nil {
		return false, err
	}
	if err := s.fill(fixed); err != nil {
		return false, err
	}
	np := int64(binary.LittleEndian.Uint32(s.buf[36:]))
	n := int64(binary.LittleEndian.Uint32(s.buf[40:]))
	if err := s.need(t, fixed+4*np+16*n); err != nil {
		return false, err
	}
	if n == 0 {
		return false, nil
	}
	if np == 0 {
		return false, invalid("the .shp record %d has %d points but no parts", s.rec, n)
	}
	if err := s.fill(fixed + 4*int(np)); err != nil {
		return false, err
	}
	s.parts = s.parts[:0]
	for i := range int(np) {
		p := int64(binary.LittleEndian.Uint32(s.buf[fixed+4*i:]))
		switch {
		case i == 0 && p != 0:
			return false, invalid("the .shp record %d is corrupt: its first part starts at point %d, not 0", s.rec, p)
		case i > 0 && p <= int64(s.parts[i-1]):
			return false, invalid("the .shp record %d is corrupt: part %d starts at point %d, not after part %d", s.rec, i+1, p, i)
		case p >= n:
			return false, invalid("the .shp record %d is corrupt: part %d starts at point %d of %d", s.rec, i+1, p, n)
		}
		s.parts = append(s.parts, int(p))
	}
	s.parts = append(s.parts, int(n))
	return true, s.readPoints(fixed+4*int(np), int(n))
}

func (s *shpReader) polyLine(t int32) ([]byte, error) {
	ok, err := s.multiPart(t)
	if err != nil || !ok {
		return nil, err
	}
	lines := s.rings[:0]
	for i := 0; i+1 < len(s.parts); i++ {
		if line := s.xy[2*s.parts[i] : 2*s.parts[i+1]]; len(line) >= 4 {
			lines = append(lines, line)
		}
	}
	s.rings = lines
	switch len(lines) {
	case 0:
		return nil, nil
	case 1:
		s.geom = wkb.AppendLineString(s.geom[:0], lines[0])
	default:
		s.geom = wkb.AppendMultiLineString(s.geom[:0], lines)
	}
	return s.geom, nil
}

func (s *shpReader) polygon(t int32) ([]byte, error) {
	ok, err := s.multiPart(t)
	if err != nil || !ok {
		return nil, err
	}
	// Copy each part, closed, to s.closed; its capacity is reserved up front so
	// that the ring slices taken from it stay valid.
	nparts := len(s.parts) - 1
	if need := len(s.xy) + 2*nparts; cap(s.closed) < need {
		s.closed = make([]float64, 0, need+need/4)
	}
	s.closed = s.closed[:0]
	s.rings = s.rings[:0]
	for i := range nparts {
		part := s.xy[2*s.parts[i] : 2*s.parts[i+1]]
		start := len(s.closed)
		s.closed = append(s.closed, part...)
		if n := len(part); part[0] != part[n-2] || part[1] != part[n-1] {
			s.closed = append(s.closed, part[0], part[1])
		}
		if ring := s.closed[start:len(s.closed):len(s.closed)]; len(ring) >= 8 {
			s.rings = append(s.rings, ring)
		} else {
			s.closed = s.closed[:start]
		}
	}
	polys := s.assemble()
	switch len(polys) {
	case 0:
		return nil, nil
	case 1:
		s.geom = wkb.AppendPolygon(s.geom[:0], polys[0])
	default:
		s.geom = wkb.AppendMultiPolygon(s.geom[:0], polys)
	}
	return s.geom, nil
}

// countRest counts the records left in the file, for the message about a
// .shp holding more records than the .dbf.
func (s *shpReader) countRest() (int, error) {
	n := 0
	for {
		length, ok, err := s.readHeader()
		if err != nil || !ok {
			return n, err
		}
		n++
		skip := min(length, max(s.size-s.off, 0))
		s.off += skip
		if _, err := s.br.Discard(int(skip)); err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
	}
}

// checkSHX cross-checks the .shx header and its record count.
func checkSHX(f io.ReadSeeker, shpType int32, records int) error {
	size, err := fileSize(f)
	if err != nil {
		return err
	}
	var h [headerSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return unexpectedEOF(err, "the .shx is too short for a shapefile index header (%d bytes, need %d)", size, headerSize)
	}
	if code := binary.BigEndian.Uint32(h[0:]); code != fileCode {
		return invalid("the .shx is not a shapefile index (file code %d, want %d)", int32(code), fileCode)
	}
	if t := int32(binary.LittleEndian.Uint32(h[32:])); t != shpType {
		return invalid("the .shx has shape type %s, the .shp %s", typeName(t), typeName(shpType))
	}
	if n := (size - headerSize) / recHeaderSize; n != int64(records) {
		return invalid("the .shx has %d records, the .dbf %d", n, records)
	}
	return nil
}
