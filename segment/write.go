// Package segment stores the features of one dataset as an immutable,
// column-oriented file: one section per attribute column, the geometries as
// WKB, and a packed Hilbert R-tree over their boxes. A segment is written
// once, by streaming features into a Writer, and then only read, through a
// read-only memory map, so queries scan columns at memory speed without
// holding the data on the heap. Changing a dataset's features writes a new
// segment and swaps it in; readers of the old one finish undisturbed.
//
// File layout (little endian): the magic "MCSEG001", the sections, each
// aligned to 64 bytes, then a footer: a JSON header (attributes, section
// offsets, summary, next id), its length as 8 bytes, and the magic again.
//
// Every feature has a stable id (section "ids", an int64 per feature,
// strictly increasing by position), and the header holds the dataset's next
// id: the high-water mark above every id ever given, so that an id is never
// reused, not even after the features that had the highest ids are deleted.
// Files written before ids were stored have neither: their ids are the
// positions plus one and their next id the count plus one.
//
// Each attribute column may have an index, section "cN.perm": the
// positions in the order of a sort by that column (attrindex_write.go).
// The sections are optional, like "ids": files written before them, and
// segments too large to index, open and answer by scanning.
package segment

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
)

const magic = "MCSEG001"

// header is the JSON header of a segment file.
type header struct {
	Count    int                    `json:"count"`
	Attrs    []mapcommons.Attribute `json:"attributes"`
	Sections map[string][2]int64    `json:"sections"` // name → offset, length
	Levels   []int                  `json:"levels"`
	Summary  Summary                `json:"summary"`
	NextID   int64                  `json:"next_id,omitempty"` // 0 in files without ids
}

// Summary is what a segment knows about its features as a whole, as the
// domain computes it.
type Summary = mapcommons.Summary

// section is one section being written: held in memory while the
// writer's sections are small (mem), else spooled to its own temporary
// file (or another temporary file of the writer's: a run of the index
// build).
type section struct {
	name  string
	path  string
	f     *os.File // nil while a finished run waits, closed, for its merge
	w     *bufio.Writer
	inMem bool    // the bytes are in mem (no file)
	mem   []byte  // the bytes while inMem
	wr    *Writer // the writer whose memory an in-memory section counts
	size  int64
	gone  bool    // removed already
	buf   [8]byte // u64's bytes: a local array would escape to the heap
}

// rewind flushes what was written and goes back to the start to read it
// (nothing to do in memory).
func (s *section) rewind() error {
	if s.inMem {
		return nil
	}
	if s.w != nil {
		if err := s.w.Flush(); err != nil {
			return err
		}
	}
	_, err := s.f.Seek(0, io.SeekStart)
	return err
}

// reader rewinds the section and returns a reader of its bytes.
func (s *section) reader() (io.Reader, error) {
	if s.inMem {
		return bytes.NewReader(s.mem), nil
	}
	if err := s.rewind(); err != nil {
		return nil, err
	}
	return s.f, nil
}

func (s *section) write(b []byte) {
	s.size += int64(len(b))
	if s.inMem && len(s.mem)+len(b) > cap(s.mem) {
		s.grow(len(b)) // or spill
	}
	if s.inMem {
		s.mem = append(s.mem, b...)
		return
	}
	s.w.Write(b) // errors surface at flush
}

// writeString is write(str) without converting str to bytes.
func (s *section) writeString(str string) {
	s.size += int64(len(str))
	if s.inMem && len(s.mem)+len(str) > cap(s.mem) {
		s.grow(len(str))
	}
	if s.inMem {
		s.mem = append(s.mem, str...)
		return
	}
	s.w.WriteString(str)
}

// grow makes room for n more bytes in memory, doubling (not append's
// gentler growth of large slices: what the writer allocates stays within
// twice what it holds), unless that would take the writer's memory beyond
// spillAt: then every section goes to its file. The buffer left behind
// may still be read (the tree's levels are read from the sections they
// grow): it is given back to the pool only when the writer is done.
func (s *section) grow(n int) {
	w := s.wr
	c := memCap(max(2*cap(s.mem), len(s.mem)+n))
	if w.memSize+int64(c-cap(s.mem)) > w.spillAt {
		if w.spill(); !s.inMem {
			return
		}
	}
	w.memSize += int64(c - cap(s.mem))
	m := getMem(c)[:len(s.mem)]
	copy(m, s.mem)
	w.retire(s.mem)
	s.mem = m
}

