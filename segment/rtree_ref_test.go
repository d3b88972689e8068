package segment

import (
	"math"
	"slices"

	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// buildTree is the in-memory build of the index that the writer used
// before it built out of core: the reference the out-of-core build must
// match array for array.
func buildTree(items []item, extent wkb.Rect) tree {
	if len(items) == 0 {
		return tree{}
	}
	w, h := extent.MaxX-extent.MinX, extent.MaxY-extent.MinY
	for i := range items {
		b := items[i].box
		var cx, cy uint32
		if w > 0 {
			cx = uint32(math.Min(spatial.HilbertSide-1, math.Floor(((b.MinX+b.MaxX)/2-extent.MinX)/w*(spatial.HilbertSide-1))))
		}
		if h > 0 {
			cy = uint32(math.Min(spatial.HilbertSide-1, math.Floor(((b.MinY+b.MaxY)/2-extent.MinY)/h*(spatial.HilbertSide-1))))
		}
		items[i].key = uint64(spatial.Hilbert(cx, cy))
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
	t := tree{boxes: make([]float64, 0, 4*total), ids: make([]uint32, 0, total),
		minPos: make([]uint32, 0, total), maxPos: make([]uint32, 0, total)}
	for _, it := range items {
		t.boxes = append(t.boxes, it.box.MinX, it.box.MinY, it.box.MaxX, it.box.MaxY)
		t.ids = append(t.ids, it.pos)
		t.minPos = append(t.minPos, it.pos)
		t.maxPos = append(t.maxPos, it.pos)
	}
	t.levels = append(t.levels, n)
	start, end := 0, n
	for end-start > 1 {
		for i := start; i < end; i += nodeSize {
			r := wkb.EmptyRect
			lo, hi := uint32(math.MaxUint32), uint32(0)
			for j := i; j < min(i+nodeSize, end); j++ {
				r = r.Extend(t.box(j))
				lo, hi = min(lo, t.minPos[j]), max(hi, t.maxPos[j])
			}
			t.boxes = append(t.boxes, r.MinX, r.MinY, r.MaxX, r.MaxY)
			t.ids = append(t.ids, uint32(i))
			t.minPos = append(t.minPos, lo)
			t.maxPos = append(t.maxPos, hi)
		}
		start, end = end, len(t.ids)
		t.levels = append(t.levels, end)
	}
	return t
}

// tree is an index built in memory: node boxes (minx, miny, maxx, maxy per
// node) and ids (a feature position for a leaf, the index of the first child
// node for an inner node). levels[i] is the index one past the last node of
// level i; level 0 is the leaves, the root is the last node.
type tree struct {
	boxes  []float64
	ids    []uint32
	minPos []uint32 // the smallest feature position under each node
	maxPos []uint32 // the largest
	levels []int
}

func (t *tree) box(i int) wkb.Rect {
	return wkb.Rect{MinX: t.boxes[4*i], MinY: t.boxes[4*i+1], MaxX: t.boxes[4*i+2], MaxY: t.boxes[4*i+3]}
}
