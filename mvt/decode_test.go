package mvt

// A strict MVT 2.1 decoder for the tests: it parses every byte the encoder
// writes and fails on anything the spec does not allow, so the tests
// assert what a client would read.

import (
	"encoding/binary"
	"fmt"
	"math"
)

type decTile struct{ Layers []decLayer }

type decLayer struct {
	Version  uint64
	Name     string
	Extent   uint64
	Keys     []string
	Values   []any // string, float64, int64, uint64, bool
	Features []decFeature
}

type decFeature struct {
	ID    uint64
	HasID bool
	Tags  []uint32
	Type  uint64
	Geom  []uint32
	Props map[string]any
	// Parts: points as one part of pairs; lines one part each; polygon
	// rings one part each (not closed: ClosePath implied).
	Parts [][]int64
}

type pbuf struct {
	b   []byte
	off int
}

func (p *pbuf) varint() (uint64, error) {
	v, n := binary.Uvarint(p.b[p.off:])
	if n <= 0 {
		return 0, fmt.Errorf("bad varint at %d", p.off)
	}
	p.off += n
	return v, nil
}

func (p *pbuf) bytes() ([]byte, error) {
	n, err := p.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(p.b)-p.off) {
		return nil, fmt.Errorf("length %d past the end", n)
	}
	s := p.b[p.off : p.off+int(n)]
	p.off += int(n)
	return s, nil
}

// fields walks the fields of a message.
func fields(b []byte, fn func(field int, wire int, p *pbuf) error) error {
	p := &pbuf{b: b}
	for p.off < len(b) {
		k, err := p.varint()
		if err != nil {
			return err
		}
		if err := fn(int(k>>3), int(k&7), p); err != nil {
			return err
		}
	}
	return nil
}

func packed(b []byte) ([]uint32, error) {
	p := &pbuf{b: b}
	var out []uint32
	for p.off < len(b) {
		v, err := p.varint()
		if err != nil {
			return nil, err
		}
		if v > math.MaxUint32 {
			return nil, fmt.Errorf("packed value %d too large", v)
		}
		out = append(out, uint32(v))
	}
	return out, nil
}

func decodeTile(b []byte) (*decTile, error) {
	t := &decTile{}
	err := fields(b, func(f, w int, p *pbuf) error {
		if f != 3 || w != wireBytes {
			return fmt.Errorf("tile field %d wire %d", f, w)
		}
		lb, err := p.bytes()
		if err != nil {
			return err
		}
		l, err := decodeLayer(lb)
		if err != nil {
			return err
		}
		t.Layers = append(t.Layers, *l)
		return nil
	})
	return t, err
}

