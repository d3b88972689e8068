package ingest

// A refetch of a feed whose rows carry a stable key (Dataset.FeedKey, the
// registration's key parameter) changes only what changed: the new rows
// are compared with the old by key, and the difference goes to the store
// as one FeatureService.ApplyEdits — a new key is an add, a key whose row
// changed (any value, or the geometry, floats bit for bit) an update of
// the old feature (its id kept), a key gone a delete; an unchanged row is
// left alone, keeping its id and its position. Added rows go last and
// deleted ones leave no gap, so when the feed moved rows the dataset's
// order is no longer the file's.
//
// Memory: the old rows are read once (FeatureQuery.Lazy) into a map from
// key to (id, 64-bit hash of the row): about 60 bytes and the key's bytes
// a row, for at most maxSyncRows rows and maxSyncKeyBytes of keys. The
// changed rows are held for the edit, up to maxSyncEditBytes. Past any of
// these bounds, when the new data's attributes differ from the old, or
// when a key is null or repeated (in the new rows or the old), the
// refetch replaces every feature as a feed without a key does
// (DatasetService.ReplaceFeatures), reading the fetched file again from
// its start when the comparison had read some of it (the file stays on
// disk until the refetch ends: the remote is not asked twice).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"

	"mapcommons"
)

// Bounds of a keyed refetch (see above); past them it replaces.
const (
	maxSyncRows      = mapcommons.MaxMatchedRows
	maxSyncKeyBytes  = 64 << 20
	maxSyncEditBytes = 64 << 20
)

// SyncLimits are the bounds of a keyed refetch (see above).
type SyncLimits struct {
	Rows      int64 // stored features compared
	KeyBytes  int   // bytes of their keys
	EditBytes int   // bytes of the changed rows held for the edit
}

// DefaultSyncLimits are the bounds of a keyed refetch unless set.
var DefaultSyncLimits = SyncLimits{Rows: maxSyncRows, KeyBytes: maxSyncKeyBytes, EditBytes: maxSyncEditBytes}

// Syncer brings a feed with a key to its fetched rows.
type Syncer struct {
	Features mapcommons.FeatureService
	Datasets mapcommons.DatasetService
	Limits   SyncLimits
	// MaxFeatures bounds the dataset after the edit (0: no bound).
	MaxFeatures int64
	Logger      *slog.Logger
}

// CheckFeedKey checks that key names one of attrs.
func CheckFeedKey(key string, attrs []mapcommons.Attribute) error {
	names := make([]string, 0, len(attrs))
	for _, a := range attrs {
		if a.Name == key {
			return nil
		}
		if len(names) < 20 {
			names = append(names, a.Name)
		}
	}
	if len(attrs) == 0 {
		return mapcommons.Errorf(mapcommons.EINVALID, "key: %q is not an attribute of the data: it has none", key)
	}
	more := ""
	if len(attrs) > len(names) {
		more = ", …"
	}
	return mapcommons.Errorf(mapcommons.EINVALID, "key: %q is not an attribute of the data (%s%s)", key, strings.Join(names, ", "), more)
}

// Fallback says why a keyed refetch replaces every feature instead.
type Fallback struct{ Reason string }

func (f *Fallback) Error() string { return f.Reason }

func fallbackf(format string, args ...any) *Fallback {
	return &Fallback{Reason: fmt.Sprintf(format, args...)}
}

// oldRow is a stored feature as the comparison keeps it: its id, the
// hash of its values and geometry, and its index in the seen marks.
type oldRow struct {
	id   int64
	hash uint64
	n    uint32
}

