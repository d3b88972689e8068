package segment

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"

	"mapcommons"
)

// The median of a numeric column is selected from the column as spooled,
// not from values kept in memory: mapcommons.MedianOfKeys reads the column
// four times through scanColumn.

// scanColumn calls fn with the order key of every non-null, finite value
// of a numeric column.
func (w *Writer) scanColumn(c *column, fn func(key uint64)) error {
	if c.data.inMem && (c.nul == nil || c.nul.inMem) {
		return scanMem(c, w.n, fn)
	}
	if w.colReader[0] == nil {
		w.colReader[0], w.colReader[1] = bufio.NewReaderSize(nil, 64<<10), bufio.NewReaderSize(nil, 16<<10)
	}
	if err := c.data.rewind(); err != nil {
		return err
	}
	r, n := w.colReader[0], w.n
	r.Reset(c.data.f)
	var nul *bufio.Reader
	if c.nul != nil {
		if err := c.nul.rewind(); err != nil {
			return err
		}
		nul = w.colReader[1]
		nul.Reset(c.nul.f)
	}
	var b [8]byte
	var bits byte
	for i := 0; i < n; i++ {
		if nul != nil && i%8 == 0 {
			var err error
			if bits, err = nul.ReadByte(); err != nil {
				return err
			}
		}
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return err
		}
		if bits&(1<<(i%8)) != 0 {
			continue
		}
		medianKey(c.typ, binary.LittleEndian.Uint64(b[:]), fn)
	}
	return nil
}

// scanMem is scanColumn over a column held in memory.
func scanMem(c *column, n int, fn func(key uint64)) error {
	data := c.data.mem
	var nul []byte
	if c.nul != nil {
		nul = c.nul.mem
		if len(nul) < (n+7)/8 {
			return io.ErrUnexpectedEOF
		}
	}
	if len(data) < 8*n {
		return io.ErrUnexpectedEOF
	}
	for i := 0; i < n; i++ {
		if nul != nil && nul[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		medianKey(c.typ, binary.LittleEndian.Uint64(data[8*i:]), fn)
	}
	return nil
}

// medianKey passes fn the order key of the stored value u of a column of
// type typ, unless it is not finite (medians leave those out).
func medianKey(typ mapcommons.AttrType, u uint64, fn func(key uint64)) {
	v := math.Float64frombits(u)
	if typ == mapcommons.AttrInteger {
		v = float64(int64(u))
	}
	if !math.IsNaN(v) && !math.IsInf(v, 0) {
		fn(mapcommons.OrderKey(v))
	}
}
