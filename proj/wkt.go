package proj

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits of the WKT parser: they bound the work done on hostile input.
const (
	maxPRJLen   = 64 << 10
	maxWKTDepth = 32
	maxWKTNodes = 4096
)

// node is KEYWORD[arg, ...]; an argument is a quoted string, a number or a
// bare word (kept as text in val), or a nested node.
type node struct {
	key  string // upper-cased
	args []arg
}

type arg struct {
	node   *node
	val    string
	quoted bool
	num    float64
	isNum  bool
}

// name returns the node's first argument when it is a quoted string.
func (n *node) name() string {
	if n != nil && len(n.args) > 0 && n.args[0].node == nil && n.args[0].quoted {
		return n.args[0].val
	}
	return ""
}

// child returns the first direct child node with one of the keys.
func (n *node) child(keys ...string) *node {
	if n == nil {
		return nil
	}
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

// children returns every direct child node with the key.
func (n *node) children(key string) []*node {
	var out []*node
	for _, a := range n.args {
		if a.node != nil && a.node.key == key {
			out = append(out, a.node)
		}
	}
	return out
}

// number returns the i-th argument as a number.
func (n *node) number(i int) (float64, bool) {
	if n == nil || i >= len(n.args) || !n.args[i].isNum {
		return 0, false
	}
	return n.args[i].num, true
}

// word returns the i-th argument when it is text (quoted or bare).
func (n *node) word(i int) string {
	if n == nil || i >= len(n.args) || n.args[i].node != nil || n.args[i].isNum {
		return ""
	}
	return n.args[i].val
}

type parser struct {
	s     string
	pos   int
	nodes int
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

// parseWKT parses one WKT node making up all of s.
func parseWKT(s string) (*node, error) {
	p := parser{s: s}
	n, err := p.node(0)
	if err != nil {
		return nil, err
	}
	if p.skip(); p.pos < len(p.s) {
		return nil, p.fail("unexpected text after the end")
	}
	return n, nil
}

// node parses KEYWORD[args] (or KEYWORD(args)).
func (p *parser) node(depth int) (*node, error) {
	if depth > maxWKTDepth {
		return nil, p.fail("nested too deeply")
	}
	if p.nodes++; p.nodes > maxWKTNodes {
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
	n := &node{key: strings.ToUpper(p.s[start:p.pos])}
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
func (p *parser) arg(depth int) (arg, error) {
	p.skip()
	if p.pos >= len(p.s) {
		return arg{}, p.fail("unexpected end")
	}
	c := p.s[p.pos]
	switch {
	case c == '"':
		var b strings.Builder
		p.pos++
		for {
			i := strings.IndexByte(p.s[p.pos:], '"')
			if i < 0 {
				return arg{}, p.fail("unterminated string")
			}
			b.WriteString(p.s[p.pos : p.pos+i])
			p.pos += i + 1
			if p.pos < len(p.s) && p.s[p.pos] == '"' { // "" stands for one quote
				b.WriteByte('"')
				p.pos++
				continue
			}
			return arg{val: b.String(), quoted: true}, nil
		}
	case c >= '0' && c <= '9' || c == '.' || c == '-' || c == '+':
		start := p.pos
		for p.pos < len(p.s) && isNumberByte(p.s[p.pos]) {
			p.pos++
		}
		v := p.s[start:p.pos]
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return arg{}, p.fail("bad number %q", v)
		}
		return arg{val: v, num: f, isNum: true}, nil
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
			return arg{node: n}, err
		}
		return arg{val: word}, nil
	}
	return arg{}, p.fail("unexpected %q", c)
}

// norm reduces a WKT name to lower-case letters and digits, so that ESRI
// ("Standard_Parallel_1"), OGC ("standard_parallel_1") and WKT2 ("Latitude
// of 1st standard parallel") spellings compare simply.
func norm(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		}
	}
	return string(b)
}
