package segment

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"mapcommons"
)

// Count is the number of features added so far.
func (w *Writer) Count() int { return w.n }

// NextID is the id the writer gives the next feature without one.
func (w *Writer) NextID() int64 { return w.nextID }

// SetDelta makes the segment a delta: the few features an edit of a
// dataset changes, read through a View and merged into a base by the next
// compaction. A delta has no attribute indexes (queries scan its few
// rows) and its summary has no medians (0): what a small segment written
// on every edit can do without.
func (w *Writer) SetDelta() { w.delta = true }

// FinishBytes is Finish into memory: it returns the bytes of the segment
// file, for a store that keeps a small segment elsewhere (a delta in the
// catalogue, committed with the change it holds), to read with FromBytes.
func (w *Writer) FinishBytes() ([]byte, *Summary, error) {
	var b bytes.Buffer
	w.memOut = &b
	sum, err := w.Finish("")
	if err != nil {
		return nil, nil, err
	}
	return b.Bytes(), sum, nil
}

// FromBytes reads a segment from the bytes FinishBytes gave (name names
// it in errors); the segment aliases data, which must not change.
func FromBytes(name string, data []byte) (*Segment, error) {
	if len(data) < 24 {
		return nil, corrupt(name, "%d bytes", len(data))
	}
	s, err := parse(name, data)
	if err != nil {
		return nil, err
	}
	s.inHeap = true
	return s, nil
}

// AddFrom appends feature pos of segment s, its id kept, as Add would
// append it read with s.Read, but copying its values in their stored form:
// nothing is boxed (a compaction copies millions). s must have the
// writer's attributes.
func (w *Writer) AddFrom(s *Segment, pos int) error {
	if err := w.ready(); err != nil {
		return err
	}
	if !slices.Equal(s.attrs, w.attrs) {
		return errors.New("segment: AddFrom a segment of other attributes")
	}
	id := s.ID(pos)
	if id == 0 { // ids start at 1: never "the next id" here
		return fmt.Errorf("segment: feature %d has id 0", pos)
	}
	return w.add(id, s.Geometry(pos), nil, s, pos)
}

// addFrom is add of value col of feature pos of s, in its stored form.
func (c *column) addFrom(row int, s *Segment, col, pos int, w *Writer) error {
	if s.IsNull(col, pos) {
		return c.add(row, nil, w)
	}
	src := &s.cols[col]
	switch c.typ {
	case mapcommons.AttrInteger, mapcommons.AttrFloat:
		c.data.write(src.data[8*pos : 8*pos+8])
	case mapcommons.AttrBoolean:
		c.data.write(src.data[pos : pos+1])
	default:
		b, _ := s.Bytes(col, pos)
		c.data.write(b)
		c.bytes += uint64(len(b))
		c.off.u64(c.bytes)
	}
	return nil
}
