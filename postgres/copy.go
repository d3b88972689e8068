package postgres

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"mapcommons"
)

// The rows of a load go to PostgreSQL as binary COPY data encoded here,
// column by column as the table's types want them (int8, float8, bool,
// bytea: big-endian, as COPY's binary format has them), rather than
// through pgx's generic per-value encoding. They go in chunks of about
// copyChunk bytes, each chunk in the Hilbert order of its rows' box
// centres: the rows near one another on the map share pages, so a bbox
// query reads tens of pages where it read one per row. Positions are a
// column (pos), so the order of the rows in the table changes no answer.

// copyChunk bounds the rows held at once, encoded (variable for tests).
var copyChunk = 8 << 20

// copyHeader starts binary COPY data: the signature, no flags, no
// header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// copyRow is one encoded row of a chunk: buf[start:end], and its place on
// the Hilbert curve.
type copyRow struct {
	key        uint64
	start, end int
}

// copyChunkOf is a chunk of rows, encoded, in the order they go out.
type copyChunkOf struct {
	buf  []byte
	rows []copyRow
}

// copyProducer reads a FeatureSource into chunks, checking each feature
// as the segment writer does (generation.add), on a goroutine of its own:
// the next chunk is made while PostgreSQL takes the last.
type copyProducer struct {
	ctx   context.Context
	g     *generation
	src   mapcommons.FeatureSource
	match *idMatcher
	err   error // why it stopped early; read once ready is closed
}

// run fills the chunks free gives it and sends them to ready, until the
// source ends, fails, or stop is closed; then closes ready.
func (p *copyProducer) run(free <-chan *copyChunkOf, ready chan<- *copyChunkOf, stop <-chan struct{}) {
	defer close(ready)
	for {
		var ch *copyChunkOf
		select {
		case ch = <-free:
		case <-stop:
			return
		}
		eof := p.fill(ch)
		if p.err != nil {
			return
		}
		select {
		case ready <- ch:
		case <-stop:
			return
		}
		if eof {
			return
		}
	}
}

// fill reads the next chunk of features from the source, and puts its
// rows in Hilbert order; eof is true when the source is done.
func (p *copyProducer) fill(ch *copyChunkOf) (eof bool) {
	ch.buf, ch.rows = ch.buf[:0], ch.rows[:0]
	for len(ch.buf) < copyChunk {
		if p.g.n%4096 == 0 {
			if p.err = p.ctx.Err(); p.err != nil {
				return false
			}
		}
		f, err := p.src.Next()
		if errors.Is(err, mapcommons.EOF) {
			eof = true
			break
		} else if err != nil {
			p.err = err
			return false
		}
		f.ID = 0 // the store gives the ids, whatever the source says
		if p.match != nil {
			f.ID = p.match.id(f, p.g.lastID)
		}
		start := len(ch.buf)
		buf, key, err := p.g.add(f, ch.buf)
		if err != nil {
			p.err = err
			return false
		}
		ch.buf = buf
		ch.rows = append(ch.rows, copyRow{key: key, start: start, end: len(ch.buf)})
	}
	slices.SortStableFunc(ch.rows, func(a, b copyRow) int { return cmp.Compare(a.key, b.key) })
	return eof
}

// copyReader reads the producer's chunks as binary COPY data.
type copyReader struct {
	p      *copyProducer
	free   chan<- *copyChunkOf
	ready  <-chan *copyChunkOf
	cur    *copyChunkOf // going out: its row next, from byte off of it
	next   int
	off    int
	header bool // sent
	done   bool // the trailer is sent
}

func (c *copyReader) Read(p []byte) (int, error) {
	n := 0
	if !c.header {
		c.header = true
		n = copy(p, copyHeader)
	}
	for n < len(p) {
		if c.cur == nil || c.next == len(c.cur.rows) {
			if c.cur != nil {
				c.free <- c.cur // room for it: it came from there
				c.cur = nil
			}
			if c.done {
				return n, io.EOF
			}
			ch, ok := <-c.ready
			if !ok {
				if c.p.err != nil {
					return n, c.p.err
				}
				if len(p)-n < 2 {
					return n, nil
				}
				c.done = true
				n += copy(p[n:], []byte{0xff, 0xff}) // the trailer: a field count of -1
				continue
			}
			c.cur, c.next, c.off = ch, 0, 0
			continue
		}
		r := c.cur.rows[c.next]
		k := copy(p[n:], c.cur.buf[r.start+c.off:r.end])
		n += k
		if c.off += k; r.start+c.off == r.end {
			c.next, c.off = c.next+1, 0
		}
	}
	return n, nil
}

// copyFrom copies the features of src into the generation's table.
func (g *generation) copyFrom(ctx context.Context, src mapcommons.FeatureSource, match *idMatcher) error {
	p := &copyProducer{ctx: ctx, g: g, src: src, match: match}
	free, ready, stop := make(chan *copyChunkOf, 2), make(chan *copyChunkOf, 1), make(chan struct{})
	free <- new(copyChunkOf)
	free <- new(copyChunkOf)
	var wg sync.WaitGroup
	wg.Go(func() { p.run(free, ready, stop) })
	cr := &copyReader{p: p, free: free, ready: ready}
	sql := `COPY ` + ident(g.table) + ` (` + strings.Join(g.columns(), ", ") + `) FROM STDIN (FORMAT binary)`
	err := flush(ctx, g.tx) // what the transaction queued goes first, its failure with it
	if err == nil {
		_, err = g.tx.Conn().PgConn().CopyFrom(ctx, cr, sql)
	}
	close(stop)
	wg.Wait() // the generation is the producer's until it is done
	if p.err != nil {
		return p.err // the source's or a check's, rather than COPY's report of it
	}
	return formatError(err)
}

// appendInt8 and the others append one field of a binary COPY row: its
// length, then its bytes.
func appendInt8(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}

func appendFloat8(b []byte, v float64) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(v))
}

func appendNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, math.MaxUint32) }

func appendBytes(b []byte, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// appendValue appends an attribute's value (of its Go type, which
// SummaryBuilder.CheckValues has checked) as its column wants it.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return appendNull(b), nil
	case int64:
		return appendInt8(b, v), nil
	case float64:
		return appendFloat8(b, v), nil
	case bool:
		b = binary.BigEndian.AppendUint32(b, 1)
		if v {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case string:
		b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
		return append(b, v...), nil
	}
	return b, fmt.Errorf("postgres: a value of type %T", v)
}
