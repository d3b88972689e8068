package postgres

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"

	"mapcommons"
)

// The medians of a features table's numeric columns are selected as the
// segment writer selects them (mapcommons.MedianOfKeys: a radix selection
// in four passes, in constant memory), over the columns' values spooled to
// temporary files while the rows go by: 8 bytes a value on disk, read
// back four times, where a sort in SQL took a second and more for a
// million rows. The files are unlinked as soon as they are made: the disk
// they take is freed when they are closed, or when the process ends.

// medianSpool holds the order keys of the finite values of each numeric
// attribute added so far, by attribute index. A nil spool keeps nothing
// (an edit's, whose summary extends the dataset's and selects no median:
// a temporary file made for each edit's add took a third of its time).
type medianSpool struct {
	cols map[int]*spooledColumn
	err  error // the first write error
}

type spooledColumn struct {
	f *os.File
	w *bufio.Writer
}

// newMedianSpool spools the numeric attributes of attrs.
func newMedianSpool(attrs []mapcommons.Attribute) *medianSpool {
	s := &medianSpool{cols: map[int]*spooledColumn{}}
	for i, a := range attrs {
		if a.Type.Numeric() {
			s.cols[i] = nil // made on the first value
		}
	}
	return s
}

// add spools the numeric values of one feature (checked already).
func (s *medianSpool) add(values []any) {
	if s == nil || s.err != nil {
		return
	}
	for i, c := range s.cols {
		var v float64
		switch x := values[i].(type) {
		case int64:
			v = float64(x)
		case float64:
			v = x
		default:
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if c == nil {
			f, err := os.CreateTemp("", "mapcommons-median-*")
			if err != nil {
				s.err = err
				return
			}
			os.Remove(f.Name())
			c = &spooledColumn{f: f, w: bufio.NewWriterSize(f, 64<<10)}
			s.cols[i] = c
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], mapcommons.OrderKey(v))
		if _, err := c.w.Write(b[:]); err != nil {
			s.err = err
			return
		}
	}
}

// median selects the median of attribute i's n spooled values.
func (s *medianSpool) median(i int, n int64) (float64, error) {
	if s == nil {
		return math.NaN(), nil
	}
	if s.err != nil {
		return 0, s.err
	}
	c := s.cols[i]
	if c == nil {
		return math.NaN(), nil
	}
	if err := c.w.Flush(); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(nil, 64<<10)
	var b [8]byte
	return mapcommons.MedianOfKeys(n, func(fn func(key uint64)) error {
		if _, err := c.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		r.Reset(c.f)
		for {
			if _, err := io.ReadFull(r, b[:]); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			fn(binary.LittleEndian.Uint64(b[:]))
		}
	})
}

// close closes the files (their disk is freed).
func (s *medianSpool) close() {
	if s == nil {
		return
	}
	for _, c := range s.cols {
		if c != nil {
			c.f.Close()
		}
	}
}