// The memory of in-memory sections is recycled from writer to writer
// (small segments are written one after another, an edit after another),
// in power-of-two capacities from memMinCap.
const memMinCap = 256

var memPools [17]sync.Pool // *[]byte of capacity memMinCap<<k

// memCap is the capacity of the buffer that holds n bytes.
func memCap(n int) int {
	return memMinCap << bits.Len(uint(max(n, 1)-1)/memMinCap)
}

// getMem returns an empty buffer of capacity c (a memCap).
func getMem(c int) []byte {
	if k := bits.TrailingZeros(uint(c / memMinCap)); k < len(memPools) {
		if b, ok := memPools[k].Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, c)
}

// retire gives b back to the pool when the writer is done (b is no
// longer written, but may still be read until then).
func (w *Writer) retire(b []byte) {
	if cap(b) > 0 {
		w.retired = append(w.retired, b)
	}
}

// putMem gives a buffer from getMem back.
func putMem(b []byte) {
	c := cap(b)
	if c < memMinCap || c&(c-1) != 0 {
		return
	}
	if k := bits.TrailingZeros(uint(c / memMinCap)); k < len(memPools) {
		b = b[:0]
		memPools[k].Put(&b)
	}
}

func (s *section) u64(v uint64) {
	binary.LittleEndian.PutUint64(s.buf[:], v)
	s.write(s.buf[:])
}

// column writes one attribute.
type column struct {
	typ     mapcommons.AttrType
	data    *section
	off     *section // strings: end offsets
	nul     *section // the null bitmap (bit set = null), from the first null on
	nulByte byte     // the bits of the current eight rows
	bytes   uint64   // strings: bytes so far
}

// defaultSpillAt is how many bytes of sections (their capacity) a writer
// holds in memory before it spools them all to temporary files. Below it
// (a small segment, such as the delta of an edit) the writer makes no
// temporary file and writes the segment in one go, Finish building in
// memory too if that takes no more than spillAt again; beyond it, the
// writer works as it always did. Growing the sections by doubling
// allocates up to twice what they hold.
const defaultSpillAt = 1 << 20

// Writer streams features into a new segment. What it holds in memory
// does not grow with the features: up to spillAt bytes, the sections are
// kept in memory; beyond, columns, geometries, null bitmaps and the
// index's items are spooled to temporary files in its directory.
type Writer struct {
	// delta: a small segment of changes (SetDelta): no attribute indexes,
	// no medians.
	delta bool
	// memOut receives the file's bytes instead of a file (FinishBytes).
	memOut   *bytes.Buffer
	row      rowView // AddFrom's row
	dir      string
	attrs    []mapcommons.Attribute
	sections []*section // in the order of the file
	temps    []*section // every temporary file, for Abort
	geomOff  *section
	geom     *section
	ids      *section // the features' stable ids
	lastID   int64    // the id of the last feature added (0: none yet)
	nextID   int64    // the id Add gives a feature without one
	cols     []*column
	items    *section // the index's items (itemSize bytes each)
	nItems   int
	tree     [4]*section // tree.boxes, tree.ids, tree.minpos, tree.maxpos
	levels   []int
	runItems int                      // items sorted in memory at a time
	fanIn    int                      // runs merged at a time
	hook     func(stage string) error // for tests: fail at a stage of Finish
	spillAt  int64                    // the most bytes of sections held in memory
	memSize  int64                    // the bytes of the sections in memory (capacity)
	spilled  bool                     // the sections are in temporary files
	err      error                    // of a spill: the writer is broken
	retired  [][]byte                 // buffers for the pool when done
	// buffers the index build and the medians reuse
	runBuf     *bufio.Writer
	runReaders []*bufio.Reader
	colReader  [2]*bufio.Reader
	n          int
	geomSize   uint64
	extent     wkb.Rect                   // of the index boxes
	sum        *mapcommons.SummaryBuilder // the summary and the features' checks
	scratch    []byte
	done       bool
}

// MaxFeatures is the most features one segment holds (positions are 32-bit).
const MaxFeatures = math.MaxUint32 - 1

