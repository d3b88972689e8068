package segment

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"syscall"
	"unsafe"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Segment is an open segment file, memory-mapped read-only. Slices it hands
// out alias the mapping: they are valid until Close.
type Segment struct {
	data    []byte
	n       int
	attrs   []mapcommons.Attribute
	geomOff []byte
	geom    []byte
	ids     []byte // the stable ids; nil in files written before them
	nextID  int64  // the dataset's next id
	cols    []colView
	perms   []*attrIndex // per column; nil ones in files without
	// noAttrIndex makes every query scan (tests compare the two).
	noAttrIndex bool
	tree        treeView
	summary     Summary
	inHeap      bool // read from bytes (FromBytes), not mapped
}

// colView reads one attribute column in place.
type colView struct {
	typ   mapcommons.AttrType
	data  []byte
	off   []byte // strings: n+1 end offsets
	nulls []byte // nil when the column has no nulls
}

func corrupt(path, format string, args ...any) error {
	return fmt.Errorf("segment %s is corrupt: %s", path, fmt.Sprintf(format, args...))
}

// Open maps the segment file at path.
func Open(path string) (*Segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < 24 {
		return nil, corrupt(path, "%d bytes", size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	s, err := parse(path, data)
	if err != nil {
		syscall.Munmap(data)
		return nil, err
	}
	return s, nil
}

func parse(path string, data []byte) (*Segment, error) {
	size := int64(len(data))
	if string(data[:8]) != magic || string(data[size-8:]) != magic {
		return nil, corrupt(path, "bad magic")
	}
	hl := int64(binary.LittleEndian.Uint64(data[size-16:]))
	if hl <= 0 || hl > size-24 {
		return nil, corrupt(path, "bad header length %d", hl)
	}
	var h header
	if err := json.Unmarshal(data[size-16-hl:size-16], &h); err != nil {
		return nil, corrupt(path, "header: %v", err)
	}
	s := &Segment{data: data, n: h.Count, attrs: h.Attrs, summary: h.Summary}
	sec := func(name string, want int64) ([]byte, error) {
		r, ok := h.Sections[name]
		if !ok {
			if want == 0 {
				return nil, nil
			}
			return nil, corrupt(path, "no section %s", name)
		}
		if r[0] < 8 || r[1] < 0 || r[0]+r[1] > size-16-hl || (want >= 0 && r[1] != want) {
			return nil, corrupt(path, "section %s at %d+%d", name, r[0], r[1])
		}
		return data[r[0] : r[0]+r[1] : r[0]+r[1]], nil
	}
	n := int64(h.Count)
	var err error
	if s.geomOff, err = sec("geom.off", 8*(n+1)); err != nil {
		return nil, err
	}
	if s.geom, err = sec("geom", -1); err != nil {
		return nil, err
	}
	if int64(len(s.geom)) != int64(s.u64(s.geomOff, int(n))) {
		return nil, corrupt(path, "geometry length")
	}
	s.nextID = n + 1
	if _, has := h.Sections["ids"]; has {
		if s.ids, err = sec("ids", 8*n); err != nil {
			return nil, err
		}
		s.nextID = h.NextID
	}
	for i, a := range h.Attrs {
		name := "c" + strconv.Itoa(i)
		c := colView{typ: a.Type}
		switch a.Type {
		case mapcommons.AttrInteger, mapcommons.AttrFloat:
			c.data, err = sec(name, 8*n)
		case mapcommons.AttrBoolean:
			c.data, err = sec(name, n)
		default:
			if c.off, err = sec(name+".off", 8*(n+1)); err == nil {
				c.data, err = sec(name, -1)
			}
			if err == nil && int64(len(c.data)) != int64(s.u64(c.off, int(n))) {
				err = corrupt(path, "column %s length", name)
			}
		}
		if err != nil {
			return nil, err
		}
		if _, has := h.Sections[name+".nul"]; has {
			if c.nulls, err = sec(name+".nul", (n+7)/8); err != nil {
				return nil, err
			}
		}
		s.cols = append(s.cols, c)
		if _, has := h.Sections[permName(i)]; has {
			b, err := sec(permName(i), 4*n)
			if err != nil {
				return nil, err
			}
			s.perms = append(s.perms, &attrIndex{perm: uint32s(b)})
		} else {
			s.perms = append(s.perms, nil)
		}
	}
	nodes := 0
	if len(h.Levels) > 0 {
		nodes = h.Levels[len(h.Levels)-1]
	}
	boxes, err := sec("tree.boxes", 32*int64(nodes))
	if err != nil {
		return nil, err
	}
	ids, err := sec("tree.ids", 4*int64(nodes))
	if err != nil {
		return nil, err
	}
	minPos, err := sec("tree.minpos", 4*int64(nodes))
	if err != nil {
		return nil, err
	}
	maxPos, err := sec("tree.maxpos", 4*int64(nodes))
	if err != nil {
		return nil, err
	}
	s.tree.boxes, s.tree.ids = float64s(boxes), uint32s(ids)
	s.tree.minPos, s.tree.maxPos = uint32s(minPos), uint32s(maxPos)
	s.tree.levels = h.Levels
	if err := s.check(); err != nil {
		return nil, corrupt(path, "%v", err)
	}
	return s, nil
}

// check validates what accessors trust: offsets ascend within their data,
// tree levels ascend and tree ids point inside their level below.
func (s *Segment) check() error {
	ascending := func(off []byte, limit int) error {
		prev := uint64(0)
		for i := 0; i <= s.n; i++ {
			v := s.u64(off, i)
			if v < prev || v > uint64(limit) {
				return fmt.Errorf("offset %d of %d out of order", i, s.n)
			}
			prev = v
		}
		return nil
	}
	if err := ascending(s.geomOff, len(s.geom)); err != nil {
		return err
	}
	if s.ids != nil {
		prev := int64(0)
		for pos := 0; pos < s.n; pos++ {
			id := s.ID(pos)
			if id <= prev {
				return fmt.Errorf("id %d at position %d is not above %d", id, pos, prev)
			}
			prev = id
		}
		if s.nextID <= prev || s.nextID < 1 {
			return fmt.Errorf("next id %d is not above the last id %d", s.nextID, prev)
		}
	}
	for i, c := range s.cols {
		if c.off != nil {
			if err := ascending(c.off, len(c.data)); err != nil {
				return fmt.Errorf("column %d: %w", i, err)
			}
		}
		if c.typ == mapcommons.AttrBoolean {
			for _, b := range c.data {
				if b > 2 {
					return fmt.Errorf("column %d: boolean %d", i, b)
				}
			}
		}
	}
	prev := 0
	for l, end := range s.tree.levels {
		if end <= prev || (l == 0 && end > s.n) {
			return fmt.Errorf("tree level %d ends at %d", l, end)
		}
		for i := prev; i < end; i++ {
			id := int(s.tree.id(i))
			if l == 0 && id >= s.n {
				return fmt.Errorf("tree leaf %d names feature %d", i, id)
			}
			if l > 0 && (id < s.tree.levelStart(l-1) || id >= s.tree.levels[l-1]) {
				return fmt.Errorf("tree node %d names child %d", i, id)
			}
		}
		prev = end
	}
	if len(s.tree.levels) > 0 && s.tree.levels[len(s.tree.levels)-1]-s.tree.levelStart(len(s.tree.levels)-1) != 1 {
		return fmt.Errorf("tree has no single root")
	}
	return nil
}

// littleEndian reports whether this machine stores numbers as the file
// does, so that sections can be read in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// float64s views a section as float64s: in place when the machine is little
// endian and the section aligned (sections start on 64-byte boundaries of a
// page-aligned mapping), else as a decoded copy.
func float64s(b []byte) []float64 {
	if len(b) == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%8 == 0 {
		return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8)
	}
	out := make([]float64, len(b)/8)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// uint32s views a section as uint32s, as float64s does.
func uint32s(b []byte) []uint32 {
	if len(b) == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// Close unmaps the segment.
func (s *Segment) Close() error {
	if s.data == nil {
		return nil
	}
	if s.inHeap { // FromBytes: nothing mapped
		s.data = nil
		return nil
	}
	err := syscall.Munmap(s.data)
	s.data = nil
	return err
}

func (s *Segment) u64(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }

// Len is the number of features.
func (s *Segment) Len() int { return s.n }

// Attributes are the attribute columns.
func (s *Segment) Attributes() []mapcommons.Attribute { return s.attrs }

// Summary is what the writer learned about the features.
func (s *Segment) Summary() Summary { return s.summary }

// Geometry returns the WKB of feature pos (nil when it has none).
func (s *Segment) Geometry(pos int) []byte {
	a, b := s.u64(s.geomOff, pos), s.u64(s.geomOff, pos+1)
	if a == b {
		return nil
	}
	return s.geom[a:b:b]
}

// IsNull reports whether attribute col of feature pos is null.
func (s *Segment) IsNull(col, pos int) bool {
	c := &s.cols[col]
	if c.typ == mapcommons.AttrBoolean {
		return c.data[pos] == 2
	}
	return c.nulls != nil && c.nulls[pos/8]&(1<<(pos%8)) != 0
}

// Int returns an integer attribute.
func (s *Segment) Int(col, pos int) (int64, bool) {
	if s.IsNull(col, pos) {
		return 0, false
	}
	return int64(s.u64(s.cols[col].data, pos)), true
}

// Float returns a numeric attribute (integer or float) as a float.
func (s *Segment) Float(col, pos int) (float64, bool) {
	if s.IsNull(col, pos) {
		return 0, false
	}
	u := s.u64(s.cols[col].data, pos)
	if s.cols[col].typ == mapcommons.AttrInteger {
		return float64(int64(u)), true
	}
	return math.Float64frombits(u), true
}

// Bytes returns a string attribute's bytes, aliasing the mapping.
func (s *Segment) Bytes(col, pos int) ([]byte, bool) {
	if s.IsNull(col, pos) {
		return nil, false
	}
	c := &s.cols[col]
	a, b := s.u64(c.off, pos), s.u64(c.off, pos+1)
	return c.data[a:b:b], true
}

// Value returns attribute col of feature pos in the domain's type (strings
// copied, so they outlive the segment).
func (s *Segment) Value(col, pos int) any {
	if s.IsNull(col, pos) {
		return nil
	}
	switch s.cols[col].typ {
	case mapcommons.AttrInteger:
		v, _ := s.Int(col, pos)
		return v
	case mapcommons.AttrFloat:
		v, _ := s.Float(col, pos)
		return v
	case mapcommons.AttrBoolean:
		return s.cols[col].data[pos] == 1
	}
	b, _ := s.Bytes(col, pos)
	return string(b)
}

// ID returns the stable id of feature pos.
func (s *Segment) ID(pos int) int64 {
	if s.ids == nil {
		return int64(pos) + 1
	}
	return int64(s.u64(s.ids, pos))
}

// NextID is the id the dataset gives its next new feature: above every id
// it ever gave, those of deleted features included.
func (s *Segment) NextID() int64 { return s.nextID }

// Position returns the position of the feature with the given id, found by
// binary search (ids increase with positions), and whether there is one.
func (s *Segment) Position(id int64) (int, bool) {
	if s.ids == nil {
		return int(id - 1), id >= 1 && id <= int64(s.n)
	}
	pos, found := sort.Find(s.n, func(i int) int { return cmp.Compare(id, s.ID(i)) })
	return pos, found
}

// Read fills f with feature pos; f.Geometry aliases the mapping.
func (s *Segment) Read(pos int, f *mapcommons.Feature) {
	f.Position = int64(pos)
	f.ID = s.ID(pos)
	if cap(f.Values) < len(s.attrs) {
		f.Values = make([]any, len(s.attrs))
	}
	f.Values = f.Values[:len(s.attrs)]
	for i := range s.attrs {
		f.Values[i] = s.Value(i, pos)
	}
	f.Geometry = s.Geometry(pos)
}

// Search calls fn with the position and bounding box of each feature whose
// box intersects r (edges included), until fn returns false. The order is
// the index's, not by position.
func (s *Segment) Search(r wkb.Rect, fn func(pos int, box wkb.Rect) bool) {
	s.tree.search(r, fn)
}

// SearchOrdered is Search over several boxes, calling fn in order of
// position (descending when desc), each feature once, leaving out those
// whose position is set in the bitmap dead (nil: none). need > 0 promises
// that fn returns false at the need-th feature at the latest, which lets
// the search leave out what it cannot reach.
func (s *Segment) SearchOrdered(rs []wkb.Rect, desc bool, need int, dead []uint64, fn func(pos int, box wkb.Rect) bool) {
	s.tree.ordered(rs, desc, need, dead, fn)
}
