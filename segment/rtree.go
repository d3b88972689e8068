package segment

import (
	"math"
	"sync"

	"mapcommons/format/wkb"
)

// The spatial index is a packed Hilbert R-tree: the boxes of the features
// sorted by the Hilbert value of their centres are the leaves, and each
// level above holds one box per nodeSize boxes of the level below. It is
// built once, in O(n log n) and out of core (index.go), and stored as flat
// arrays, so opening a segment costs nothing and searching touches only the
// nodes it needs.

const nodeSize = 16

// item is one feature in the index build.
type item struct {
	box wkb.Rect
	pos uint32
	key uint64
}

// treeView reads a stored tree in place.
type treeView struct {
	boxes  []float64 // minx, miny, maxx, maxy per node, aliasing the file
	ids    []uint32  // aliasing the file
	minPos []uint32
	maxPos []uint32
	levels []int
}

func (v *treeView) nodes() int { return len(v.ids) }

// levelStart is the index of the first node of level l.
func (v *treeView) levelStart(l int) int {
	if l == 0 {
		return 0
	}
	return v.levels[l-1]
}

func (v *treeView) id(i int) uint32 { return v.ids[i] }

// search calls fn with the position and box of every leaf whose box
// intersects r (edges included), until fn returns false.
func (v *treeView) search(r wkb.Rect, fn func(pos int, box wkb.Rect) bool) {
	n := v.nodes()
	if n == 0 {
		return
	}
	type entry struct{ node, level int }
	var stackBuf [64]entry
	stack := append(stackBuf[:0], entry{n - 1, len(v.levels) - 1})
	b := v.boxes
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if e.level == 0 { // a tree of one leaf
			i := e.node
			if !(b[4*i+2] < r.MinX || b[4*i] > r.MaxX || b[4*i+3] < r.MinY || b[4*i+1] > r.MaxY) {
				fn(int(v.ids[i]), wkb.Rect{MinX: b[4*i], MinY: b[4*i+1], MaxX: b[4*i+2], MaxY: b[4*i+3]})
			}
			continue
		}
		first := int(v.ids[e.node])
		end := min(first+nodeSize, v.levels[e.level-1])
		if e.level == 1 { // the children are leaves: test them here
			for i := first; i < end; i++ {
				if b[4*i+2] < r.MinX || b[4*i] > r.MaxX || b[4*i+3] < r.MinY || b[4*i+1] > r.MaxY {
					continue
				}
				if !fn(int(v.ids[i]), wkb.Rect{MinX: b[4*i], MinY: b[4*i+1], MaxX: b[4*i+2], MaxY: b[4*i+3]}) {
					return
				}
			}
			continue
		}
		for i := end - 1; i >= first; i-- {
			if b[4*i+2] < r.MinX || b[4*i] > r.MaxX || b[4*i+3] < r.MinY || b[4*i+1] > r.MaxY {
				continue
			}
			stack = append(stack, entry{i, e.level - 1})
		}
	}
}

func (v *treeView) hits(i int, rs []wkb.Rect) bool {
	b := v.boxes[4*i : 4*i+4 : 4*i+4]
	for _, r := range rs {
		if !(b[2] < r.MinX || b[0] > r.MaxX || b[3] < r.MinY || b[1] > r.MaxY) {
			return true
		}
	}
	return false
}

// orderEntry is a node in ordered's queue.
type orderEntry struct {
	key   uint32 // the position bound that orders the queue
	node  int32
	level int32
}

// orderHeap is a min-heap of entries by key: ordered's queue, and (keys
// negated) its heap of the best leaves queued.
type orderHeap []orderEntry

// push and down move the entries past the one placed, and write it once
// where it goes, rather than swapping it along the path.
func (h *orderHeap) push(e orderEntry) {
	*h = append(*h, e)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if q[p].key <= e.key {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = e
}

// down restores the order after the top changed.
func (h orderHeap) down() {
	if len(h) == 0 {
		return
	}
	e, i := h[0], 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		if r := l + 1; r < len(h) && h[r].key < h[l].key {
			l = r
		}
		if e.key <= h[l].key {
			break
		}
		h[i] = h[l]
		i = l
	}
	h[i] = e
}

func (h *orderHeap) pop() orderEntry {
	q := *h
	top, last := q[0], len(q)-1
	q[0] = q[last]
	*h = q[:last]
	h.down()
	return top
}

// orderHeaps keep ordered's heaps between searches: a box's queue holds
// hundreds of nodes (its matches' parents), grown again at every search
// it was a fifth of the search's time. Those over maxPooledQueue entries
// are left to the collector.
var orderHeaps = sync.Pool{New: func() any { q := make(orderHeap, 0, 512); return &q }}

const maxPooledQueue = 1 << 16

func getOrderHeap() *orderHeap { h := orderHeaps.Get().(*orderHeap); *h = (*h)[:0]; return h }

func putOrderHeap(h *orderHeap) {
	if cap(*h) <= maxPooledQueue {
		orderHeaps.Put(h)
	}
}

