package shapefile

import (
	"bytes"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
)

// This file is a small shapefile writer for the tests: just enough to build
// every shape type, with Z and M values, and .dbf files of any field type.

// tShape is a shape to write: its type (0 for Null) and its parts, each flat
// x,y pairs. A Point uses parts[0][0:2], a MultiPoint parts[0].
type tShape struct {
	typ   int32
	parts [][]float64
	raw   []byte // when set, the record content as is
}

// tField is a .dbf field descriptor.
type tField struct {
	name       string
	typ        byte
	width, dec int
}

// tFile describes a shapefile to write.
type tFile struct {
	typ     int32 // shape type of the headers
	shapes  []tShape
	fields  []tField
	rows    [][]string // raw text of each field, padded to its width by the writer
	deleted map[int]bool
	ldid    byte
	trailer []byte // appended to the .shp after the last record
}

func le32(b []byte, v int32)    { binary.LittleEndian.PutUint32(b, uint32(v)) }
func be32(b []byte, v int32)    { binary.BigEndian.PutUint32(b, uint32(v)) }
func lef64(b []byte, v float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(v)) }

type tBuf struct{ b []byte }

func (w *tBuf) i32(v int32)   { w.b = binary.LittleEndian.AppendUint32(w.b, uint32(v)) }
func (w *tBuf) f64(v float64) { w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(v)) }

func (w *tBuf) box(xy []float64) {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := 0; i+1 < len(xy); i += 2 {
		minX, maxX = math.Min(minX, xy[i]), math.Max(maxX, xy[i])
		minY, maxY = math.Min(minY, xy[i+1]), math.Max(maxY, xy[i+1])
	}
	if len(xy) == 0 {
		minX, minY, maxX, maxY = 0, 0, 0, 0
	}
	w.f64(minX)
	w.f64(minY)
	w.f64(maxX)
	w.f64(maxY)
}

// zm appends the Z and/or M ranges and arrays of n points for shape type t.
func (w *tBuf) zm(t int32, n int) {
	hasZ := t >= 10 && t < 20
	hasM := hasZ || t > 20
	if hasZ {
		w.f64(100)
		w.f64(float64(100 + n))
		for i := range n {
			w.f64(float64(100 + i))
		}
	}
	if hasM {
		w.f64(-float64(n))
		w.f64(0)
		for i := range n {
			w.f64(-float64(i))
		}
	}
}

// content encodes the record content of s.
func (s tShape) content() []byte {
	if s.raw != nil {
		return s.raw
	}
	var w tBuf
	w.i32(s.typ)
	var all []float64
	for _, p := range s.parts {
		all = append(all, p...)
	}
	switch s.typ % 10 {
	case 0:
	case 1: // Point, PointZ, PointM
		w.f64(all[0])
		w.f64(all[1])
		switch s.typ {
		case shapePointZ:
			w.f64(7)
			w.f64(-7)
		case shapePointM:
			w.f64(-7)
		}
	case 8: // MultiPoint
		w.box(all)
		w.i32(int32(len(all) / 2))
		for _, v := range all {
			w.f64(v)
		}
		w.zm(s.typ, len(all)/2)
	case 3, 5: // PolyLine, Polygon
		w.box(all)
		w.i32(int32(len(s.parts)))
		w.i32(int32(len(all) / 2))
		start := 0
		for _, p := range s.parts {
			w.i32(int32(start))
			start += len(p) / 2
		}
		for _, v := range all {
			w.f64(v)
		}
		w.zm(s.typ, len(all)/2)
	}
	return w.b
}

func shpHeader(typ int32, words int) []byte {
	h := make([]byte, headerSize)
	be32(h[0:], fileCode)
	be32(h[24:], int32(words))
	le32(h[28:], 1000)
	le32(h[32:], typ)
	return h
}

// shpAndShx encodes the .shp and the .shx.
func (f *tFile) shpAndShx() (shp, shx []byte) {
	var recs [][]byte
	for _, s := range f.shapes {
		recs = append(recs, s.content())
	}
	body := []byte{}
	index := []byte{}
	for i, c := range recs {
		off := headerSize + len(body)
		body = binary.BigEndian.AppendUint32(body, uint32(i+1))
		body = binary.BigEndian.AppendUint32(body, uint32(len(c)/2))
		body = append(body, c...)
		index = binary.BigEndian.AppendUint32(index, uint32(off/2))
		index = binary.BigEndian.AppendUint32(index, uint32(len(c)/2))
	}
	shp = append(shpHeader(f.typ, (headerSize+len(body))/2), body...)
	shp = append(shp, f.trailer...)
	shx = append(shpHeader(f.typ, (headerSize+len(index))/2), index...)
	return shp, shx
}

// dbf encodes the .dbf.
func (f *tFile) dbf() []byte {
	recLen := 1
	for _, fl := range f.fields {
		recLen += fl.width
	}
	h := make([]byte, 32)
	h[0] = 0x03
	h[1], h[2], h[3] = 124, 1, 2
	binary.LittleEndian.PutUint32(h[4:], uint32(len(f.rows)))
	binary.LittleEndian.PutUint16(h[8:], uint16(32+32*len(f.fields)+1))
	binary.LittleEndian.PutUint16(h[10:], uint16(recLen))
	h[29] = f.ldid
	for _, fl := range f.fields {
		d := make([]byte, 32)
		copy(d[:10], fl.name)
		d[11] = fl.typ
		d[16] = byte(fl.width)
		d[17] = byte(fl.dec)
		if fl.typ == 'C' {
			d[17] = byte(fl.width >> 8)
		}
		h = append(h, d...)
	}
	h = append(h, descEnd)
	for i, row := range f.rows {
		if f.deleted[i] {
			h = append(h, '*')
		} else {
			h = append(h, ' ')
		}
		for j, fl := range f.fields {
			v := ""
			if j < len(row) {
				v = row[j]
			}
			if len(v) > fl.width {
				v = v[:fl.width]
			}
			pad := strings.Repeat(" ", fl.width-len(v))
			if fl.typ == 'N' || fl.typ == 'F' {
				h = append(h, pad+v...)
			} else {
				h = append(h, v+pad...)
			}
		}
	}
	return append(h, 0x1A)
}

// files returns the three files as readers.
func (f *tFile) files() (shp, dbf, shx *bytes.Reader) {
	s, x := f.shpAndShx()
	return bytes.NewReader(s), bytes.NewReader(f.dbf()), bytes.NewReader(x)
}

// withIDs fills f with one N field "id" and one row per shape when it has
// no fields of its own.
func (f *tFile) withIDs() *tFile {
	if len(f.fields) == 0 {
		f.fields = []tField{{"id", 'N', 5, 0}}
		for i := range f.shapes {
			f.rows = append(f.rows, []string{strconv.Itoa(i + 1)})
		}
	}
	return f
}

// Shapes for the tests.
func pt(t int32, x, y float64) tShape { return tShape{typ: t, parts: [][]float64{{x, y}}} }
func parts(t int32, ps ...[]float64) tShape {
	return tShape{typ: t, parts: ps}
}
