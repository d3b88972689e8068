package segment

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"

	"mapcommons"
)

// The median of a numeric column is selected from the column as spooled,
// not from the values kept in memory: a radix selection of the middle
// ranks on the values' order-preserving bit patterns, 16 bits a pass, four
// passes over the column whatever its length, in constant memory.

// orderKey maps a float to a uint64 that sorts as the float does.
func orderKey(v float64) uint64 {
	u := math.Float64bits(v)
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

// fromOrderKey is the inverse of orderKey.
func fromOrderKey(u uint64) float64 {
	if u>>63 == 1 {
		return math.Float64frombits(u &^ (1 << 63))
	}
	return math.Float64frombits(^u)
}

// scanColumn calls fn with the order key of every non-null, finite value
// of a numeric column.
func (w *Writer) scanColumn(c *column, fn func(key uint64)) error {
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
		u := binary.LittleEndian.Uint64(b[:])
		v := math.Float64frombits(u)
		if c.typ == mapcommons.AttrInteger {
			v = float64(int64(u))
		}
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			fn(orderKey(v))
		}
	}
	return nil
}

// columnMedian returns the median of the m non-null, finite values of a
// numeric column (the mean of the two middle ones when m is even), as
// mapcommons.Median computes it.
func (w *Writer) columnMedian(c *column, m int64) (float64, error) {
	if m == 0 {
		return math.NaN(), nil
	}
	rank := [2]int64{(m - 1) / 2, m / 2}
	var prefix [2]uint64
	if w.hist == nil {
		w.hist = new([2][1 << 16]uint32) // counts fit: a segment holds fewer than 2³² features
	}
	hist := w.hist
	for shift := 48; shift >= 0; shift -= 16 {
		clear(hist[:])
		var mask uint64
		if shift < 48 {
			mask = ^uint64(0) << (shift + 16)
		}
		same := prefix[0] == prefix[1]
		err := w.scanColumn(c, func(key uint64) {
			d := key >> shift & 0xffff
			if key&mask == prefix[0] {
				hist[0][d]++
			}
			if !same && key&mask == prefix[1] {
				hist[1][d]++
			}
		})
		if err != nil {
			return 0, err
		}
		for k := range 2 {
			h := &hist[0]
			if !same {
				h = &hist[k]
			}
			for d, cnt := range h {
				if rank[k] < int64(cnt) {
					prefix[k] |= uint64(d) << shift
					break
				}
				rank[k] -= int64(cnt)
			}
		}
	}
	if m%2 == 1 {
		return fromOrderKey(prefix[0]), nil
	}
	return (fromOrderKey(prefix[0]) + fromOrderKey(prefix[1])) / 2, nil
}
