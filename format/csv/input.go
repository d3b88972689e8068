package csv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"mapcommons"
)

// Size limits of the input.
const (
	maxField  = 1 << 20  // bytes in one field
	maxRecord = 16 << 20 // bytes in one record (a logical line, quoted line breaks included)
	bufSize   = 64 << 10 // read buffer of the csv.Reader
)

// sniffed is what the first line of the input says about the whole file.
type sniffed struct {
	bomLen int64 // 3 when the file starts with a UTF-8 byte order mark
	delim  byte  // ',', ';' or '\t'
	crOnly bool  // lines end in a lone CR (classic Mac OS), translated to LF
}

// sniff reads the first record of the input (at most maxRecord bytes) and
// picks the delimiter that occurs most often outside quotes: comma, then
// semicolon, then tab on a tie, comma when there is none. A quote opens a
// quoted field only at the start of a field, as in the parser itself.
func sniff(rs io.ReadSeeker) (sniffed, error) {
	s := sniffed{delim: ','}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return s, ioError(err)
	}
	br := bufio.NewReaderSize(rs, bufSize)
	if b, _ := br.Peek(3); len(b) == 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		s.bomLen = 3
		br.Discard(3)
	} else if len(b) >= 2 && (b[0] == 0xFF && b[1] == 0xFE || b[0] == 0xFE && b[1] == 0xFF) {
		return s, mapcommons.Errorf(mapcommons.EINVALID, "the file is UTF-16 text (as Excel saves \"Unicode Text\"); save it as CSV in UTF-8")
	}
	var comma, semi, tab int
	fieldStart, quoted := true, false
scan:
	for n := 0; n < maxRecord; n++ {
		c, err := br.ReadByte()
		if err == io.EOF {
			break
		} else if err != nil {
			return s, ioError(err)
		}
		if quoted {
			if c == '"' {
				if next, _ := br.Peek(1); len(next) == 1 && next[0] == '"' {
					br.Discard(1)
					n++
				} else {
					quoted = false
				}
			}
			continue
		}
		switch c {
		case '"':
			quoted = fieldStart
			fieldStart = false
		case ',':
			comma++
			fieldStart = true
		case ';':
			semi++
			fieldStart = true
		case '\t':
			tab++
			fieldStart = true
		case '\n':
			break scan
		case '\r':
			if next, _ := br.Peek(1); len(next) == 0 || next[0] != '\n' {
				s.crOnly = true
			}
			break scan
		default:
			fieldStart = false
		}
	}
	switch {
	case semi > comma && semi >= tab:
		s.delim = ';'
	case tab > comma && tab > semi:
		s.delim = '\t'
	}
	return s, nil
}

// ioError wraps an error of the underlying reader.
func ioError(err error) error { return fmt.Errorf("csv: reading the input: %w", err) }

// Kinds of limitError.
const (
	tooManyFields = iota + 1
	fieldTooLong
	recordTooLong
	unclosedQuote
)

// limitError reports input that breaks a size limit, or a quoted field that
// is never closed, found by input before the csv.Reader buffers it.
type limitError struct {
	kind      int
	line      int64 // where the record starts
	field     int   // zero-based index of the field (fieldTooLong)
	fieldLine int64 // where the field starts (unclosedQuote)
}

func (e *limitError) Error() string { return fmt.Sprintf("csv limit %d at line %d", e.kind, e.line) }

// Scanner states, mirroring encoding/csv with LazyQuotes.
const (
	stFieldStart = iota
	stUnquoted
	stQuoted
	stQuoteSeen   // a quote inside a quoted field: closing, doubled or (lazily) literal
	stQuoteSeenCR // that quote followed by CR: the line end or a literal quote
	stStartCR     // a CR at the start of a record: an empty CRLF line or data
)

// input is the byte stream under the csv.Reader. It translates lone CR line
// ends, and in pass 1 (check) it validates UTF-8 and tracks records exactly
// as encoding/csv (LazyQuotes) splits them, so that a record with too many
// fields, a field over 1 MiB or a record over 16 MiB is refused before the
// csv.Reader holds it in memory: input then stops delivering bytes at that
// point and reports a *limitError.
type input struct {
	r      io.Reader
	crOnly bool
	check  bool

	err     error // reported once the delivered bytes are consumed
	badUTF8 bool
	pend    [utf8.UTFMax]byte // an incomplete trailing rune of the last chunk
	npend   int

	special   [256]bool // bytes that end an unquoted run: delimiter, quote, LF
	delim     byte
	delimSep  [1]byte
	maxFields int
	state     int
	line      int64 // current physical line, 1-based
	recLine   int64
	recLen    int64
	fields    int // delimiters seen in the current record
	fieldLen  int64
	fieldLine int64

	onRecord func(line int64, fields int) // tests: called at the end of each record
}