// NewWriter starts a segment of features with the given attributes, spooling
// to temporary files in dir once they take more than a little memory.
func NewWriter(dir string, attrs []mapcommons.Attribute) (*Writer, error) {
	w := &Writer{dir: dir, attrs: attrs, extent: wkb.EmptyRect, sum: mapcommons.NewSummaryBuilder(attrs, false),
		runItems: defaultRunItems, fanIn: defaultFanIn, nextID: 1, spillAt: defaultSpillAt}
	var err error
	if w.geomOff, err = w.section("geom.off"); err != nil {
		return nil, err
	}
	if w.items, err = w.temp("items"); err != nil {
		w.Abort()
		return nil, err
	}
	w.geomOff.u64(0)
	if w.geom, err = w.section("geom"); err != nil {
		w.Abort()
		return nil, err
	}
	if w.ids, err = w.section("ids"); err != nil {
		w.Abort()
		return nil, err
	}
	for i, a := range attrs {
		c := &column{typ: a.Type}
		name := "c" + strconv.Itoa(i)
		if c.data, err = w.section(name); err != nil {
			w.Abort()
			return nil, err
		}
		if a.Type == mapcommons.AttrString || a.Type == mapcommons.AttrDate {
			if c.off, err = w.section(name + ".off"); err != nil {
				w.Abort()
				return nil, err
			}
			c.off.u64(0)
		}
		w.cols = append(w.cols, c)
	}
	return w, nil
}

// section starts a section of the file, in the order of the file.
func (w *Writer) section(name string) (*section, error) {
	s, err := w.temp(name)
	if err != nil {
		return nil, err
	}
	w.sections = append(w.sections, s)
	return s, nil
}

// temp starts a temporary section: in memory until the writer spills,
// else a temporary file that Abort removes.
func (w *Writer) temp(name string) (*section, error) {
	if !w.spilled {
		s := &section{name: name, inMem: true, wr: w}
		w.temps = append(w.temps, s)
		return s, nil
	}
	f, err := os.CreateTemp(w.dir, "seg-*.part")
	if err != nil {
		return nil, err
	}
	s := &section{name: name, path: f.Name(), f: f, w: bufio.NewWriterSize(f, 64<<10)}
	w.temps = append(w.temps, s)
	return s, nil
}

// spill moves every section in memory to its own temporary file, from
// where the writer goes on as if it had never held them. A failure breaks
// the writer (w.err).
func (w *Writer) spill() {
	if w.spilled {
		return
	}
	w.spilled = true
	for _, s := range w.temps {
		if !s.inMem || s.gone {
			continue
		}
		f, err := os.CreateTemp(w.dir, "seg-*.part")
		if err != nil {
			w.err = err
			return
		}
		if _, err := f.Write(s.mem); err != nil && w.err == nil {
			w.err = err
		}
		s.path, s.f, s.w = f.Name(), f, bufio.NewWriterSize(f, 64<<10)
		w.retire(s.mem)
		s.inMem, s.mem = false, nil
	}
	w.memSize = 0
}

// drop removes a temporary file that is no longer needed.
func (w *Writer) drop(s *section) {
	if !s.gone {
		if s.inMem {
			w.retire(s.mem)
			s.mem = nil
		} else {
			if s.f != nil {
				s.f.Close()
			}
			os.Remove(s.path)
		}
		s.gone = true
	}
}

// Abort removes what the writer spooled.
func (w *Writer) Abort() {
	for _, s := range w.temps {
		w.drop(s)
	}
	for _, b := range w.retired {
		putMem(b)
	}
	w.temps, w.sections, w.retired = nil, nil, nil
	w.done = true
}

// SetNextID raises the id the writer gives next to at least id: the old
// segment's NextID when rewriting a dataset, so that the ids of deleted
// features are not given again. It never lowers it.
func (w *Writer) SetNextID(id int64) {
	w.nextID = max(w.nextID, id)
}

// LastID is the id of the last feature added (0 before the first).
func (w *Writer) LastID() int64 { return w.lastID }

// Add appends one feature. Its values must match the attribute types (nil
// for null); its geometry must be WKB in the stored form (or nil). The
// feature keeps f.ID when it is not zero, which must then be greater than
// the id of the feature added before; else it gets the next id, which Add
// does not write back to f.
func (w *Writer) Add(f *mapcommons.Feature) error {
	if err := w.ready(); err != nil {
		return err
	}
	if err := w.sum.CheckValues(f.Values); err != nil {
		return mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", w.n, err)
	}
	return w.add(f.ID, f.Geometry, f.Values, nil, 0)
}

// ready refuses an Add after Finish or Abort, or after a failed write.
func (w *Writer) ready() error {
	if w.done {
		return errors.New("segment: Add after Finish or Abort")
	}
	return w.err
}

