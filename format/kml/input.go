package kml

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// guard is the byte source under the xml.Decoder. It buffers the input and,
// when limited, bounds the bytes of the token being read: encoding/xml
// reads a whole token (a text run, a tag with all its attributes) before
// returning it, so a bound has to stop it from below. The parser arms the
// guard before each Token call with what may come: a tag (a '<' not
// followed by '!' or '?') may have maxTag bytes, the text of a coordinates
// element (or a CDATA section or comment there) big bytes, anything else
// text bytes.
type guard struct {
	src    io.Reader
	buf    []byte
	r, w   int
	n      int64 // bytes handed out
	base   int64 // the decoder's offset when it started reading from this guard
	last   byte
	srcErr error

	limited             bool
	mark                int64 // n where the current token starts
	first               [2]byte
	nfirst              int
	big                 bool
	maxTag, text, bigOK int64
}

// ioError wraps an error of the underlying reader.
type ioError struct{ err error }

func (e *ioError) Error() string { return "kml: reading the file: " + e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// limitError is returned when a token exceeds its bound.
type limitError struct {
	tag bool
	max int64
}

func (e *limitError) Error() string { return fmt.Sprintf("kml: token longer than %d bytes", e.max) }

func (g *guard) fill() error {
	if g.srcErr != nil {
		return g.srcErr
	}
	if g.buf == nil {
		g.buf = make([]byte, 64<<10)
	}
	g.r, g.w = 0, 0
	for tries := 0; g.w == 0; tries++ {
		n, err := g.src.Read(g.buf)
		g.w = n
		if err != nil {
			var ie *ioError
			if err != io.EOF && !errors.As(err, &ie) {
				err = &ioError{err}
			}
			g.srcErr = err
			if n == 0 {
				return err
			}
		} else if n == 0 && tries >= 100 {
			g.srcErr = &ioError{io.ErrNoProgress}
			return g.srcErr
		}
	}
	return nil
}

// ReadByte implements io.ByteReader, so that the decoder reads from the
// guard directly and the guard's count is the decoder's offset.
func (g *guard) ReadByte() (byte, error) {
	if g.r == g.w {
		if err := g.fill(); err != nil {
			return 0, err
		}
	}
	b := g.buf[g.r]
	g.r++
	g.n++
	g.last = b
	if g.limited {
		if g.nfirst < 2 {
			g.first[g.nfirst] = b
			g.nfirst++
		}
		if g.n-g.mark > g.maxTag {
			if err := g.check(); err != nil {
				return 0, err
			}
		}
	}
	return b, nil
}

func (g *guard) check() error {
	tag := g.nfirst == 2 && g.first[0] == '<' && g.first[1] != '!' && g.first[1] != '?'
	max := g.text
	switch {
	case tag:
		max = g.maxTag
	case g.big:
		max = g.bigOK
	}
	if g.n-g.mark > max {
		return &limitError{tag: tag, max: max}
	}
	return nil
}

// Read implements io.Reader (a CharsetReader reads the guard with it).
func (g *guard) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if g.r == g.w {
		if err := g.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, g.buf[g.r:g.w])
	g.r += n
	g.n += int64(n)
	g.last = p[n-1]
	return n, nil
}

// arm starts the bound of a new token. off is the decoder's offset: one
// byte less than the guard handed out when the decoder has put a byte back
// (the '<' that ended a text run), which then starts the token.
func (g *guard) arm(off int64, big bool) {
	g.big = big
	g.nfirst = 0
	g.mark = g.n
	switch g.base + g.n - off {
	case 0:
	case 1:
		g.first[0], g.nfirst = g.last, 1
		g.mark = g.n - 1
	default: // cannot happen; count the token as text
		g.first, g.nfirst = [2]byte{}, 2
	}
}

// errLateDeclaration reports an XML declaration after other markup.
var errLateDeclaration = errors.New("an XML declaration that is not at the start")

// charsetError reports an encoding we do not read.
type charsetError struct{ label string }

func (e *charsetError) Error() string { return "unsupported encoding " + e.label }

// cp1252 maps the bytes 0x80-0x9F of windows-1252; the five it leaves
// undefined are the C1 controls of the same value (the WHATWG mapping).
var cp1252 = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// table128 maps the bytes 0x80-0xFF of a single-byte charset.
type table128 [128]rune

var (
	win1252Table, latin9Table table128
)

func init() {
	for i := range win1252Table {
		win1252Table[i] = rune(0x80 + i)
		latin9Table[i] = rune(0x80 + i)
	}
	copy(win1252Table[:32], cp1252[:])
	for b, r := range map[byte]rune{0xA4: 0x20AC, 0xA6: 0x0160, 0xA8: 0x0161, 0xB4: 0x017D,
		0xB8: 0x017E, 0xBC: 0x0152, 0xBD: 0x0153, 0xBE: 0x0178} {
		latin9Table[b-0x80] = r
	}
}

// charsetTable returns the table of an encoding label, nil for labels that
// mean UTF-8 (or UTF-16 declared over 8-bit text, which must be UTF-8 as
// the declaration itself was read as ASCII), ok false for labels we do not
// read.
func charsetTable(label string) (t *table128, ok bool) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "unicode-1-1-utf-8", "utf-16", "utf16":
		return nil, true
	case "windows-1252", "cp1252", "x-cp1252", "iso-8859-1", "iso8859-1", "iso_8859-1", "iso88591",
		"latin1", "latin-1", "l1", "iso-ir-100", "csisolatin1", "ibm819", "cp819",
		"us-ascii", "ascii", "ansi_x3.4-1968", "iso-ir-6", "us":
		return &win1252Table, true
	case "iso-8859-15", "iso8859-15", "iso_8859-15", "iso885915", "latin-9", "latin9", "l9", "csisolatin9":
		return &latin9Table, true
	}
	return nil, false
}

// charsetReader decodes a single-byte charset to UTF-8.
type charsetReader struct {
	src io.Reader
	t   *table128
	in  [8 << 10]byte
	out []byte
	buf []byte
	err error
}

func (c *charsetReader) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		n, err := c.src.Read(c.in[:])
		c.err = err
		c.out = c.buf[:0]
		for _, b := range c.in[:n] {
			if b < utf8.RuneSelf {
				c.out = append(c.out, b)
			} else {
				c.out = utf8.AppendRune(c.out, c.t[b-0x80])
			}
		}
		c.buf = c.out[:0]
		if n == 0 && err == nil {
			c.err = &ioError{io.ErrNoProgress}
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}