func newInput(r io.Reader, s sniffed, check bool, maxFields int) *input {
	in := &input{r: r, crOnly: s.crOnly, check: check, delim: s.delim, maxFields: maxFields, line: 1}
	in.delimSep[0] = s.delim
	in.special[s.delim] = true
	in.special['"'] = true
	in.special['\n'] = true
	return in
}

// Read implements io.Reader.
func (in *input) Read(p []byte) (int, error) {
	if in.err != nil {
		return 0, in.err
	}
	n, err := in.r.Read(p)
	if n < 0 || n > len(p) {
		return 0, ioError(errors.New("invalid read count"))
	}
	if in.crOnly {
		for i, c := range p[:n] {
			if c == '\r' {
				p[i] = '\n'
			}
		}
	}
	if in.check {
		in.validate(p[:n])
		if k, lerr := in.scan(p[:n]); lerr != nil {
			in.err = lerr
			return k, nil
		}
		if err == io.EOF {
			if in.npend > 0 {
				in.badUTF8 = true
				in.npend = 0
			}
			if in.state == stQuoted {
				in.err = &limitError{kind: unclosedQuote, line: in.recLine, fieldLine: in.fieldLine}
				return n, nil
			}
			if in.recLen > 0 {
				in.endRecord()
			}
			in.state = stFieldStart
		}
	}
	if err != nil && err != io.EOF {
		err = ioError(err)
	}
	return n, err
}

// validUTF8 reports whether everything read so far (to EOF) is UTF-8.
func (in *input) validUTF8() bool { return in != nil && !in.badUTF8 && in.npend == 0 }

