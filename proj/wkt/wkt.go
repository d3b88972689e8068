// Package wkt parses the well-known text of coordinate reference systems
// (OGC WKT1, ESRI WKT1 as in a shapefile's .prj, and WKT2, with brackets
// or parentheses) into a tree of nodes, leaving what they mean to the
// caller: proj builds transforms of them, format/shapefile classifies a
// .prj.
package wkt

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth bounds how deep nodes nest.
const MaxDepth = 32

// Node is KEYWORD[arg, ...]; an argument is a quoted string, a number or a
// bare word (kept as text in Val), or a nested node.
type Node struct {
	Key  string // upper-cased
	Args []Arg
}

// Arg is one argument of a Node: a nested node (Node not nil) or a value.
type Arg struct {
	Node   *Node
	Val    string  // the text of a value, without the quotes of a string
	Quoted bool    // Val was a quoted string
	Num    float64 // the value of a number
	IsNum  bool    // Val is a number
}

// Name returns the node's first argument when it is a quoted string, ""
// otherwise (and for a nil node).
func (n *Node) Name() string {
	if n != nil && len(n.Args) > 0 && n.Args[0].Node == nil && n.Args[0].Quoted {
		return n.Args[0].Val
	}
	return ""
}

// Child returns the first direct child node with one of the keys (nil for
// none, and for a nil node).
func (n *Node) Child(keys ...string) *Node {
	if n == nil {
		return nil
	}
	for _, a := range n.Args {
		if a.Node != nil {
			for _, k := range keys {
				if a.Node.Key == k {
					return a.Node
				}
			}
		}
	}
	return nil
}

// Unit returns the unit node of a CRS node, a child with one of keys
// (UNIT, ANGLEUNIT, LENGTHUNIT …): a direct child (WKT1, or WKT2 without
// per-axis units), else one of its CS, else one of its first AXIS (WKT2);
// nil when there is none.
func (n *Node) Unit(keys ...string) *Node {
	if u := n.Child(keys...); u != nil {
		return u
	}
	if u := n.Child("CS").Child(keys...); u != nil {
		return u
	}
	return n.Child("AXIS").Child(keys...)
}

// Children returns every direct child node with the key.
func (n *Node) Children(key string) []*Node {
	var out []*Node
	for _, a := range n.Args {
		if a.Node != nil && a.Node.Key == key {
			out = append(out, a.Node)
		}
	}
	return out
}

// Number returns the i-th argument as a number.
func (n *Node) Number(i int) (float64, bool) {
	if n == nil || i >= len(n.Args) || !n.Args[i].IsNum {
		return 0, false
	}
	return n.Args[i].Num, true
}

// Word returns the i-th argument when it is text (quoted or bare).
func (n *Node) Word(i int) string {
	if n == nil || i >= len(n.Args) || n.Args[i].Node != nil || n.Args[i].IsNum {
		return ""
	}
	return n.Args[i].Val
}

// Parse parses one WKT node making up all of s (but for white space around
// it). Nodes nest at most MaxDepth deep; with maxNodes > 0, more than
// maxNodes nodes are an error too. The errors say at which byte the text
// went wrong.
func Parse(s string, maxNodes int) (*Node, error) {
	p := parser{s: s, maxNodes: maxNodes}
	n, err := p.node(0)
	if err != nil {
		return nil, err
	}
	if p.skip(); p.pos < len(p.s) {
		return nil, p.fail("unexpected text after the end")
	}
	return n, nil
}

type parser struct {
	s        string
	pos      int
	nodes    int
	maxNodes int
}

func (p *parser) fail(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) skip() {
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

// node parses KEYWORD[args] (or KEYWORD(args)).
func (p *parser) node(depth int) (*Node, error) {
	if depth > MaxDepth {
		return nil, p.fail("nested too deeply")
	}
	if p.nodes++; p.maxNodes > 0 && p.nodes > p.maxNodes {
		return nil, p.fail("too many elements")
	}
	p.skip()
	start := p.pos
	for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
		p.pos++
	}
	if start == p.pos {
		return nil, p.fail("expected a keyword")
	}
	n := &Node{Key: strings.ToUpper(p.s[start:p.pos])}
	p.skip()
	var closer byte
	switch {
	case p.pos < len(p.s) && p.s[p.pos] == '[':
		closer = ']'
	case p.pos < len(p.s) && p.s[p.pos] == '(':
		closer = ')'
	default:
		return nil, p.fail("expected [ or ( after %s", n.Key)
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
		n.Args = append(n.Args, a)
		p.skip()
		if p.pos >= len(p.s) {
			return nil, p.fail("%s is not closed", n.Key)
		}
		switch c := p.s[p.pos]; {
		case c == ',':
			p.pos++
		case c == closer:
			p.pos++
			return n, nil
		default:
			return nil, p.fail("unexpected %q in %s", c, n.Key)
		}
	}
}

// arg parses a quoted string, a number, a bare word or a nested node.
func (p *parser) arg(depth int) (Arg, error) {
	p.skip()
	if p.pos >= len(p.s) {
		return Arg{}, p.fail("unexpected end")
	}
	c := p.s[p.pos]
	switch {
	case c == '"':
		var b strings.Builder
		p.pos++
		for {
			i := strings.IndexByte(p.s[p.pos:], '"')
			if i < 0 {
				return Arg{}, p.fail("unterminated string")
			}
			b.WriteString(p.s[p.pos : p.pos+i])
			p.pos += i + 1
			if p.pos < len(p.s) && p.s[p.pos] == '"' { // "" stands for one quote
				b.WriteByte('"')
				p.pos++
				continue
			}
			return Arg{Val: b.String(), Quoted: true}, nil
		}
	case c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+':
		start := p.pos
		for p.pos < len(p.s) && isNumberByte(p.s[p.pos]) {
			p.pos++
		}
		v := p.s[start:p.pos]
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return Arg{}, p.fail("bad number %q", v)
		}
		return Arg{Val: v, Num: f, IsNum: true}, nil
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
			return Arg{Node: n}, err
		}
		return Arg{Val: word}, nil
	}
	return Arg{}, p.fail("unexpected %q", c)
}