// Sync brings the features of ds, a feed with a key, to the rows of src
// by one ApplyEdits, and records the fetch. It returns the dataset after;
// or a *Fallback (as the error) when the features are to be replaced
// instead, with read true when it read some of src; or the error that
// ends the refetch.
func (y Syncer) Sync(ctx context.Context, ds *mapcommons.Dataset, src mapcommons.FeatureSource) (_ *mapcommons.Dataset, read bool, err error) {
	attrs := src.Attributes()
	if !slices.Equal(attrs, ds.Attributes) {
		return nil, false, fallbackf("the attributes changed")
	}
	col := slices.IndexFunc(attrs, func(a mapcommons.Attribute) bool { return a.Name == ds.FeedKey })
	if col < 0 {
		return nil, false, fallbackf("the data has no attribute %q", ds.FeedKey)
	}
	lim := y.Limits
	if ds.FeatureCount > lim.Rows {
		return nil, false, fallbackf("more than %d features", lim.Rows)
	}
	rh := rowHasher{attrs: attrs, col: col}
	rh.h.SetSeed(maphash.MakeSeed())

	// The old rows by key.
	old := make(map[string]oldRow, ds.FeatureCount)
	keyBytes := 0
	err = y.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1, Lazy: true}, func(f *mapcommons.Feature) error {
		if int64(len(old)) >= lim.Rows {
			return fallbackf("more than %d features", lim.Rows)
		}
		k, ok := rh.key(f)
		if !ok {
			return fallbackf("feature %d has no %s", f.ID, ds.FeedKey)
		}
		if _, dup := old[string(k)]; dup {
			return fallbackf("%s %s is repeated in the stored features", ds.FeedKey, rh.show(k))
		}
		if keyBytes += len(k); keyBytes > lim.KeyBytes {
			return fallbackf("the keys take more than %d bytes", lim.KeyBytes)
		}
		old[string(k)] = oldRow{id: f.ID, hash: rh.sum(f), n: uint32(len(old))}
		return nil
	})
	if err != nil {
		return nil, false, err
	}

	// The new rows, against the old.
	seen := make([]bool, len(old))
	added := map[string]struct{}{}
	e := &mapcommons.Edits{MaxFeatures: y.MaxFeatures}
	size := 0
	for row := 1; ; row++ {
		f, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, true, err
		}
		k, ok := rh.key(f)
		if !ok {
			return nil, true, fallbackf("new row %d has no %s", row, ds.FeedKey)
		}
		var copyTo *[]mapcommons.Feature
		var id int64
		if o, in := old[string(k)]; in {
			if seen[o.n] {
				return nil, true, fallbackf("%s %s is repeated (new row %d)", ds.FeedKey, rh.show(k), row)
			}
			seen[o.n] = true
			if rh.sum(f) == o.hash {
				continue // unchanged
			}
			copyTo, id = &e.Updates, o.id
		} else {
			if _, dup := added[string(k)]; dup {
				return nil, true, fallbackf("%s %s is repeated (new row %d)", ds.FeedKey, rh.show(k), row)
			}
			added[string(k)] = struct{}{}
			size += len(k) + 48
			copyTo = &e.Adds
		}
		// The source may reuse its feature: the edit keeps a copy.
		c := mapcommons.Feature{ID: id, Values: slices.Clone(f.Values), Geometry: slices.Clone(f.Geometry)}
		size += 128 + 16*len(c.Values) + len(c.Geometry)
		for _, v := range c.Values {
			if s, ok := v.(string); ok {
				size += len(s)
			}
		}
		if size > lim.EditBytes {
			return nil, true, fallbackf("the change takes more than %d bytes", lim.EditBytes)
		}
		*copyTo = append(*copyTo, c)
	}
	for _, o := range old {
		if !seen[o.n] {
			e.Deletes = append(e.Deletes, o.id)
		}
	}
	slices.Sort(e.Deletes)
	old, seen, added = nil, nil, nil

	if len(e.Adds)+len(e.Updates)+len(e.Deletes) > 0 {
		if _, err := y.Features.ApplyEdits(ctx, ds.ID, e); err != nil {
			if mapcommons.ErrorCode(err) == mapcommons.EINVALID {
				// A feature the store refuses (the replace will say which),
				// or the features changed since they were read.
				return nil, true, fallbackf("the edit was refused: %s", mapcommons.ErrorMessage(err))
			}
			return nil, true, err
		}
	}
	if y.Logger != nil {
		y.Logger.LogAttrs(ctx, slog.LevelInfo, "refreshed a feed by key", slog.Int64("dataset", ds.ID), slog.Int("adds", len(e.Adds)),
			slog.Int("updates", len(e.Updates)), slog.Int("deletes", len(e.Deletes)))
	}
	if err := y.Datasets.RecordFetchError(ctx, ds.ID, ""); err != nil {
		return nil, true, err
	}
	fresh, err := y.Datasets.FindDatasetByID(ctx, ds.ID)
	return fresh, true, err
}

