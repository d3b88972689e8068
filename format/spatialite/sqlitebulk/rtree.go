package sqlitebulk

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// RTree fills an existing, empty two-dimensional SQLite R*Tree virtual
// table (declared "USING rtree(id, minX, maxX, minY, maxY)", whatever the
// column names) with one box per Add, and builds it in Build as a packed
// tree: the boxes sorted along a Hilbert curve, cut into full leaves, the
// leaves into full parents, and so on. Every node is written once,
// straight into the table's shadow tables %_node, %_rowid and %_parent,
// in the format SQLite's rtree module reads (ext/rtree/rtree.c: a node is
// a big-endian 16-bit depth, used in the root node 1 only, a 16-bit cell
// count, then cells of a 64-bit rowid or child node number and the
// coordinates as 32-bit floats, minimums rounded down and maximums up as
// rtree rounds them). Inserting row by row through the virtual table
// rewrites several 1 KiB nodes per row and costs some ten times more; the
// packed tree is also as good or better to search. The table stays an
// ordinary R*Tree: later inserts and deletes through it work as on any
// other.
//
// Memory: the boxes are sorted in runs of SortRun in memory (32 bytes
// each), spilled to a temporary file when there are more and merged; the
// map from row to leaf takes 4 bytes per id up to the largest when ids are
// dense (row numbers: Build writes the map in id order from an array as
// long as the largest id), 16 bytes per box when they are sparse (a
// store's stable ids after many deletes: pairs of id and leaf, sorted).
// Ids must be positive.
type RTree struct {
	db     *File
	name   string
	extent wkb.Rect
	n      int64
	maxID  int64

	run     []box    // the boxes not yet spilled
	spill   *os.File // sorted runs, one after the other
	runs    []int64  // the size in boxes of each spilled run
	tempDir string
}

// box is one entry: its Hilbert key, row id and rounded coordinates.
type box struct {
	h   uint32
	id  int64
	box [4]float32 // min x, max x, min y, max y
}

const (
	cellSize = 8 + 4*4
	boxSize  = 4 + 8 + 4*4 // in a spilled run
	maxID    = 1 << 40
)

// SortRun is how many boxes are sorted in memory at a time (8 MiB).
var SortRun = 1 << 18

// NewRTree prepares to fill the R*Tree table name. extent is the expected
// extent of the boxes, used only to order them (boxes outside it are
// fine); an empty extent stands for the whole world in lon/lat. Spilled
// runs go to a file in tempDir ("" for os.TempDir()), removed by Build or
// Close.
func NewRTree(db *File, name string, extent wkb.Rect, tempDir string) *RTree {
	if extent.IsEmpty() || extent.MaxX == extent.MinX || extent.MaxY == extent.MinY {
		extent = wkb.Rect{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}
	}
	return &RTree{db: db, name: name, extent: extent, tempDir: tempDir}
}

// Add records the box r of the row id (positive, unique). A box with a
// NaN coordinate, which no search could match, is left out.
func (t *RTree) Add(id int64, r wkb.Rect) error {
	if id <= 0 || id > maxID {
		return fmt.Errorf("rtree %s: row id %d out of range", t.name, id)
	}
	if math.IsNaN(r.MinX) || math.IsNaN(r.MinY) || math.IsNaN(r.MaxX) || math.IsNaN(r.MaxY) {
		return nil
	}
	t.maxID = max(t.maxID, id)
	if len(t.run) == SortRun {
		if err := t.spillRun(); err != nil {
			return err
		}
	}
	if len(t.run) == cap(t.run) { // double, up to SortRun (append grows large slices by a quarter)
		run := make([]box, len(t.run), min(SortRun, max(1024, 2*cap(t.run))))
		copy(run, t.run)
		t.run = run
	}
	t.run = append(t.run, box{
		h:   t.hilbert((r.MinX+r.MaxX)/2, (r.MinY+r.MaxY)/2),
		id:  id,
		box: [4]float32{down(r.MinX), up(r.MaxX), down(r.MinY), up(r.MaxY)},
	})
	t.n++
	return nil
}

// Len returns the number of boxes added.
func (t *RTree) Len() int64 { return t.n }