// maxNeed bounds the leaves whose keys ordered keeps to prune its search;
// a search that needs more does not prune.
const maxNeed = 4096

// ordered calls fn with the leaves whose boxes meet any of rs in order of
// feature position (descending when desc), until fn returns false. It is a
// best-first search on the positions stored in the nodes, so a page of the
// first features costs about the page, not every match.
//
// need > 0 promises that fn stops at the need-th leaf it is given: the
// search then keeps the need best leaves it has found in a heap of their
// own (bounded), queues no node that cannot hold a better one, and stops
// when no node queued can; it gives the leaves kept, in order, at the end.
// (A box's page of 30 from 1M points queued 426 leaves to read 30 without
// the bound; with it, the leaves found are never queued: the queue holds
// the nodes above them alone.) Leaves whose position is set in the bitmap
// dead (nil: none) are left out.
func (v *treeView) ordered(rs []wkb.Rect, desc bool, need int, dead []uint64, fn func(pos int, box wkb.Rect) bool) {
	n := v.nodes()
	if n == 0 {
		return
	}
	if need > 0 && need <= maxNeed {
		v.orderedBest(rs, desc, need, dead, fn)
		return
	}
	keys, flip := v.orderKeys(desc)
	h := getOrderHeap()
	defer putOrderHeap(h)
	root := n - 1
	if v.hits(root, rs) {
		h.push(orderEntry{keys[root] ^ flip, int32(root), int32(len(v.levels) - 1)})
	}
	b := v.boxes
	for len(*h) > 0 {
		e := h.pop()
		i := int(e.node)
		if e.level == 0 {
			if !fn(int(v.ids[i]), wkb.Rect{MinX: b[4*i], MinY: b[4*i+1], MaxX: b[4*i+2], MaxY: b[4*i+3]}) {
				return
			}
			continue
		}
		first := int(v.ids[i])
		end := min(first+nodeSize, v.levels[e.level-1])
		for c := first; c < end; c++ {
			if !v.hits(c, rs) || e.level == 1 && bitSet(dead, int(v.ids[c])) {
				continue
			}
			h.push(orderEntry{keys[c] ^ flip, int32(c), e.level - 1})
		}
	}
}

// orderKeys are the keys that order the nodes in ordered: node i's is
// keys[i] ^ flip, the least position below it, or (desc) the greatest,
// inverted. (A slice and a mask rather than a function: the search reads
// a key for every child it looks at.)
func (v *treeView) orderKeys(desc bool) (keys []uint32, flip uint32) {
	if desc {
		return v.maxPos, math.MaxUint32
	}
	return v.minPos, 0
}

// orderedBest is ordered for a need of at most maxNeed.
func (v *treeView) orderedBest(rs []wkb.Rect, desc bool, need int, dead []uint64, fn func(pos int, box wkb.Rect) bool) {
	keys, flip := v.orderKeys(desc)
	h := getOrderHeap() // the nodes above the leaves, least key first
	defer putOrderHeap(h)
	// best holds the need best leaves found, keys negated (the worst on
	// top); once it is full, bound is the worst key, and nothing above it
	// is queued or kept.
	best := getOrderHeap()
	defer putOrderHeap(best)
	bound := uint32(math.MaxUint32)
	root := v.nodes() - 1
	top := int32(len(v.levels) - 1)
	b := v.boxes
	switch {
	case !v.hits(root, rs):
		return
	case top == 0: // the root is the one leaf
		if !bitSet(dead, int(v.ids[root])) {
			fn(int(v.ids[root]), wkb.Rect{MinX: b[4*root], MinY: b[4*root+1], MaxX: b[4*root+2], MaxY: b[4*root+3]})
		}
		return
	}
	h.push(orderEntry{keys[root] ^ flip, int32(root), top})
	for len(*h) > 0 {
		e := h.pop()
		if e.key > bound {
			break // the queue's least: no node queued holds a better leaf
		}
		first := int(v.ids[e.node])
		end := min(first+nodeSize, v.levels[e.level-1])
		for c := first; c < end; c++ {
			k := keys[c] ^ flip
			if k > bound || !v.hits(c, rs) {
				continue
			}
			if e.level > 1 {
				h.push(orderEntry{k, int32(c), e.level - 1})
				continue
			}
			if bitSet(dead, int(v.ids[c])) {
				continue
			}
			if len(*best) < need {
				best.push(orderEntry{key: ^k, node: int32(c)})
			} else {
				(*best)[0] = orderEntry{key: ^k, node: int32(c)}
				best.down()
			}
			if len(*best) == need {
				bound = ^(*best)[0].key
			}
		}
	}
	// The leaves kept, best first: popping the heap of negated keys gives
	// the worst first, so they are placed from the end.
	q := *best
	for j := len(q) - 1; j >= 0; j-- {
		q[j] = best.pop()
		*best = q[:j]
	}
	for _, e := range q {
		i := int(e.node)
		if !fn(int(v.ids[i]), wkb.Rect{MinX: b[4*i], MinY: b[4*i+1], MaxX: b[4*i+2], MaxY: b[4*i+3]}) {
			return
		}
	}
}