// add appends the feature with id (0: the next), geometry geom and
// values: values, checked already, or (src not nil) those of feature pos
// of src, copied in their stored form.
func (w *Writer) add(id int64, geom []byte, values []any, src *Segment, pos int) error {
	if w.n >= MaxFeatures {
		return mapcommons.Errorf(mapcommons.ETOOLARGE, "more than %d features", MaxFeatures)
	}
	if id == 0 {
		id = w.nextID
	} else if id <= w.lastID || id == math.MaxInt64 { // the next id must exist
		return fmt.Errorf("segment: feature %d has id %d, not above the previous %d", w.n, id, w.lastID)
	}
	var row mapcommons.Row
	if src != nil {
		w.row.s, w.row.pos = src, pos
		row = &w.row
	}
	box, ok, err := feature.CheckRow(w.sum, w.n, geom, values, row)
	if err != nil {
		return err
	}
	if ok {
		w.scratch = putItem(w.scratch[:0], &item{box: box, pos: uint32(w.n)})
		w.items.write(w.scratch)
		w.nItems++
		w.extent = w.extent.Extend(box)
	}
	if len(geom) > 0 {
		w.geom.write(geom)
		w.geomSize += uint64(len(geom))
	}
	w.geomOff.u64(w.geomSize)
	for i := range w.cols {
		var err error
		if src != nil {
			err = w.cols[i].addFrom(w.n, src, i, pos, w)
		} else {
			err = w.cols[i].add(w.n, values[i], w)
		}
		if err != nil {
			return fmt.Errorf("segment: feature %d, attribute %q: %w", w.n, w.attrs[i].Name, err)
		}
	}
	// The id last: a feature refused above leaves no id behind.
	w.ids.u64(uint64(id))
	w.lastID, w.nextID = id, max(w.nextID, id+1)
	if w.n%8 == 7 {
		w.flushNulls()
	}
	w.n++
	return w.err
}

// flushNulls writes the null bits of the current eight rows.
func (w *Writer) flushNulls() {
	for _, c := range w.cols {
		if c.nul != nil {
			c.nul.write([]byte{c.nulByte})
			c.nulByte = 0
		}
	}
}

var zeros [4096]byte

// setNull marks row null, starting the column's bitmap at its first null
// with the zero bits of the rows before.
func (c *column) setNull(row int, w *Writer) error {
	if c.nul == nil {
		var err error
		if c.nul, err = w.temp("nul"); err != nil {
			return err
		}
		for left := row / 8; left > 0; {
			k := min(left, len(zeros))
			c.nul.write(zeros[:k])
			left -= k
		}
	}
	c.nulByte |= 1 << (row % 8)
	return nil
}