// validate checks that p continues valid UTF-8, carrying an incomplete
// trailing rune over to the next chunk.
func (in *input) validate(p []byte) {
	if in.badUTF8 {
		return
	}
	for in.npend > 0 && len(p) > 0 {
		in.pend[in.npend] = p[0]
		in.npend++
		p = p[1:]
		if utf8.FullRune(in.pend[:in.npend]) {
			if _, size := utf8.DecodeRune(in.pend[:in.npend]); size != in.npend {
				in.badUTF8 = true
				return
			}
			in.npend = 0
		}
	}
	if len(p) == 0 {
		return
	}
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-(utf8.UTFMax-1); i-- {
		if c := p[i]; c < utf8.RuneSelf {
			break
		} else if utf8.RuneStart(c) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(p[:cut]) {
		in.badUTF8 = true
		return
	}
	in.npend = copy(in.pend[:], p[cut:])
}

// scan follows the record structure over p. It returns the number of bytes
// that may be delivered and a *limitError when a limit is broken. Lines
// without quotes take a fast path; the rest goes byte by byte.
func (in *input) scan(p []byte) (int, error) {
	pos := 0
	for pos < len(p) {
		if in.state == stFieldStart || in.state == stUnquoted {
			end, all := len(p), true
			if q := bytes.IndexByte(p[pos:], '"'); q >= 0 {
				end, all = pos+q, false
			}
			n, err := in.scanLines(p[pos:end], all)
			if err != nil {
				return pos + n, err
			}
			if pos += n; pos == len(p) {
				break
			}
		}
		n, err := in.scanBytes(p[pos:])
		if err != nil {
			return pos + n, err
		}
		pos += n
	}
	return len(p), nil
}

// scanLines handles the complete lines of p, which has no quote, and when
// all is set the incomplete last line too. It stops before a line that might
// break a size limit, leaving it to scanBytes, and returns the bytes done.
func (in *input) scanLines(p []byte, all bool) (int, error) {
	pos := 0
	for pos < len(p) {
		nl := bytes.IndexByte(p[pos:], '\n')
		if nl < 0 && !all {
			break
		}
		line := p[pos:]
		if nl >= 0 {
			line = line[:nl]
		}
		if in.recLen+int64(len(line)) > maxRecord || in.fieldLen+int64(len(line)) > maxField {
			break
		}
		if nl >= 0 && in.recLen == 0 && (len(line) == 0 || len(line) == 1 && line[0] == '\r') {
			in.line++ // an empty line, which encoding/csv skips
			pos += nl + 1
			continue
		}
		if nl < 0 && in.recLen == 0 && len(line) == 1 && line[0] == '\r' {
			in.state = stStartCR
			return len(p), nil
		}
		if in.recLen == 0 {
			in.recLine = in.line
		}
		k := bytes.Count(line, in.delimSep[:])
		if in.fields += k; in.fields >= in.maxFields {
			return pos, &limitError{kind: tooManyFields, line: in.recLine}
		}
		if nl >= 0 {
			in.line++
			in.endRecord()
			pos += nl + 1
			continue
		}
		// the incomplete last line
		in.recLen += int64(len(line))
		if k > 0 {
			in.fieldLen = int64(len(line) - 1 - bytes.LastIndexByte(line, in.delim))
		} else {
			in.fieldLen += int64(len(line))
		}
		if line[len(line)-1] == in.delim {
			in.state = stFieldStart
		} else {
			in.state = stUnquoted
		}
		return len(p), nil
	}
	return pos, nil
}

// scanBytes follows p byte by byte to the end of the current record.
func (in *input) scanBytes(p []byte) (int, error) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if in.recLen == 0 {
			switch {
			case in.state == stStartCR:
				in.state = stFieldStart
				if c == '\n' { // an empty CRLF line
					in.line++
					continue
				}
				in.recLine = in.line // the CR is the first byte of the record
				in.state = stUnquoted
				in.fieldLen, in.recLen = 1, 1
			case c == '\n': // an empty line, which encoding/csv skips
				in.line++
				continue
			case c == '\r':
				in.state = stStartCR
				continue
			default:
				in.recLine = in.line
			}
		}
		switch in.state {
		case stFieldStart, stUnquoted:
			if !in.special[c] {
				j := i + 1
				for j < len(p) && !in.special[p[j]] {
					j++
				}
				in.state = stUnquoted
				in.fieldLen += int64(j - i)
				in.recLen += int64(j - i)
				if err := in.sizes(i); err != nil {
					return i, err
				}
				i = j - 1
				continue
			}
			switch c {
			case '\n':
				in.line++
				in.endRecord()
				return i + 1, nil
			case in.delim:
				if err := in.nextField(i); err != nil {
					return i, err
				}
			default: // '"'
				if in.state == stFieldStart {
					in.state = stQuoted
					in.fieldLine = in.line
				} else {
					in.fieldLen++
				}
			}
		case stQuoted:
			if c == '"' {
				in.state = stQuoteSeen
			} else {
				if c == '\n' {
					in.line++
				}
				in.fieldLen++
			}
		case stQuoteSeen:
			switch c {
			case '"':
				in.state = stQuoted
				in.fieldLen++
			case in.delim:
				if err := in.nextField(i); err != nil {
					return i, err
				}
			case '\n':
				in.line++
				in.endRecord()
				return i + 1, nil
			case '\r':
				in.state = stQuoteSeenCR
			default:
				in.state = stQuoted
				in.fieldLen += 2
			}
		case stQuoteSeenCR:
			if c == '\n' {
				in.line++
				in.endRecord()
				return i + 1, nil
			}
			// A literal quote and CR; c belongs to the quoted field.
			in.state = stQuoted
			in.fieldLen += 2
			i--
			continue
		}
		in.recLen++
		if err := in.sizes(i); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

func (in *input) sizes(i int) error {
	if in.fieldLen > maxField {
		return &limitError{kind: fieldTooLong, line: in.recLine, field: in.fields}
	}
	if in.recLen > maxRecord {
		return &limitError{kind: recordTooLong, line: in.recLine}
	}
	return nil
}

func (in *input) nextField(i int) error {
	in.fields++
	in.fieldLen = 0
	in.state = stFieldStart
	if in.fields >= in.maxFields {
		return &limitError{kind: tooManyFields, line: in.recLine}
	}
	return nil
}

func (in *input) endRecord() {
	if in.onRecord != nil {
		in.onRecord(in.recLine, in.fields+1)
	}
	in.state = stFieldStart
	in.recLen = 0
	in.fields = 0
	in.fieldLen = 0
}
