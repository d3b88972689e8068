package postgres

// The ids a refetch keeps, by the rule of the embedded store (see
// sqlite/featureids.go): a new row identical to an old one (the same
// attributes, values and geometry bytes) keeps the old row's id when that
// id is above the id given to the row before; otherwise it gets a fresh
// id. Here the old rows are in a table: they are read once, in position
// order, and indexed by a 128-bit hash of their contents (two seeded
// maphashes) and their id, 24 bytes a row; the new rows are looked up by
// binary search. Rows are not compared byte by byte after a hash match:
// a false match needs a 128-bit collision. Old tables of more than
// mapcommons.MaxMatchedRows features are not matched (every row gets a
// fresh id), as in the embedded store: the index then takes at most 96 MiB.

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"
	"sort"

	"github.com/jackc/pgx/v5"

	"mapcommons"
)

// idMatcher finds, for a new row, the id of the old row identical to it.
type idMatcher struct {
	seeds [2]maphash.Seed
	keys  []rowKey // by hash, then id
	buf   []byte
}

// rowKey is the hash of one old row and its id.
type rowKey struct {
	h  [2]uint64
	id int64
}

// newIDMatcher reads the old features of dataset old; nil when the new
// rows, of attributes attrs, cannot match them (other attributes, none,
// or too many).
func newIDMatcher(ctx context.Context, tx pgx.Tx, old *datasetRow, attrs []mapcommons.Attribute) (*idMatcher, error) {
	if old.table == "" || old.FeatureCount == 0 || old.FeatureCount > mapcommons.MaxMatchedRows || !slices.Equal(old.Attributes, attrs) {
		return nil, nil
	}
	m := &idMatcher{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
	rows, err := tx.Query(ctx, `SELECT `+attrColumns("fid, geom", len(attrs))+` FROM `+ident(old.table)+` ORDER BY pos`)
	if err != nil {
		return nil, formatError(err)
	}
	defer rows.Close()
	m.keys = make([]rowKey, 0, old.FeatureCount)
	err = eachFeature(rows, 2, func(lead, values []any) error {
		geom, _ := lead[1].([]byte)
		m.keys = append(m.keys, rowKey{h: m.hash(values, geom), id: lead[0].(int64)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(m.keys, func(a, b rowKey) int {
		if c := slices.Compare(a.h[:], b.h[:]); c != 0 {
			return c
		}
		return compareInt64(a.id, b.id)
	})
	return m, nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hash hashes a row: per value a type tag (0 for null) and its bytes
// (strings after their length), then the geometry after its length.
func (m *idMatcher) hash(values []any, geom []byte) [2]uint64 {
	b := m.buf[:0]
	for _, v := range values {
		switch v := v.(type) {
		case nil:
			b = append(b, 0)
		case int64:
			b = binary.LittleEndian.AppendUint64(append(b, 1), uint64(v))
		case float64: // bit for bit: -0 is not 0
			b = binary.LittleEndian.AppendUint64(append(b, 2), math.Float64bits(v))
		case bool:
			b = append(b, 3, boolByte(v))
		case string:
			b = binary.LittleEndian.AppendUint64(append(b, 4), uint64(len(v)))
			b = append(b, v...)
		default:
			b = append(b, 5) // no stored row has it: a row with it is refused
		}
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(geom)))
	b = append(b, geom...)
	m.buf = b
	return [2]uint64{maphash.Bytes(m.seeds[0], b), maphash.Bytes(m.seeds[1], b)}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// id returns the smallest id above last of an old row identical to f, or
// 0 when there is none.
func (m *idMatcher) id(f *mapcommons.Feature, last int64) int64 {
	h := m.hash(f.Values, f.Geometry)
	i := sort.Search(len(m.keys), func(i int) bool {
		k := m.keys[i]
		if c := slices.Compare(k.h[:], h[:]); c != 0 {
			return c > 0
		}
		return k.id > last
	})
	if i < len(m.keys) && m.keys[i].h == h {
		return m.keys[i].id
	}
	return 0
}