func (c *column) add(row int, v any, w *Writer) error {
	b := w.scratch[:0]
	if v == nil {
		if err := c.setNull(row, w); err != nil {
			return err
		}
	}
	switch c.typ {
	case mapcommons.AttrInteger:
		n, ok := v.(int64)
		if !ok && v != nil {
			return fmt.Errorf("%T is not an integer", v)
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(n))
	case mapcommons.AttrFloat:
		x, ok := v.(float64)
		if !ok && v != nil {
			return fmt.Errorf("%T is not a float", v)
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	case mapcommons.AttrBoolean:
		x, ok := v.(bool)
		switch {
		case v == nil:
			b = append(b, 2)
		case !ok:
			return fmt.Errorf("%T is not a boolean", v)
		case x:
			b = append(b, 1)
		default:
			b = append(b, 0)
		}
	default:
		s, ok := v.(string)
		if !ok && v != nil {
			return fmt.Errorf("%T is not a string", v)
		}
		c.data.writeString(s)
		c.bytes += uint64(len(s))
		c.off.u64(c.bytes)
		return nil
	}
	c.data.write(b)
	w.scratch = b
	return nil
}

// Finish builds the index and writes the segment to path atomically (a
// temporary file, synced, then renamed). It returns the summary.
func (w *Writer) Finish(path string) (*Summary, error) {
	if w.done {
		return nil, errors.New("segment: Finish after Finish or Abort")
	}
	defer w.Abort()
	if w.n%8 != 0 {
		w.flushNulls()
	}
	// In memory, Finish keeps what it builds in memory if that, the tree
	// (44 bytes a node, a fifteenth more nodes than items) and the
	// permutations (4 bytes a feature and column), takes at most spillAt
	// more.
	if !w.spilled {
		tree := 44 * (int64(w.nItems) + int64(w.nItems)/15 + 64)
		if w.memSize+tree+4*int64(w.n)*int64(len(w.cols)) > 2*w.spillAt {
			w.spill()
		} else {
			w.spillAt = math.MaxInt64
		}
	}
	if w.err != nil {
		return nil, w.err
	}
	for _, s := range w.temps {
		if err := s.rewind(); err != nil {
			return nil, err
		}
	}
	if err := w.buildIndex(); err != nil {
		return nil, err
	}
	var perms []*section
	if !w.delta {
		var err error
		if perms, err = w.buildPerms(); err != nil {
			return nil, err
		}
	}

	h := header{Count: w.n, Attrs: w.attrs, Sections: map[string][2]int64{}, Levels: w.levels, NextID: w.nextID}
	// Medians need whole columns: read back from their spooled sections.
	sum, err := w.sum.Summary(func(i int, n int64) (float64, error) {
		if w.delta {
			return 0, nil
		}
		return mapcommons.MedianOfKeys(n, func(fn func(key uint64)) error { return w.scanColumn(w.cols[i], fn) })
	})
	if err != nil {
		return nil, err
	}
	h.Summary = *sum

	var out *os.File
	var tmpName string
	ok := false
	if w.memOut == nil {
		f, err := os.CreateTemp(filepath.Dir(path), ".seg-*.tmp")
		if err != nil {
			return nil, err
		}
		out, tmpName = f, f.Name()
		defer func() {
			if !ok {
				out.Close()
				os.Remove(tmpName)
			}
		}()
	}
	// The sections, then the null bitmaps, then the tree: the layout of
	// the in-memory build, byte for byte.
	var secs []*section
	secs = append(secs, w.sections...)
	for i, c := range w.cols {
		if c.nul != nil {
			c.nul.name = "c" + strconv.Itoa(i) + ".nul"
			secs = append(secs, c.nul)
		}
	}
	secs = append(secs, w.tree[:]...)
	for _, s := range perms {
		if s != nil {
			secs = append(secs, s)
		}
	}
	// Spooled, the file is copied from the sections' files through a
	// buffer; in memory, it is put together in memory and written at once.
	var bw interface {
		io.Writer
		Flush() error
	}
	if w.memOut != nil {
		bw = bufferFlusher{w.memOut}
	} else if w.spilled {
		bw = bufio.NewWriterSize(out, 256<<10)
	} else {
		size := int64(len(magic)) + 64*int64(len(secs)) + 4096
		for _, s := range secs {
			size += s.size
		}
		m := &memFile{f: out, b: getMem(memCap(int(size)))}
		defer func() { w.retire(m.b) }() // before Abort's
		bw = m
	}
	off := int64(0)
	put := func(name string, src io.Reader) error {
		if name != "" {
			pad := (off+63)&^63 - off
			if _, err := bw.Write(zeros[:pad]); err != nil {
				return err
			}
			off += pad
		}
		n, err := io.Copy(bw, src)
		if name != "" {
			h.Sections[name] = [2]int64{off, n}
		}
		off += n
		return err
	}
	if err := put("", bytes.NewReader([]byte(magic))); err != nil {
		return nil, err
	}
	for _, s := range secs {
		r, err := s.reader()
		if err != nil {
			return nil, err
		}
		if err := put(s.name, r); err != nil {
			return nil, err
		}
	}
	// The footer: the JSON header, its length, and the magic again.
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	tail := binary.LittleEndian.AppendUint64(hb, uint64(len(hb)))
	if err := put("", bytes.NewReader(append(tail, magic...))); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if w.memOut != nil {
		return sum, nil
	}
	if err := out.Sync(); err != nil {
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmpName, path); err != nil {
		return nil, err
	}
	ok = true
	if err := syncDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return sum, nil
}

// bufferFlusher writes into a buffer; Flush does nothing.
type bufferFlusher struct{ *bytes.Buffer }

func (bufferFlusher) Flush() error { return nil }

// memFile puts a file together in memory and writes it with Flush.
type memFile struct {
	f *os.File
	b []byte
}

func (m *memFile) Write(p []byte) (int, error) {
	m.b = append(m.b, p...)
	return len(p), nil
}

func (m *memFile) Flush() error {
	_, err := m.f.Write(m.b)
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
