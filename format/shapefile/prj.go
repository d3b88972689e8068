package shapefile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"mapcommons"
)

// Limits of the WKT parser.
const (
	maxPRJLen   = 64 << 10
	maxWKTDepth = 32
)

// wktNode is KEYWORD[arg, ...]; an argument is a quoted string, a number or
// a bare word (kept as text in val), or a nested node.
type wktNode struct {
	key  string // upper-cased
	args []wktArg
}

type wktArg struct {
	node   *wktNode
	val    string
	quoted bool
}

// name returns the node's first argument when it is a quoted string.
func (n *wktNode) name() (string, bool) {
	if len(n.args) > 0 && n.args[0].node == nil && n.args[0].quoted {
		return n.args[0].val, true
	}
	return "", false
}

// child returns the first direct child node with one of the keys.
func (n *wktNode) child(keys ...string) *wktNode {
	for _, a := range n.args {
		if a.node != nil {
			for _, k := range keys {
				if a.node.key == k {
					return a.node
				}
			}
		}
	}
	return nil
}

// ClassifyPRJ parses the ESRI or OGC WKT (WKT1 or WKT2, with brackets or
// parentheses) of a .prj far enough to name the coordinate reference system
// and say whether it is geographic lon/lat. A geographic CRS (GEOGCS,
// GEOGCRS, GEODCRS) gives its name and true, whatever its datum (WGS 84,
// NAD83, NAD27, ETRS89, GRS 1980 and any other), provided its angular unit
// is the degree; a projected one (PROJCS, PROJCRS) gives its name and false.
// A compound CRS is classified by its horizontal part, a bound CRS by its
// source. A blank prj gives ("", true, nil). Text that is not WKT, a
// geographic CRS in other units than degrees and other kinds of CRS
// (geocentric, vertical, engineering) are EINVALID errors.
func ClassifyPRJ(prj string) (name string, geographic bool, err error) {
	s := strings.TrimSpace(strings.TrimPrefix(prj, "\uFEFF"))
	if s == "" {
		return "", true, nil
	}
	if len(s) > maxPRJLen {
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is too long (%d bytes, at most %d)", len(s), maxPRJLen)
	}
	p := wktParser{s: s}
	root, err := p.node(0)
	if err == nil {
		if p.skip(); p.pos < len(p.s) {
			err = p.fail("unexpected text after the end")
		}
	}
	if err != nil {
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is not a coordinate system in WKT: %v", err)
	}
	return classify(root, 0)
}

func classify(n *wktNode, depth int) (string, bool, error) {
	if n.key == "BOUNDCRS" { // no name of its own
		if src := n.child("SOURCECRS"); src != nil && depth < 2 {
			for _, a := range src.args {
				if a.node != nil {
					return classify(a.node, depth+1)
				}
			}
		}
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is not a coordinate system in WKT: BOUNDCRS has no source CRS")
	}
	name, ok := n.name()
	if !ok {
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is not a coordinate system in WKT: %s has no name", n.key)
	}
	switch n.key {
	case "GEOGCS", "GEOGCRS", "GEOGRAPHICCRS", "GEODCRS", "GEODETICCRS":
		if cs := n.child("CS"); cs != nil && len(cs.args) > 0 && !strings.EqualFold(cs.args[0].val, "ellipsoidal") {
			return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj describes %s coordinate system %q, which is not supported; upload data in geographic lon/lat", strings.ToLower(cs.args[0].val), name)
		}
		if unit, ok := angularUnit(n); !ok {
			return "", false, mapcommons.Errorf(mapcommons.EINVALID, "geographic coordinate system %q uses angular unit %q; only degrees are supported", name, unit)
		}
		return name, true, nil
	case "PROJCS", "PROJCRS", "PROJECTEDCRS":
		return name, false, nil
	case "COMPD_CS", "COMPOUNDCRS":
		if depth < 2 {
			for _, a := range n.args {
				if a.node != nil && horizontal(a.node.key) {
					return classify(a.node, depth+1)
				}
			}
		}
	}
	return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj describes a coordinate system of kind %s (%q), which is not supported; upload data in geographic lon/lat", n.key, name)
}