func less(a, b *box) int {
	if c := cmp.Compare(a.h, b.h); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

func (t *RTree) sortRun() {
	slices.SortFunc(t.run, func(a, b box) int { return less(&a, &b) })
}

// spillRun sorts the run in memory and appends it to the spill file.
func (t *RTree) spillRun() error {
	t.sortRun()
	if t.spill == nil {
		f, err := os.CreateTemp(t.tempDir, "rtree-*.run")
		if err != nil {
			return err
		}
		t.spill = f
	}
	w := bufio.NewWriterSize(t.spill, 1<<16)
	var b [boxSize]byte
	for i := range t.run {
		putBox(b[:], &t.run[i])
		if _, err := w.Write(b[:]); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	t.runs = append(t.runs, int64(len(t.run)))
	t.run = t.run[:0]
	return nil
}

func putBox(b []byte, e *box) {
	binary.LittleEndian.PutUint32(b, e.h)
	binary.LittleEndian.PutUint64(b[4:], uint64(e.id))
	for i, v := range e.box {
		binary.LittleEndian.PutUint32(b[12+4*i:], math.Float32bits(v))
	}
}

func getBox(b []byte) box {
	e := box{h: binary.LittleEndian.Uint32(b), id: int64(binary.LittleEndian.Uint64(b[4:]))}
	for i := range e.box {
		e.box[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[12+4*i:]))
	}
	return e
}

// Close removes the spill file; Build does too.
func (t *RTree) Close() error {
	t.run = nil
	if t.spill == nil {
		return nil
	}
	name := t.spill.Name()
	err := t.spill.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	t.spill = nil
	return err
}

// down and up round to 32-bit floats as SQLite's rtree does (rtreeValueDown
// and rtreeValueUp): to nearest, then one step outwards when that moved
// the value inwards, so that the stored box covers the true one.
func down(d float64) float32 {
	f := float32(d)
	if float64(f) > d {
		b := math.Float32bits(f)
		if b&0x80000000 != 0 {
			b++
		} else {
			b--
		}
		f = math.Float32frombits(b)
	}
	return f
}

func up(d float64) float32 {
	f := float32(d)
	if float64(f) < d {
		b := math.Float32bits(f)
		if b&0x80000000 != 0 {
			b--
		} else {
			b++
		}
		f = math.Float32frombits(b)
	}
	return f
}

// hilbert returns the position of (x, y) on a Hilbert curve of order 16
// over the extent.
func (t *RTree) hilbert(x, y float64) uint32 {
	const side = spatial.HilbertSide
	scale := func(v, lo, hi float64) uint32 {
		f := (v - lo) / (hi - lo) * side
		if !(f > 0) { // also NaN
			return 0
		}
		if f >= side-1 {
			return side - 1
		}
		return uint32(f)
	}
	return spatial.Hilbert(scale(x, t.extent.MinX, t.extent.MaxX), scale(y, t.extent.MinY, t.extent.MaxY))
}

// source yields boxes in order.
type source interface {
	next() (box, bool, error)
}

// memSource yields a sorted run in memory.
type memSource struct {
	run []box
	i   int
}

func (s *memSource) next() (box, bool, error) {
	if s.i == len(s.run) {
		return box{}, false, nil
	}
	s.i++
	return s.run[s.i-1], true, nil
}

// fileSource yields a spilled run.
type fileSource struct {
	r    *bufio.Reader
	left int64
	buf  [boxSize]byte
}

func (s *fileSource) next() (box, bool, error) {
	if s.left == 0 {
		return box{}, false, nil
	}
	if _, err := io.ReadFull(s.r, s.buf[:]); err != nil {
		return box{}, false, err
	}
	s.left--
	return getBox(s.buf[:]), true, nil
}

// merger merges sorted sources.
type merger struct {
	heads []box
	srcs  []source
}

func (m *merger) Len() int           { return len(m.heads) }
func (m *merger) Less(i, j int) bool { return less(&m.heads[i], &m.heads[j]) < 0 }
func (m *merger) Swap(i, j int) {
	m.heads[i], m.heads[j] = m.heads[j], m.heads[i]
	m.srcs[i], m.srcs[j] = m.srcs[j], m.srcs[i]
}
func (m *merger) Push(any) { panic("unused") }
func (m *merger) Pop() any {
	n := len(m.heads) - 1
	m.heads, m.srcs = m.heads[:n], m.srcs[:n]
	return nil
}

func newMerger(srcs []source) (*merger, error) {
	m := &merger{}
	for _, s := range srcs {
		b, ok, err := s.next()
		if err != nil {
			return nil, err
		}
		if ok {
			m.heads = append(m.heads, b)
			m.srcs = append(m.srcs, s)
		}
	}
	heap.Init(m)
	return m, nil
}

func (m *merger) next() (box, bool, error) {
	if len(m.heads) == 0 {
		return box{}, false, nil
	}
	b := m.heads[0]
	nb, ok, err := m.srcs[0].next()
	if err != nil {
		return b, false, err
	}
	if ok {
		m.heads[0] = nb
		heap.Fix(m, 0)
	} else {
		heap.Pop(m)
	}
	return b, true, nil
}

// sorted returns the boxes in Hilbert order.
func (t *RTree) sorted() (source, error) {
	t.sortRun()
	mem := &memSource{run: t.run}
	if len(t.runs) == 0 {
		return mem, nil
	}
	srcs := []source{mem}
	var off int64
	for _, n := range t.runs {
		sec := io.NewSectionReader(t.spill, off*boxSize, n*boxSize)
		srcs = append(srcs, &fileSource{r: bufio.NewReaderSize(sec, 1<<15), left: n})
		off += n
	}
	return newMerger(srcs)
}

// entry is a node of a level being built: its number and box.
type entry struct {
	node int64
	box  [4]float32
}

// checkEvery is how many boxes Build handles between looks at ctx.
const checkEvery = 4096

// Build writes the tree and removes the spill file. The R*Tree must still
// be empty (as CREATE VIRTUAL TABLE leaves it) and not have been used on
// this connection.
func (t *RTree) Build(ctx context.Context) (err error) {
	defer func() {
		if cerr := t.Close(); err == nil {
			err = cerr
		}
	}()
	if t.n == 0 {
		return nil
	}
	var nodeSize int64
	if err := t.db.Query(`SELECT length(data) FROM `+Quote(t.name+"_node")+` WHERE nodeno = 1`, func(row []driver.Value) error {
		nodeSize, _ = row[0].(int64)
		return nil
	}); err != nil {
		return err
	}
	maxCells := (nodeSize - 4) / cellSize
	if maxCells < 2 {
		return fmt.Errorf("rtree %s: node size %d", t.name, nodeSize)
	}
	w, err := t.newWriter(int(nodeSize))
	if err != nil {
		return err
	}
	defer w.close()
	src, err := t.sorted()
	if err != nil {
		return err
	}

	// The leaves, in Hilbert order, as evenly filled as can be; node 1 is
	// the root, a leaf when there is only one.
	leaves := (t.n + maxCells - 1) / maxCells
	sizes := evenSizes(t.n, leaves)
	next := int64(2)
	if leaves == 1 {
		next = 1
	}
	var (
		level  []entry
		leafOf []uint32  // by id-1, when ids are dense
		pairs  []rowLeaf // when they are sparse
		buf    = make([]byte, 0, nodeSize)
		cells  int64
		e      entry
	)
	if t.maxID > 4*t.n+1<<16 { // an array would take more than 16 bytes a box
		pairs = make([]rowLeaf, 0, t.n)
	} else {
		leafOf = make([]uint32, t.maxID)
	}
	for i := int64(0); ; i++ {
		if i%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		b, ok, err := src.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if cells == 0 {
			buf = append(buf[:0], 0, 0, 0, 0)
			e = entry{node: next, box: b.box}
		} else {
			e.box = union(e.box, b.box)
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(b.id))
		for _, v := range b.box {
			buf = binary.BigEndian.AppendUint32(buf, math.Float32bits(v))
		}
		cells++
		if pairs != nil {
			pairs = append(pairs, rowLeaf{id: b.id, leaf: uint32(e.node)})
		} else if leafOf[b.id-1] != 0 {
			return fmt.Errorf("rtree %s: row id %d added twice", t.name, b.id)
		} else {
			leafOf[b.id-1] = uint32(e.node)
		}
		if cells == sizes(len(level)) {
			if err := w.node(e.node, buf, cells, 0); err != nil {
				return err
			}
			level = append(level, e)
			cells = 0
			next++
		}
	}
	if int64(len(level)) != leaves {
		return fmt.Errorf("rtree %s: %d leaves from %d boxes, want %d", t.name, len(level), t.n, leaves)
	}

	// The map from row to leaf, in row order (appending is cheapest), a
	// chunk of rows a statement: SQLite's json_each expands a JSON array
	// of leaf numbers (0 for rows without a box).
	if pairs != nil {
		err = t.writeSparseRowids(pairs)
	} else {
		err = t.writeRowids(leafOf)
	}
	if err != nil {
		return err
	}
	if leaves == 1 {
		return nil // the one leaf is the root
	}

	// The levels above, until one fits in the root.
	depth := 1
	for int64(len(level)) > maxCells {
		parents := (int64(len(level)) + maxCells - 1) / maxCells
		sizes := evenSizes(int64(len(level)), parents)
		var up []entry
		for i := 0; i < len(level); {
			n := int(sizes(len(up)))
			e, err := w.parent(next, level[i:i+n], 0)
			if err != nil {
				return err
			}
			up = append(up, e)
			next++
			i += n
		}
		level = up
		depth++
	}
	_, err = w.parent(1, level, depth)
	return err
}

// rowidChunk is how many rows writeRowids and writeSparseRowids map a
// statement (a variable for the tests).
var rowidChunk = 1 << 16

func (t *RTree) writeRowids(leafOf []uint32) error {
	st, err := t.db.Prepare(`INSERT INTO `+Quote(t.name+"_rowid")+` (rowid, nodeno)
SELECT ?1 + key, value FROM json_each(?2) WHERE value > 0`, 2)
	if err != nil {
		return err
	}
	defer st.Close()
	buf := make([]byte, 0, 8*min(len(leafOf), rowidChunk)+2)
	for start := 0; start < len(leafOf); start += rowidChunk {
		buf = append(buf[:0], '[')
		for i, leaf := range leafOf[start:min(start+rowidChunk, len(leafOf))] {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendUint(buf, uint64(leaf), 10)
		}
		buf = append(buf, ']')
		st.Args[0].Value = int64(start + 1)
		st.Args[1].Value = string(buf) // text: a BLOB would be taken for JSONB
		if err := st.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// rowLeaf maps a row id to its leaf, for sparse ids.
type rowLeaf struct {
	id   int64
	leaf uint32
}

// writeSparseRowids writes the map from row to leaf of sparse ids: the
// pairs sorted by id, a chunk a statement as a JSON array of [id, leaf].
func (t *RTree) writeSparseRowids(pairs []rowLeaf) error {
	slices.SortFunc(pairs, func(a, b rowLeaf) int { return cmp.Compare(a.id, b.id) })
	for i := 1; i < len(pairs); i++ {
		if pairs[i].id == pairs[i-1].id {
			return fmt.Errorf("rtree %s: row id %d added twice", t.name, pairs[i].id)
		}
	}
	st, err := t.db.Prepare(`INSERT INTO `+Quote(t.name+"_rowid")+` (rowid, nodeno)
SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?1)`, 1)
	if err != nil {
		return err
	}
	defer st.Close()
	var buf []byte
	for start := 0; start < len(pairs); start += rowidChunk {
		buf = append(buf[:0], '[')
		for i, p := range pairs[start:min(start+rowidChunk, len(pairs))] {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '[')
			buf = strconv.AppendInt(buf, p.id, 10)
			buf = append(buf, ',')
			buf = strconv.AppendUint(buf, uint64(p.leaf), 10)
			buf = append(buf, ']')
		}
		buf = append(buf, ']')
		st.Args[0].Value = string(buf) // text: a BLOB would be taken for JSONB
		if err := st.Exec(); err != nil {
			return err
		}
	}
	return nil
}

// evenSizes returns the size of each of parts groups of n items, as even
// as can be: the first n%parts groups have one more.
func evenSizes(n, parts int64) func(i int) int64 {
	base, extra := n/parts, n%parts
	return func(i int) int64 {
		if int64(i) < extra {
			return base + 1
		}
		return base
	}
}

func union(a, b [4]float32) [4]float32 {
	return [4]float32{min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), max(a[3], b[3])}
}

// writer writes nodes and parent rows into the shadow tables.
type writer struct {
	size            int
	ins, root, prnt *Stmt
}

func (t *RTree) newWriter(size int) (*writer, error) {
	w := &writer{size: size}
	var err error
	if w.ins, err = t.db.Prepare(`INSERT INTO `+Quote(t.name+"_node")+` (nodeno, data) VALUES (?, ?)`, 2); err != nil {
		return nil, err
	}
	if w.root, err = t.db.Prepare(`UPDATE `+Quote(t.name+"_node")+` SET data = ?2 WHERE nodeno = ?1`, 2); err != nil {
		w.close()
		return nil, err
	}
	if w.prnt, err = t.db.Prepare(`INSERT INTO `+Quote(t.name+"_parent")+` (nodeno, parentnode) VALUES (?, ?)`, 2); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *writer) close() {
	for _, s := range []*Stmt{w.ins, w.root, w.prnt} {
		s.Close()
	}
}

// node writes a node whose cells are in buf after its 4-byte header; node 1
// (the root, created empty with the table) is updated, the others inserted.
func (w *writer) node(no int64, buf []byte, cells int64, depth int) error {
	binary.BigEndian.PutUint16(buf, uint16(depth))
	binary.BigEndian.PutUint16(buf[2:], uint16(cells))
	data := buf
	if len(data) < w.size { // nodes are always full size
		data = append(data, make([]byte, w.size-len(data))...)
	}
	s := w.ins
	if no == 1 {
		s = w.root
	}
	s.Args[0].Value = no
	s.Args[1].Value = data
	return s.Exec()
}

// parent writes node no over the children and returns its entry.
func (w *writer) parent(no int64, children []entry, depth int) (entry, error) {
	buf := make([]byte, 4, w.size)
	e := entry{node: no, box: children[0].box}
	for _, c := range children {
		buf = binary.BigEndian.AppendUint64(buf, uint64(c.node))
		for _, v := range c.box {
			buf = binary.BigEndian.AppendUint32(buf, math.Float32bits(v))
		}
		e.box = union(e.box, c.box)
		w.prnt.Args[0].Value = c.node
		w.prnt.Args[1].Value = no
		if err := w.prnt.Exec(); err != nil {
			return e, err
		}
	}
	return e, w.node(no, buf, int64(len(children)), depth)
}
