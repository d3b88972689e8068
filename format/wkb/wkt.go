package wkb

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

var wktNames = map[uint32]string{
	Point: "POINT", LineString: "LINESTRING", Polygon: "POLYGON", MultiPoint: "MULTIPOINT",
	MultiLineString: "MULTILINESTRING", MultiPolygon: "MULTIPOLYGON", GeometryCollection: "GEOMETRYCOLLECTION",
}

func appendSeqWKT(dst []byte, xy []float64) []byte {
	if len(xy) < 2 {
		return append(dst, "EMPTY"...)
	}
	dst = append(dst, '(')
	for i := 0; i+1 < len(xy); i += 2 {
		if i > 0 {
			dst = append(dst, ',', ' ')
		}
		dst = AppendFloat(dst, xy[i])
		dst = append(dst, ' ')
		dst = AppendFloat(dst, xy[i+1])
	}
	return append(dst, ')')
}

// appendBodyWKT appends the parenthesised body of g (or EMPTY).
func (g Geom) appendBodyWKT(dst []byte) []byte {
	if g.IsEmpty() {
		return append(dst, "EMPTY"...)
	}
	switch g.Type {
	case Point, LineString:
		return appendSeqWKT(dst, g.Coords)
	case Polygon:
		dst = append(dst, '(')
		for i, r := range g.Rings {
			if i > 0 {
				dst = append(dst, ',', ' ')
			}
			dst = appendSeqWKT(dst, r)
		}
		return append(dst, ')')
	}
	dst = append(dst, '(')
	for i, p := range g.Parts {
		if i > 0 {
			dst = append(dst, ',', ' ')
		}
		if g.Type == GeometryCollection {
			dst = p.AppendWKT(dst)
		} else {
			dst = p.appendBodyWKT(dst)
		}
	}
	return append(dst, ')')
}

// AppendWKT appends g as OGC Well-Known Text.
func (g Geom) AppendWKT(dst []byte) []byte {
	dst = append(dst, wktNames[g.Type]...)
	dst = append(dst, ' ')
	return g.appendBodyWKT(dst)
}

// ToWKT appends the WKT of the WKB value b.
func ToWKT(dst, b []byte) ([]byte, error) {
	g, err := Decode(b)
	if err != nil {
		return dst, err
	}
	return g.AppendWKT(dst), nil
}

// ErrWKT is wrapped by every WKT parsing error.
var ErrWKT = errors.New("invalid WKT")

type wktParser struct {
	s    string
	pos  int
	dims int
}

func (p *wktParser) fail(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrWKT, p.pos, fmt.Sprintf(format, args...))
}

func (p *wktParser) skip() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

func (p *wktParser) word() string {
	p.skip()
	start := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos] | 0x20
		if c < 'a' || c > 'z' {
			break
		}
		p.pos++
	}
	return strings.ToUpper(p.s[start:p.pos])
}

func (p *wktParser) peek() byte {
	p.skip()
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *wktParser) expect(c byte) error {
	if p.peek() != c {
		return p.fail("expected %q", c)
	}
	p.pos++
	return nil
}

func (p *wktParser) number() (float64, error) {
	p.skip()
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.pos]) >= 0 {
		p.pos++
	}
	v, err := strconv.ParseFloat(p.s[start:p.pos], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.pos = start
		return 0, p.fail("expected a number")
	}
	return v, nil
}

// point reads one position; ordinates beyond x,y are read and dropped.
func (p *wktParser) point(xy []float64) ([]float64, error) {
	x, err := p.number()
	if err != nil {
		return nil, err
	}
	y, err := p.number()
	if err != nil {
		return nil, err
	}
	for i := 2; i < p.dims || (p.dims == 0 && i < 4 && isNumStart(p.peek())); i++ {
		if _, err := p.number(); err != nil {
			return nil, err
		}
	}
	return append(xy, x, y), nil
}

func isNumStart(c byte) bool { return c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9') }

// empty consumes EMPTY if it comes next.
func (p *wktParser) empty() bool {
	save := p.pos
	if p.word() == "EMPTY" {
		return true
	}
	p.pos = save
	return false
}

// seq reads "(x y, x y, ...)".
func (p *wktParser) seq() ([]float64, error) {
	if p.empty() {
		return nil, nil
	}
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var xy []float64
	for {
		var err error
		if xy, err = p.point(xy); err != nil {
			return nil, err
		}
		if p.peek() != ',' {
			break
		}
		p.pos++
	}
	return xy, p.expect(')')
}

// list reads "(item, item, ...)" calling item for each.
func (p *wktParser) list(item func() error) error {
	if p.empty() {
		return nil
	}
	if err := p.expect('('); err != nil {
		return err
	}
	for {
		if err := item(); err != nil {
			return err
		}
		if p.peek() != ',' {
			break
		}
		p.pos++
	}
	return p.expect(')')
}

func (p *wktParser) geom(depth int) (Geom, error) {
	if depth > maxDepth {
		return Geom{}, p.fail("nested too deeply")
	}
	name := p.word()
	var typ uint32
	for t, n := range wktNames {
		if n == name {
			typ = t
		}
	}
	if typ == 0 {
		return Geom{}, p.fail("unknown geometry type %q", name)
	}
	save := p.pos
	switch p.word() {
	case "Z", "M":
		p.dims = 3
	case "ZM":
		p.dims = 4
	default:
		p.pos = save
	}
	g := Geom{Type: typ}
	var err error
	switch typ {
	case Point, LineString:
		g.Coords, err = p.seq()
		if err == nil && typ == Point && len(g.Coords) > 2 {
			err = p.fail("a POINT has one position")
		}
	case Polygon:
		err = p.list(func() error {
			r, err := p.seq()
			g.Rings = append(g.Rings, r)
			return err
		})
	case MultiPoint:
		err = p.list(func() error {
			var xy []float64
			var err error
			if p.peek() == '(' {
				xy, err = p.seq()
			} else if !p.empty() {
				xy, err = p.point(nil)
			}
			g.Parts = append(g.Parts, Geom{Type: Point, Coords: xy})
			return err
		})
	case MultiLineString:
		err = p.list(func() error {
			xy, err := p.seq()
			g.Parts = append(g.Parts, Geom{Type: LineString, Coords: xy})
			return err
		})
	case MultiPolygon:
		err = p.list(func() error {
			part := Geom{Type: Polygon}
			err := p.list(func() error {
				r, err := p.seq()
				part.Rings = append(part.Rings, r)
				return err
			})
			g.Parts = append(g.Parts, part)
			return err
		})
	case GeometryCollection:
		err = p.list(func() error {
			part, err := p.geom(depth + 1)
			g.Parts = append(g.Parts, part)
			return err
		})
	}
	return g, err
}

// ParseWKT parses OGC WKT (with an optional EWKT "SRID=n;" prefix; Z and M
// ordinates are dropped) into the stored WKB form.
func ParseWKT(s string) ([]byte, error) {
	p := &wktParser{s: s}
	if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(s)), "SRID=") {
		i := strings.IndexByte(s, ';')
		if i < 0 {
			return nil, p.fail("SRID without ';'")
		}
		p.pos = i + 1
	}
	g, err := p.geom(0)
	if err != nil {
		return nil, err
	}
	if p.skip(); p.pos != len(p.s) {
		return nil, p.fail("unexpected text after the geometry")
	}
	return g.AppendWKB(nil), nil
}