func horizontal(key string) bool {
	switch key {
	case "GEOGCS", "GEOGCRS", "GEOGRAPHICCRS", "GEODCRS", "GEODETICCRS", "PROJCS", "PROJCRS", "PROJECTEDCRS":
		return true
	}
	return false
}

// angularUnit finds the angular unit of a geographic CRS: a direct UNIT or
// ANGLEUNIT child (WKT1, or WKT2 without per-axis units), else the unit of
// its first axis (WKT2). ok is false when it is not the degree; a CRS with no
// unit at all is taken to be in degrees.
func angularUnit(n *wktNode) (string, bool) {
	u := n.child("UNIT", "ANGLEUNIT")
	if u == nil {
		if cs := n.child("CS"); cs != nil {
			u = cs.child("UNIT", "ANGLEUNIT")
		}
	}
	if u == nil {
		if ax := n.child("AXIS"); ax != nil {
			u = ax.child("UNIT", "ANGLEUNIT")
		}
	}
	if u == nil {
		return "", true
	}
	name, _ := u.name()
	if strings.Contains(strings.ToLower(name), "degree") {
		return name, true
	}
	if len(u.args) > 1 && u.args[1].node == nil {
		if f, err := strconv.ParseFloat(u.args[1].val, 64); err == nil && math.Abs(f-math.Pi/180) < 1e-12 {
			return name, true
		}
	}
	return name, false
}

type wktParser struct {
	s   string
	pos int
}

func (p *wktParser) fail(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *wktParser) skip() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E'
}

// node parses KEYWORD[args].
func (p *wktParser) node(depth int) (*wktNode, error) {
	if depth > maxWKTDepth {
		return nil, p.fail("nested too deeply")
	}
	p.skip()
	start := p.pos
	for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
		p.pos++
	}
	if start == p.pos {
		return nil, p.fail("expected a keyword")
	}
	n := &wktNode{key: strings.ToUpper(p.s[start:p.pos])}
	p.skip()
	var closer byte
	switch {
	case p.pos < len(p.s) && p.s[p.pos] == '[':
		closer = ']'
	case p.pos < len(p.s) && p.s[p.pos] == '(':
		closer = ')'
	default:
		return nil, p.fail("expected [ or ( after %s", n.key)
	}
	p.pos++
	p.skip()
	if p.pos < len(p.s) && p.s[p.pos] == closer {
		p.pos++
		return n, nil
	}
	for {
		a, err := p.arg(depth)
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, a)
		p.skip()
		if p.pos >= len(p.s) {
			return nil, p.fail("%s is not closed", n.key)
		}
		switch c := p.s[p.pos]; {
		case c == ',':
			p.pos++
		case c == closer:
			p.pos++
			return n, nil
		default:
			return nil, p.fail("unexpected %q in %s", c, n.key)
		}
	}
}

// arg parses a quoted string, a number, a bare word or a nested node.
func (p *wktParser) arg(depth int) (wktArg, error) {
	p.skip()
	if p.pos >= len(p.s) {
		return wktArg{}, p.fail("unexpected end")
	}
	c := p.s[p.pos]
	switch {
	case c == '"':
		var b strings.Builder
		p.pos++
		for {
			i := strings.IndexByte(p.s[p.pos:], '"')
			if i < 0 {
				return wktArg{}, p.fail("unterminated string")
			}
			b.WriteString(p.s[p.pos : p.pos+i])
			p.pos += i + 1
			if p.pos < len(p.s) && p.s[p.pos] == '"' { // "" stands for one quote
				b.WriteByte('"')
				p.pos++
				continue
			}
			return wktArg{val: b.String(), quoted: true}, nil
		}
	case c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+':
		start := p.pos
		for p.pos < len(p.s) && isNumberByte(p.s[p.pos]) {
			p.pos++
		}
		v := p.s[start:p.pos]
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return wktArg{}, p.fail("bad number %q", v)
		}
		return wktArg{val: v}, nil
	case isWordByte(c):
		start := p.pos
		for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
			p.pos++
		}
		word := p.s[start:p.pos]
		p.skip()
		if p.pos < len(p.s) && (p.s[p.pos] == '[' || p.s[p.pos] == '(') {
			p.pos = start
			n, err := p.node(depth + 1)
			return wktArg{node: n}, err
		}
		return wktArg{val: word}, nil
	}
	return wktArg{}, p.fail("unexpected %q", c)
}