// IsFallback reports whether err is a keyed refetch's fallback.
func IsFallback(err error) (*Fallback, bool) {
	var fb *Fallback
	ok := errors.As(err, &fb)
	return fb, ok
}

// rowHasher reads a feature's key and hashes its values and geometry, from
// Values (a source's features) or Row (a lazy scan's) alike.
type rowHasher struct {
	attrs []mapcommons.Attribute
	col   int // the key's attribute
	h     maphash.Hash
	kbuf  []byte // the key's bytes
	vbuf  []byte // a value's, while hashing
	buf   []byte
}

// key returns the bytes of f's key (valid until the next call); false
// when it is null.
func (rh *rowHasher) key(f *mapcommons.Feature) ([]byte, bool) {
	var null bool
	rh.kbuf, null = rh.appendValue(rh.kbuf[:0], f, rh.col)
	return rh.kbuf, !null
}

// show is a key as an error message names it.
func (rh *rowHasher) show(k []byte) string {
	switch rh.attrs[rh.col].Type {
	case mapcommons.AttrInteger:
		if len(k) == 8 {
			return fmt.Sprint(int64(binary.LittleEndian.Uint64(k)))
		}
	case mapcommons.AttrFloat:
		if len(k) == 8 {
			return fmt.Sprint(math.Float64frombits(binary.LittleEndian.Uint64(k)))
		}
	case mapcommons.AttrBoolean:
		return fmt.Sprint(len(k) == 1 && k[0] == 1)
	}
	if len(k) > 100 {
		k = k[:100]
	}
	return fmt.Sprintf("%q", k)
}

// sum hashes f's values and geometry.
func (rh *rowHasher) sum(f *mapcommons.Feature) uint64 {
	rh.h.Reset()
	for i := range rh.attrs {
		var null bool
		rh.vbuf, null = rh.appendValue(rh.vbuf[:0], f, i)
		if null {
			rh.h.WriteByte(0)
			continue
		}
		rh.buf = binary.AppendUvarint(append(rh.buf[:0], 1), uint64(len(rh.vbuf)))
		rh.h.Write(rh.buf)
		rh.h.Write(rh.vbuf)
	}
	rh.buf = binary.AppendUvarint(rh.buf[:0], uint64(len(f.Geometry)))
	rh.h.Write(rh.buf)
	rh.h.Write(f.Geometry)
	return rh.h.Sum64()
}

// appendValue appends the bytes of f's value of attribute i to b: an
// integer or a float's bits as 8 bytes, a boolean as one, a string's
// bytes. A value not of its attribute's type (which the store refuses)
// gets bytes no value of that type has.
func (rh *rowHasher) appendValue(b []byte, f *mapcommons.Feature, i int) (_ []byte, null bool) {
	t := rh.attrs[i].Type
	if f.Values == nil && f.Row != nil {
		r := f.Row
		if r.IsNull(i) {
			return b, true
		}
		switch t {
		case mapcommons.AttrInteger:
			return binary.LittleEndian.AppendUint64(b, uint64(r.Int(i))), false
		case mapcommons.AttrFloat:
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Float(i))), false
		case mapcommons.AttrBoolean:
			if r.Bool(i) {
				return append(b, 1), false
			}
			return append(b, 0), false
		}
		return append(b, r.Bytes(i)...), false
	}
	if i >= len(f.Values) || f.Values[i] == nil {
		return b, true
	}
	v := f.Values[i]
	switch t {
	case mapcommons.AttrInteger:
		if n, ok := v.(int64); ok {
			return binary.LittleEndian.AppendUint64(b, uint64(n)), false
		}
	case mapcommons.AttrFloat:
		if x, ok := v.(float64); ok {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(x)), false
		}
	case mapcommons.AttrBoolean:
		if x, ok := v.(bool); ok {
			if x {
				return append(b, 1), false
			}
			return append(b, 0), false
		}
	default:
		if s, ok := v.(string); ok {
			return append(b, s...), false
		}
	}
	return append(b, fmt.Sprintf("\xff%T:%v", v, v)...), false
}
