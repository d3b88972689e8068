package basemap

// This file reads and writes the embedded file, naturalearth.bin.gz: a
// gzip stream of
//
//	magic "mapcommons-basemap-2\n"
//	countries: n, then each: name, iso_a3, continent, polygons
//	places:    n, then each: name, min zoom, rank, population, capital, lon, lat
//	regions:   as places
//	land, lakes, rivers, borders, urban, divisions: for each of the
//	           Bands zoom bands, n, then each shape: min zoom, rank, name, rings
//
// where n is a uvarint, a string its byte length (uvarint) and its UTF-8
// bytes, a min zoom a uvarint of tenths of a zoom, a rank and a
// population uvarints, polygons a count of polygons, each its rings, rings
// a count of rings, each a count of points and the points, and a
// coordinate an integer of 1e-5 degree written as the zigzag varint of its
// difference from the previous coordinate of the same axis (within a ring;
// from 0 for a place). A hundred-thousandth of a degree is 1.1 m, finer
// than the 1:10m data (whose vertices are a hundred metres apart and more),
// and the deltas of neighbouring points take two bytes or three.

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

const magic = "mapcommons-basemap-3\n"

// scale is the coordinate unit's inverse: 1e-5 degree.
const scale = 1e5

// maxCount bounds every count read, so a corrupt file cannot ask for
// gigabytes.
const maxCount = 1 << 24

// Encode writes d in the embedded form to w (used by the generator).
func Encode(w io.Writer, d *Data) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	e := &encoder{}
	e.buf = append(e.buf, magic...)
	e.uint(len(d.Countries))
	for _, c := range d.Countries {
		e.str(c.Name)
		e.str(c.ISO)
		e.str(c.Continent)
		e.uint(len(c.Polygons))
		for _, p := range c.Polygons {
			e.rings(p)
		}
	}
	for _, places := range [][]Place{d.Places, d.Regions} {
		e.uint(len(places))
		for _, p := range places {
			e.str(p.Name)
			e.uint(p.MinZoom10)
			e.uint(p.Rank)
			e.uint(int(p.Population))
			e.flag(p.Capital)
			e.buf = binary.AppendVarint(e.buf, fixed(p.Lon))
			e.buf = binary.AppendVarint(e.buf, fixed(p.Lat))
		}
	}
	for _, l := range d.shapeLayers() {
		for _, band := range l {
			e.uint(len(band))
			for _, s := range band {
				e.uint(s.MinZoom10)
				e.uint(s.Rank)
				e.str(s.Name)
				e.rings(s.Rings)
			}
		}
	}
	if _, err := zw.Write(e.buf); err != nil {
		return err
	}
	return zw.Close()
}

// fixed is v in units of 1e-5, rounded.
func fixed(v float64) int64 { return int64(math.Round(v * scale)) }

// encoder appends the file's body.
type encoder struct{ buf []byte }

func (e *encoder) uint(n int) { e.buf = binary.AppendUvarint(e.buf, uint64(n)) }

func (e *encoder) flag(b bool) {
	if b {
		e.uint(1)
	} else {
		e.uint(0)
	}
}

func (e *encoder) str(s string) {
	e.uint(len(s))
	e.buf = append(e.buf, s...)
}

func (e *encoder) rings(p [][]float64) {
	e.uint(len(p))
	for _, ring := range p {
		e.uint(len(ring) / 2)
		var px, py int64
		for i := 0; i+1 < len(ring); i += 2 {
			x, y := fixed(ring[i]), fixed(ring[i+1])
			e.buf = binary.AppendVarint(e.buf, x-px)
			e.buf = binary.AppendVarint(e.buf, y-py)
			px, py = x, y
		}
	}
}

// Decode reads data written by Encode.
func Decode(r io.Reader) (*Data, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	d := &decoder{r: bufio.NewReader(zr)}
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(d.r, head); err != nil || string(head) != magic {
		return nil, errors.New("not a basemap file")
	}
	out := &Data{Countries: make([]Country, d.count())}
	for i := range out.Countries {
		c := &out.Countries[i]
		c.Name, c.ISO, c.Continent = d.str(), d.str(), d.str()
		c.Polygons = make([][][]float64, d.count())
		for j := range c.Polygons {
			c.Polygons[j] = d.rings()
		}
	}
	for _, places := range []*[]Place{&out.Places, &out.Regions} {
		*places = make([]Place, d.count())
		for i := range *places {
			p := &(*places)[i]
			p.Name = d.str()
			p.MinZoom10, p.Rank, p.Population, p.Capital = d.small(), d.small(), int64(d.uint()), d.small() == 1
			p.Lon, p.Lat = float64(d.int())/scale, float64(d.int())/scale
		}
	}
	for _, l := range out.shapeLayers() {
		for b := range l {
			band := make([]Shape, d.count())
			for i := range band {
				s := &band[i]
				s.MinZoom10, s.Rank, s.Name = d.small(), d.small(), d.str()
				s.Rings = d.rings()
			}
			if len(band) == 0 {
				band = nil
			}
			l[b] = band
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	// The whole stream is read, so that gzip checks its checksum.
	if _, err := d.r.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("basemap file: trailing data or a corrupt stream (%v)", err)
	}
	return out, nil
}

// decoder reads the file's body; the first error sticks and later reads
// give zeros.
type decoder struct {
	r   *bufio.Reader
	err error
}

func (d *decoder) rings() [][]float64 {
	rings := make([][]float64, d.count())
	for k := range rings {
		ring := make([]float64, 2*d.count())
		var x, y int64
		for m := 0; m+1 < len(ring); m += 2 {
			x += d.int()
			y += d.int()
			ring[m], ring[m+1] = float64(x)/scale, float64(y)/scale
		}
		rings[k] = ring
	}
	return rings
}

func (d *decoder) count() int {
	if d.err != nil {
		return 0
	}
	n, err := binary.ReadUvarint(d.r)
	if err == nil && n > maxCount {
		err = fmt.Errorf("count %d", n)
	}
	if err != nil {
		d.err = fmt.Errorf("basemap file: %w", err)
		return 0
	}
	return int(n)
}

// uint is an unbounded uvarint (a population).
func (d *decoder) uint() uint64 {
	if d.err != nil {
		return 0
	}
	n, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.err = fmt.Errorf("basemap file: %w", err)
	}
	return n
}

// small is a uvarint below maxCount (a zoom, a rank, a flag).
func (d *decoder) small() int { return d.count() }

func (d *decoder) int() int64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(d.r)
	if err != nil {
		d.err = fmt.Errorf("basemap file: %w", err)
	}
	return v
}

func (d *decoder) str() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.r, b); err != nil {
		d.err = fmt.Errorf("basemap file: %w", err)
		return ""
	}
	return string(b)
}
