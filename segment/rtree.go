package segment

import (
	"encoding/binary"
	"math"
	"slices"

	"mapcommons/format/wkb"
)

// The spatial index is a packed Hilbert R-tree: the boxes of the features
// sorted by the Hilbert value of their centres are the leaves, and each
// level above holds one box per nodeSize boxes of the level below. It is
// built once, in O(n log n), and stored as two flat arrays, so opening a
// segment costs nothing and searching touches only the nodes it needs.

const nodeSize = 16

// hilbertOrder is the side of the Hilbert grid the centres are sorted on.
const hilbertOrder = 1 << 16

// hilbert returns the distance of cell (x, y) along the Hilbert curve on a
// hilbertOrder × hilbertOrder grid.
func hilbert(x, y uint32) uint64 {
	var d uint64
	for s := uint32(hilbertOrder / 2); s > 0; s /= 2 {
		var rx, ry uint32
		if x&s > 0 {
			rx = 1
		}
		if y&s > 0 {
			ry = 1
		}
		d += uint64(s) * uint64(s) * uint64((3*rx)^ry)
		if ry == 0 { // rotate the quadrant
			if rx == 1 {
				x = s - 1 - x
				y = s - 1 - y
			}
			x, y = y, x
		}
	}
	return d
}

// item is one feature in the index build.
type item struct {
	box wkb.Rect
	pos uint32
	key uint64
}

// tree is a built index: node boxes (minx, miny, maxx, maxy per node) and
// ids (a feature position for a leaf, the index of the first child node for
// an inner node). levels[i] is the index one past the last node of level i;
// level 0 is the leaves, the root is the last node.
type tree struct {
	boxes  []float64
	ids    []uint32
	levels []int
}

// buildTree builds the index of items, reordering them.
func buildTree(items []item, extent wkb.Rect) tree {
	if len(items) == 0 {
		return tree{}
	}
	w, h := extent.MaxX-extent.MinX, extent.MaxY-extent.MinY
	for i := range items {
		b := items[i].box
		var cx, cy uint32
		if w > 0 {
			cx = uint32(math.Min(hilbertOrder-1, math.Floor(((b.MinX+b.MaxX)/2-extent.MinX)/w*(hilbertOrder-1))))
		}
		if h > 0 {
			cy = uint32(math.Min(hilbertOrder-1, math.Floor(((b.MinY+b.MaxY)/2-extent.MinY)/h*(hilbertOrder-1))))
		}
		items[i].key = hilbert(cx, cy)
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		return int(a.pos) - int(b.pos)
	})
	n := len(items)
	total := n
	for c := n; c > 1; {
		c = (c + nodeSize - 1) / nodeSize
		total += c
	}
	t := tree{boxes: make([]float64, 0, 4*total), ids: make([]uint32, 0, total)}
	for _, it := range items {
		t.boxes = append(t.boxes, it.box.MinX, it.box.MinY, it.box.MaxX, it.box.MaxY)
		t.ids = append(t.ids, it.pos)
	}
	t.levels = append(t.levels, n)
	start, end := 0, n
	for end-start > 1 {
		for i := start; i < end; i += nodeSize {
			r := wkb.EmptyRect
			for j := i; j < min(i+nodeSize, end); j++ {
				r = r.Extend(t.box(j))
			}
			t.boxes = append(t.boxes, r.MinX, r.MinY, r.MaxX, r.MaxY)
			t.ids = append(t.ids, uint32(i))
		}
		start, end = end, len(t.ids)
		t.levels = append(t.levels, end)
	}
	return t
}

func (t *tree) box(i int) wkb.Rect {
	return wkb.Rect{MinX: t.boxes[4*i], MinY: t.boxes[4*i+1], MaxX: t.boxes[4*i+2], MaxY: t.boxes[4*i+3]}
}

// treeView reads a stored tree in place.
type treeView struct {
	boxes  []byte // 32 bytes per node
	ids    []byte // 4 bytes per node
	levels []int
}

func (v *treeView) nodes() int { return len(v.ids) / 4 }

// levelStart is the index of the first node of level l.
func (v *treeView) levelStart(l int) int {
	if l == 0 {
		return 0
	}
	return v.levels[l-1]
}

func (v *treeView) box(i int) (minx, miny, maxx, maxy float64) {
	b := v.boxes[32*i : 32*i+32]
	return math.Float64frombits(binary.LittleEndian.Uint64(b)),
		math.Float64frombits(binary.LittleEndian.Uint64(b[8:])),
		math.Float64frombits(binary.LittleEndian.Uint64(b[16:])),
		math.Float64frombits(binary.LittleEndian.Uint64(b[24:]))
}

func (v *treeView) id(i int) uint32 { return binary.LittleEndian.Uint32(v.ids[4*i:]) }

// search calls fn with the position and box of every leaf whose box
// intersects r (edges included), until fn returns false.
func (v *treeView) search(r wkb.Rect, fn func(pos int, box wkb.Rect) bool) {
	n := v.nodes()
	if n == 0 {
		return
	}
	// levelOf tells, for a node index, which level it is on.
	levelOf := func(i int) int {
		for l, end := range v.levels {
			if i < end {
				return l
			}
		}
		return len(v.levels) - 1
	}
	stack := make([]int, 0, 64)
	stack = append(stack, n-1)
	for len(stack) > 0 {
		node := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		l := levelOf(node)
		if l == 0 {
			minx, miny, maxx, maxy := v.box(node)
			if maxx < r.MinX || minx > r.MaxX || maxy < r.MinY || miny > r.MaxY {
				continue
			}
			if !fn(int(v.id(node)), wkb.Rect{MinX: minx, MinY: miny, MaxX: maxx, MaxY: maxy}) {
				return
			}
			continue
		}
		minx, miny, maxx, maxy := v.box(node)
		if maxx < r.MinX || minx > r.MaxX || maxy < r.MinY || miny > r.MaxY {
			continue
		}
		first := int(v.id(node))
		end := min(first+nodeSize, v.levels[l-1])
		for c := end - 1; c >= first; c-- {
			stack = append(stack, c)
		}
	}
}
