package sqlite

// The ids a refetch keeps: a row of the new features identical to a row of
// the old (the same attributes, the same values and the same geometry
// bytes) keeps the old row's id, so that a client holding an id still
// finds the feature after a feed refresh that did not change it.
//
// Ids increase with positions in a segment, so an old id can be kept only
// when it is greater than the last id given in the new segment; otherwise
// the row gets a fresh id (from the dataset's next id on, never one given
// before). As fresh ids are above every old id, a row that gets one ends
// the keeping: every row after it gets a fresh id too. A feed that appends
// at the end keeps every id; one that inserts, changes or reorders rows
// keeps the ids of the rows before the first such change (and of the rows
// that moved earlier, when their old ids still increase).
//
// Cost: each new row is first compared with the old row after the one
// matched last (in the segment's mapping: nothing allocated), which is all
// a feed that keeps its order costs. At the first row that is not that
// one, an index of the old rows is built: 16 bytes per old feature (a hash
// and a position, sorted), one pass over the old segment; each row is then
// looked up by binary search. Measured (BenchmarkRefetchIDs, 1,000,000
// rows, on a shared 2-core machine): 0.25-0.3 µs a row in order, 1-1.25 µs
// with the index (its building included). Old segments of more than
// mapcommons.MaxMatchedRows features are not matched (every row gets a
// fresh id), to bound the memory of a refetch at 64 MiB.

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"sort"

	"mapcommons"
	"mapcommons/segment"
)

// idMatcher finds, for a new row, the old row identical to it.
type idMatcher struct {
	ctx  context.Context
	old  *segment.Segment
	next int // the old position after the last row matched: tried first
	// The index of the old rows, built at the first row that is not the
	// next old one (a feed that only appends never needs it).
	keys    []rowKey // by hash, then position (so by id among equal hashes)
	indexed bool
	h       maphash.Hash
	buf     [8]byte
}

// rowKey is the hash of one old row and its position.
type rowKey struct {
	hash uint64
	pos  uint32
}

// newIDMatcher returns a matcher of rows of attributes attrs with those
// of old; nil when they cannot match (other attributes, or too many rows).
func newIDMatcher(ctx context.Context, old *segment.Segment, attrs []mapcommons.Attribute) *idMatcher {
	if old.Len() == 0 || old.Len() > mapcommons.MaxMatchedRows || !slices.Equal(old.Attributes(), attrs) {
		return nil
	}
	m := &idMatcher{ctx: ctx, old: old}
	m.h.SetSeed(maphash.MakeSeed())
	return m
}

// index hashes every old row and sorts the hashes; it gives up (leaving
// no index) when the context ends, which the caller then notices.
func (m *idMatcher) index() {
	m.indexed = true
	keys := make([]rowKey, m.old.Len())
	for pos := range keys {
		if pos%4096 == 0 && m.ctx.Err() != nil {
			return
		}
		keys[pos] = rowKey{hash: m.hashOld(pos), pos: uint32(pos)}
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		if a.hash != b.hash {
			return cmpU64(a.hash, b.hash)
		}
		return int(a.pos) - int(b.pos)
	})
	m.keys = keys
}

func cmpU64(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// The encoding hashed, the same for an old row and a new one: per value a
// null flag and the value's bytes (strings after their length), then the
// geometry after its length.

func (m *idMatcher) u64(v uint64) {
	binary.LittleEndian.PutUint64(m.buf[:], v)
	m.h.Write(m.buf[:])
}

func (m *idMatcher) bytes(b []byte) {
	m.u64(uint64(len(b)))
	m.h.Write(b)
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// hashOld hashes old row pos, reading the segment in place.
func (m *idMatcher) hashOld(pos int) uint64 {
	m.h.Reset()
	for col, a := range m.old.Attributes() {
		if m.old.IsNull(col, pos) {
			m.h.WriteByte(0)
			continue
		}
		m.h.WriteByte(1)
		switch a.Type {
		case mapcommons.AttrInteger:
			v, _ := m.old.Int(col, pos)
			m.u64(uint64(v))
		case mapcommons.AttrFloat:
			v, _ := m.old.Float(col, pos)
			m.u64(math.Float64bits(v))
		case mapcommons.AttrBoolean:
			m.h.WriteByte(boolByte(m.old.Value(col, pos) == true))
		default:
			b, _ := m.old.Bytes(col, pos)
			m.bytes(b)
		}
	}
	m.bytes(m.old.Geometry(pos))
	return m.h.Sum64()
}

// hashNew hashes a new row.
func (m *idMatcher) hashNew(f *mapcommons.Feature) uint64 {
	m.h.Reset()
	for _, v := range f.Values {
		if v == nil {
			m.h.WriteByte(0)
			continue
		}
		m.h.WriteByte(1)
		switch v := v.(type) {
		case int64:
			m.u64(uint64(v))
		case float64:
			m.u64(math.Float64bits(v))
		case bool:
			m.h.WriteByte(boolByte(v))
		case string:
			m.u64(uint64(len(v)))
			m.h.WriteString(v)
		}
	}
	m.bytes(f.Geometry)
	return m.h.Sum64()
}

// same reports whether new row f equals old row pos (a hash may collide).
// A value of another type than its attribute's equals nothing.
func (m *idMatcher) same(f *mapcommons.Feature, pos int) bool {
	attrs := m.old.Attributes()
	if len(f.Values) != len(attrs) || !bytes.Equal(f.Geometry, m.old.Geometry(pos)) {
		return false
	}
	for col, v := range f.Values {
		if null := m.old.IsNull(col, pos); v == nil || null {
			if v != nil || !null {
				return false
			}
			continue
		}
		eq := false
		switch attrs[col].Type {
		case mapcommons.AttrInteger:
			x, ok := v.(int64)
			o, _ := m.old.Int(col, pos)
			eq = ok && o == x
		case mapcommons.AttrFloat: // bit for bit, as hashed: -0 is not 0
			x, ok := v.(float64)
			o, _ := m.old.Float(col, pos)
			eq = ok && math.Float64bits(o) == math.Float64bits(x)
		case mapcommons.AttrBoolean:
			x, ok := v.(bool)
			eq = ok && m.old.Value(col, pos) == x
		default:
			x, ok := v.(string)
			o, _ := m.old.Bytes(col, pos)
			eq = ok && string(o) == x
		}
		if !eq {
			return false
		}
	}
	return true
}

// id returns the id of the first old row identical to f whose id is
// greater than last (the id given to the row before f, 0 for the first
// row), or 0 when there is none. The old
// row after the one matched last is tried first: when rows come in their
// old order, nothing is hashed.
func (m *idMatcher) id(f *mapcommons.Feature, last int64) int64 {
	if m.next < m.old.Len() && m.old.ID(m.next) > last && m.same(f, m.next) {
		m.next++
		return m.old.ID(m.next - 1)
	}
	if !m.indexed {
		m.index()
	}
	h := m.hashNew(f)
	i := sort.Search(len(m.keys), func(i int) bool {
		k := m.keys[i]
		return k.hash > h || k.hash == h && m.old.ID(int(k.pos)) > last
	})
	for ; i < len(m.keys) && m.keys[i].hash == h; i++ {
		if pos := int(m.keys[i].pos); m.same(f, pos) {
			m.next = pos + 1
			return m.old.ID(pos)
		}
	}
	return 0
}