func decodeLayer(b []byte) (*decLayer, error) {
	l := &decLayer{Extent: 4096}
	var feats [][]byte
	err := fields(b, func(f, w int, p *pbuf) error {
		var err error
		switch {
		case f == 15 && w == wireVarint:
			l.Version, err = p.varint()
		case f == 1 && w == wireBytes:
			var s []byte
			s, err = p.bytes()
			l.Name = string(s)
		case f == 2 && w == wireBytes:
			var s []byte
			s, err = p.bytes()
			feats = append(feats, s)
		case f == 3 && w == wireBytes:
			var s []byte
			s, err = p.bytes()
			l.Keys = append(l.Keys, string(s))
		case f == 4 && w == wireBytes:
			var s []byte
			if s, err = p.bytes(); err == nil {
				var v any
				v, err = decodeValue(s)
				l.Values = append(l.Values, v)
			}
		case f == 5 && w == wireVarint:
			l.Extent, err = p.varint()
		default:
			return fmt.Errorf("layer field %d wire %d", f, w)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if l.Version != 2 || l.Name == "" {
		return nil, fmt.Errorf("layer version %d name %q", l.Version, l.Name)
	}
	for _, fb := range feats {
		f, err := decodeFeature(fb, l)
		if err != nil {
			return nil, fmt.Errorf("layer %s feature %d: %v", l.Name, len(l.Features), err)
		}
		l.Features = append(l.Features, *f)
	}
	return l, nil
}

func decodeValue(b []byte) (any, error) {
	var v any
	n := 0
	err := fields(b, func(f, w int, p *pbuf) error {
		n++
		switch {
		case f == 1 && w == wireBytes:
			s, err := p.bytes()
			v = string(s)
			return err
		case f == 2 && w == wireFixed32:
			if p.off+4 > len(p.b) {
				return fmt.Errorf("short float")
			}
			v = float64(math.Float32frombits(binary.LittleEndian.Uint32(p.b[p.off:])))
			p.off += 4
		case f == 3 && w == wireFixed64:
			if p.off+8 > len(p.b) {
				return fmt.Errorf("short double")
			}
			v = math.Float64frombits(binary.LittleEndian.Uint64(p.b[p.off:]))
			p.off += 8
		case f == 4 && w == wireVarint:
			u, err := p.varint()
			v = int64(u)
			return err
		case f == 5 && w == wireVarint:
			u, err := p.varint()
			v = u
			return err
		case f == 6 && w == wireVarint:
			u, err := p.varint()
			v = int64(u>>1) ^ -int64(u&1)
			return err
		case f == 7 && w == wireVarint:
			u, err := p.varint()
			v = u != 0
			return err
		default:
			return fmt.Errorf("value field %d wire %d", f, w)
		}
		return nil
	})
	if err == nil && n != 1 {
		err = fmt.Errorf("value with %d fields", n)
	}
	return v, err
}

func decodeFeature(b []byte, l *decLayer) (*decFeature, error) {
	f := &decFeature{}
	err := fields(b, func(fi, w int, p *pbuf) error {
		var err error
		switch {
		case fi == 1 && w == wireVarint:
			f.ID, err = p.varint()
			f.HasID = true
		case fi == 2 && w == wireBytes:
			var s []byte
			if s, err = p.bytes(); err == nil {
				f.Tags, err = packed(s)
			}
		case fi == 3 && w == wireVarint:
			f.Type, err = p.varint()
		case fi == 4 && w == wireBytes:
			var s []byte
			if s, err = p.bytes(); err == nil {
				f.Geom, err = packed(s)
			}
		default:
			return fmt.Errorf("feature field %d wire %d", fi, w)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(f.Tags)%2 != 0 {
		return nil, fmt.Errorf("odd tag count")
	}
	f.Props = map[string]any{}
	for i := 0; i < len(f.Tags); i += 2 {
		k, v := f.Tags[i], f.Tags[i+1]
		if int(k) >= len(l.Keys) || int(v) >= len(l.Values) {
			return nil, fmt.Errorf("tag %d/%d out of range", k, v)
		}
		if _, dup := f.Props[l.Keys[k]]; dup {
			return nil, fmt.Errorf("key %q twice", l.Keys[k])
		}
		f.Props[l.Keys[k]] = l.Values[v]
	}
	if err := f.decodeGeom(); err != nil {
		return nil, err
	}
	return f, nil
}

// decodeGeom checks the command stream against the rules of spec 4.3.4
// for the feature's type and fills Parts.
func (f *decFeature) decodeGeom() error {
	var x, y int64
	g := f.Geom
	i := 0
	unz := func(u uint32) int64 { return int64(u>>1) ^ -int64(u&1) }
	var cur []int64
	for i < len(g) {
		id, count := g[i]&7, int(g[i]>>3)
		i++
		switch id {
		case cmdMoveTo, cmdLineTo:
			if count == 0 || i+2*count > len(g) {
				return fmt.Errorf("command %d count %d at %d", id, count, i)
			}
			if id == cmdMoveTo {
				if f.Type != 1 && count != 1 {
					return fmt.Errorf("MoveTo count %d in type %d", count, f.Type)
				}
				if f.Type != 1 || cur == nil {
					if cur != nil {
						if f.Type == 3 {
							return fmt.Errorf("ring not closed")
						}
						f.Parts = append(f.Parts, cur)
					}
					cur = []int64{}
				}
			} else {
				if f.Type == 1 || cur == nil || len(cur) != 2 {
					return fmt.Errorf("LineTo out of place")
				}
			}
			for k := 0; k < count; k++ {
				dx, dy := unz(g[i]), unz(g[i+1])
				i += 2
				if id == cmdLineTo && dx == 0 && dy == 0 {
					return fmt.Errorf("LineTo of zero length")
				}
				x, y = x+dx, y+dy
				cur = append(cur, x, y)
			}
		case cmdClosePath:
			if f.Type != 3 || count != 1 || len(cur) < 6 {
				return fmt.Errorf("ClosePath out of place")
			}
			f.Parts = append(f.Parts, cur)
			cur = nil
		default:
			return fmt.Errorf("unknown command %d", id)
		}
	}
	if cur != nil {
		if f.Type == 3 {
			return fmt.Errorf("ring not closed")
		}
		f.Parts = append(f.Parts, cur)
	}
	if len(f.Parts) == 0 {
		return fmt.Errorf("no geometry")
	}
	switch f.Type {
	case 2:
		for _, p := range f.Parts {
			if len(p) < 4 {
				return fmt.Errorf("line of %d points", len(p)/2)
			}
		}
	case 3:
		if ringArea(f.Parts[0]) <= 0 {
			return fmt.Errorf("first ring is not an exterior (area %d)", ringArea(f.Parts[0]))
		}
		for _, p := range f.Parts {
			if ringArea(p) == 0 {
				return fmt.Errorf("ring of zero area")
			}
		}
	case 1:
	default:
		return fmt.Errorf("geometry type %d", f.Type)
	}
	return nil
}

// ringArea is twice the signed area of a decoded ring.
func ringArea(q []int64) int64 {
	var s int64
	n := len(q) / 2
	for i := 0; i < n; i++ {
		j := (i + 1) % n
		s += q[2*i]*q[2*j+1] - q[2*j]*q[2*i+1]
	}
	return s
}

// layer returns the decoded layer named name, or nil.
func (t *decTile) layer(name string) *decLayer {
	for i := range t.Layers {
		if t.Layers[i].Name == name {
			return &t.Layers[i]
		}
	}
	return nil
}
