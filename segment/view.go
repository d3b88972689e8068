package segment

import (
	"fmt"
	"slices"
	"sort"

	"mapcommons"
)

// View is a dataset as the embedded store keeps it between compactions:
// a base segment less its dead positions (features deleted, or replaced
// by a newer version), plus one delta segment holding the features added
// or updated since the base was written. Ids ascend with positions in both
// segments, so the dataset's order, that of a fully compacted segment, is
// the order of the live features' ids: a feature's position is the number
// of live features with a smaller id.
//
// A View without dead positions nor delta is its base segment.
type View struct {
	base  *Segment
	delta *Segment // nil: none
	dead  []int32  // the dead base positions, ascending
	bits  []uint64 // the same as a bitmap; nil when none are dead
	// deltaBase[k] is the number of live base features whose id is below
	// that of delta feature k (so k+deltaBase[k] is its position).
	deltaBase []int
	nextID    int64
}

// NewView returns the view of base less dead plus delta (nil for none;
// an empty one counts only for its next id).
// dead must ascend, each a position of base; every id of delta must be
// either absent from base or at a dead position of it, and the two
// segments must have the same attributes.
func NewView(base *Segment, dead []int32, delta *Segment) (*View, error) {
	v := &View{base: base, dead: dead, nextID: base.nextID}
	if delta != nil { // an empty delta still carries the next id
		v.nextID = max(v.nextID, delta.nextID)
	}
	for i, p := range dead {
		if p < 0 || int(p) >= base.n || (i > 0 && p <= dead[i-1]) {
			return nil, fmt.Errorf("segment: dead position %d (of %d) out of order or range", p, base.n)
		}
	}
	if len(dead) > 0 {
		v.bits = make([]uint64, (base.n+63)/64)
		for _, p := range dead {
			v.bits[p/64] |= 1 << (p % 64)
		}
	}
	if delta != nil && delta.n > 0 {
		if !slices.Equal(base.attrs, delta.attrs) {
			return nil, fmt.Errorf("segment: the delta's attributes differ from the base's")
		}
		v.delta = delta
		v.deltaBase = make([]int, delta.n)
		// The delta's ids ascend, so each search starts where the last
		// ended; ids above the base's last (adds) need none.
		lo := 0
		for k := 0; k < delta.n; k++ {
			id := delta.ID(k)
			p := base.n
			if base.n > 0 && base.ID(base.n-1) >= id {
				p = lo + sort.Search(base.n-lo, func(i int) bool { return base.ID(lo+i) >= id })
			}
			lo = p
			if p < base.n && base.ID(p) == id && !v.IsDead(p) {
				return nil, fmt.Errorf("segment: delta feature %d is live in the base too", id)
			}
			v.deltaBase[k] = p - v.deadBelow(p)
		}
	}
	return v, nil
}

// Base is the view's base segment.
func (v *View) Base() *Segment { return v.base }

// Delta is the view's delta segment; nil when there is none.
func (v *View) Delta() *Segment { return v.delta }

// Dead are the dead positions of the base, ascending; the caller must not
// change them.
func (v *View) Dead() []int32 { return v.dead }

// Pending reports whether the view is more than its base: a compaction
// would write a new segment.
func (v *View) Pending() bool { return v.delta != nil || len(v.dead) > 0 }

// IsDead reports whether base position p is dead.
func (v *View) IsDead(p int) bool { return bitSet(v.bits, p) }

// bitSet reports whether bit i of the bitmap bits (nil: none set) is set.
func bitSet(bits []uint64, i int) bool { return bits != nil && bits[i/64]&(1<<(i%64)) != 0 }

// Len is the number of live features.
func (v *View) Len() int {
	n := v.base.n - len(v.dead)
	if v.delta != nil {
		n += v.delta.n
	}
	return n
}

// Attributes are the attributes of the features.
func (v *View) Attributes() []mapcommons.Attribute { return v.base.attrs }

// NextID is the id the dataset gives its next new feature.
func (v *View) NextID() int64 { return v.nextID }

// deadBelow is the number of dead base positions below p.
func (v *View) deadBelow(p int) int {
	return sort.Search(len(v.dead), func(i int) bool { return int(v.dead[i]) >= p })
}

// idsBelow is the number of features of s whose id is below id.
func idsBelow(s *Segment, id int64) int {
	return sort.Search(s.n, func(i int) bool { return s.ID(i) >= id })
}

// BasePosition is the position in the view of live base feature p.
func (v *View) BasePosition(p int) int {
	pos := p - v.deadBelow(p)
	if v.delta != nil {
		pos += idsBelow(v.delta, v.base.ID(p))
	}
	return pos
}

// DeltaPosition is the position in the view of delta feature k.
func (v *View) DeltaPosition(k int) int { return k + v.deltaBase[k] }

// Locate returns the segment and the position in it of feature pos of the
// view (0 <= pos < Len).
func (v *View) Locate(pos int) (*Segment, int) {
	p, k := v.seek(pos)
	if v.delta != nil && k < v.delta.n && v.DeltaPosition(k) == pos {
		return v.delta, k
	}
	return v.base, p
}

// seek returns, for position pos of the view (0 <= pos <= Len), the base
// position of the first live base feature at or after it (base.n when
// none) and the index of the first delta feature at or after it: the
// features before pos are the live base ones below p and the delta ones
// below k.
func (v *View) seek(pos int) (p, k int) {
	if v.delta != nil {
		// The first delta feature at or after pos.
		k = sort.Search(v.delta.n, func(k int) bool { return v.DeltaPosition(k) >= pos })
	}
	// The live base feature of rank b: b plus the dead positions at or
	// below it.
	b := pos - k
	lo, hi := b, b+len(v.dead) // the answer is in [b, b+len(dead)]
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if m-v.deadBelow(m+1) < b { // live positions in [0, m] fewer than b+1
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, k
}

// Position returns the position in the view of the live feature with the
// given id, and whether there is one.
func (v *View) Position(id int64) (int, bool) {
	if v.delta != nil {
		if k, ok := v.delta.Position(id); ok {
			return v.DeltaPosition(k), true
		}
	}
	p, ok := v.base.Position(id)
	if !ok || v.IsDead(p) {
		return 0, false
	}
	return v.BasePosition(p), true
}

// ID is the id of feature pos of the view.
func (v *View) ID(pos int) int64 {
	s, p := v.Locate(pos)
	return s.ID(p)
}

// Read fills f with feature pos of the view; f.Geometry aliases the
// mapping of its segment.
func (v *View) Read(pos int, f *mapcommons.Feature) {
	s, p := v.Locate(pos)
	s.Read(p, f)
	f.Position = int64(pos)
}

// Each calls fn with the live features in position order, each with its
// segment and its position there, until fn returns false.
func (v *View) Each(fn func(s *Segment, p int) bool) {
	k := 0
	for p := 0; p < v.base.n; p++ {
		if v.IsDead(p) {
			continue
		}
		id := v.base.ID(p)
		for ; v.delta != nil && k < v.delta.n && v.delta.ID(k) < id; k++ {
			if !fn(v.delta, k) {
				return
			}
		}
		if !fn(v.base, p) {
			return
		}
	}
	for ; v.delta != nil && k < v.delta.n; k++ {
		if !fn(v.delta, k) {
			return
		}
	}
}
