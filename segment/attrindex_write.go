package segment

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"slices"
	"strconv"

	"mapcommons"
)

// Attribute indexes. Each column gets a section "cN.perm": the n positions
// as uint32s, ordered as the engine orders by that column (compareAt,
// ascending): the non-null values by value (integers as integers, floats by
// cmp.Compare: NaN first, -0 equal to 0; booleans false before true;
// strings byte-wise), ties by position; then the null positions, ascending.
// Filters (matchValues) compare with cmp.Compare over float64 and
// bytes.Compare, both monotone in that order, so the rows an equality or a
// range selects are a run of the permutation, found by binary search.
//
// The writer builds them at Finish from the spooled columns, one column at
// a time, in memory: 24 bytes per feature for numbers and booleans (keys
// and positions, twice, for a radix sort), plus a string column's bytes and
// offsets. Segments of more than maxIndexFeatures features, and string
// columns of more than maxIndexStringBytes bytes, get no index (queries
// scan them, as in files written before indexes).

const (
	maxIndexFeatures    = 1 << 22 // 96 MiB at most for the sort
	maxIndexStringBytes = 1 << 26
)

// permName is the section of column i's permutation.
func permName(i int) string { return "c" + strconv.Itoa(i) + ".perm" }

// buildPerms writes the permutation of every column to a temporary
// section, returned in column order (nil entries for columns without).
func (w *Writer) buildPerms() ([]*section, error) {
	if w.n == 0 || w.n > maxIndexFeatures {
		return nil, nil
	}
	out := make([]*section, len(w.cols))
	keys, keys2 := make([]uint64, 0, w.n), make([]uint64, w.n)
	pos, pos2 := make([]uint32, 0, w.n), make([]uint32, w.n)
	bits := make([]byte, (w.n+7)/8) // the column's nulls
	chunk := make([]byte, min(64<<10, 8*w.n))
	for i, c := range w.cols {
		if (c.typ == mapcommons.AttrString || c.typ == mapcommons.AttrDate) && c.bytes > maxIndexStringBytes {
			continue
		}
		if err := w.readNulls(c, bits); err != nil {
			return nil, err
		}
		isNull := func(p int) bool { return bits[p/8]&(1<<(p%8)) != 0 }
		keys, pos = keys[:0], pos[:0]
		keys2, pos2 = keys2[:cap(keys2)], pos2[:cap(pos2)]
		var strs []byte
		var offs []uint64
		switch c.typ {
		case mapcommons.AttrInteger, mapcommons.AttrFloat, mapcommons.AttrBoolean:
			data, err := c.data.reader()
			if err != nil {
				return nil, err
			}
			width := 8
			if c.typ == mapcommons.AttrBoolean {
				width = 1
			}
			for p := 0; p < w.n; {
				m := min(len(chunk)/width, w.n-p)
				if _, err := io.ReadFull(data, chunk[:m*width]); err != nil {
					return nil, err
				}
				for j := 0; j < m; j, p = j+1, p+1 {
					var k uint64
					if width == 1 {
						if chunk[j] == 2 {
							bits[p/8] |= 1 << (p % 8)
							continue
						}
						k = uint64(chunk[j])
					} else {
						if isNull(p) {
							continue
						}
						u := binary.LittleEndian.Uint64(chunk[8*j:])
						if c.typ == mapcommons.AttrInteger {
							k = u ^ 1<<63
						} else {
							k = floatKey(math.Float64frombits(u))
						}
					}
					keys = append(keys, k)
					pos = append(pos, uint32(p))
				}
			}
		default:
			var err error
			if strs, offs, err = w.readStrings(c); err != nil {
				return nil, err
			}
			for p := 0; p < w.n; p++ {
				if isNull(p) {
					continue
				}
				keys = append(keys, prefixKey(strs[offs[p]:offs[p+1]]))
				pos = append(pos, uint32(p))
			}
		}
		keys, pos, keys2, pos2 = radixSort(keys, pos, keys2[:len(keys)], pos2[:len(pos)])
		if offs != nil {
			sortTies(keys, pos, keys2[:len(keys)], pos2[:len(pos)], func(p uint32) []byte { return strs[offs[p]:offs[p+1]] }, 0)
		}
		s, err := w.temp("perm")
		if err != nil {
			return nil, err
		}
		s.name = permName(i)
		var b [4]byte
		for _, p := range pos {
			binary.LittleEndian.PutUint32(b[:], p)
			s.write(b[:])
		}
		for p := 0; p < w.n && len(pos) < w.n; p++ {
			if isNull(p) {
				binary.LittleEndian.PutUint32(b[:], uint32(p))
				s.write(b[:])
			}
		}
		out[i] = s
	}
	return out, nil
}

// readNulls reads a column's null bitmap back into bits (all clear when
// it has none; a boolean's nulls are in its data).
func (w *Writer) readNulls(c *column, bits []byte) error {
	clear(bits)
	if c.nul == nil || c.typ == mapcommons.AttrBoolean {
		return nil
	}
	r, err := c.nul.reader()
	if err != nil {
		return err
	}
	_, err = io.ReadFull(r, bits)
	return err
}

// readStrings reads a string column's bytes and end offsets back (the
// offsets with their leading 0).
func (w *Writer) readStrings(c *column) ([]byte, []uint64, error) {
	var strs []byte
	var r io.Reader
	if c.data.inMem && c.off.inMem {
		if int64(len(c.data.mem)) != int64(c.bytes) {
			return nil, nil, io.ErrUnexpectedEOF
		}
		strs, r = c.data.mem, bytes.NewReader(c.off.mem)
	} else {
		if err := c.data.rewind(); err != nil {
			return nil, nil, err
		}
		strs = make([]byte, c.bytes)
		if _, err := io.ReadFull(c.data.f, strs); err != nil {
			return nil, nil, err
		}
		if err := c.off.rewind(); err != nil {
			return nil, nil, err
		}
		r = bufio.NewReaderSize(c.off.f, 64<<10)
	}
	offs := make([]uint64, w.n+1)
	var b [8]byte
	for i := range offs {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, nil, err
		}
		offs[i] = binary.LittleEndian.Uint64(b[:])
		if offs[i] > c.bytes || (i > 0 && offs[i] < offs[i-1]) {
			return nil, nil, io.ErrUnexpectedEOF
		}
	}
	return strs, offs, nil
}

// floatKey maps a float to a key that orders as cmp.Compare: every NaN
// first, -0 as 0.
func floatKey(x float64) uint64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x == 0:
		return 1 << 63
	}
	u := math.Float64bits(x)
	if u&(1<<63) != 0 {
		return ^u
	}
	return u | 1<<63
}

// prefixKey is the first 8 bytes of a string, big endian, zero padded:
// monotone in bytes.Compare (equal keys still need the whole strings).
func prefixKey(b []byte) uint64 {
	var k [8]byte
	copy(k[:], b)
	return binary.BigEndian.Uint64(k[:])
}

// radixSort sorts keys, and pos along, stably (ties keep their order of
// position), 11 bits at a time from the lowest, with the counts of every
// digit taken in one pass and the digits that every key shares skipped;
// the second pair are buffers of the same length. It returns the sorted
// pair and the buffers.
func radixSort(keys []uint64, pos []uint32, keys2 []uint64, pos2 []uint32) ([]uint64, []uint32, []uint64, []uint32) {
	const bits, digits = 11, 6
	if slices.IsSorted(keys) {
		return keys, pos, keys2, pos2
	}
	if len(keys) <= 64 {
		// Few keys: an insertion sort, as stable, rather than counts of
		// every digit (96 KiB to clear).
		for i := 1; i < len(keys); i++ {
			k, p := keys[i], pos[i]
			j := i
			for ; j > 0 && keys[j-1] > k; j-- {
				keys[j], pos[j] = keys[j-1], pos[j-1]
			}
			keys[j], pos[j] = k, p
		}
		return keys, pos, keys2, pos2
	}
	var count [digits][1 << bits]int
	for _, k := range keys {
		for d := range digits {
			count[d][(k>>(bits*d))&(1<<bits-1)]++
		}
	}
	for d := range digits {
		shift := uint(bits * d)
		c := &count[d]
		if c[(keys[0]>>shift)&(1<<bits-1)] == len(keys) {
			continue // every key has this digit: the pass would not move them
		}
		sum := 0
		for v := range c {
			sum, c[v] = sum+c[v], sum
		}
		for i, k := range keys {
			v := (k >> shift) & (1<<bits - 1)
			keys2[c[v]], pos2[c[v]] = k, pos[i]
			c[v]++
		}
		keys, keys2, pos, pos2 = keys2, keys, pos2, pos
	}
	return keys, pos, keys2, pos2
}

// sortTies orders each run of equal keys, the first depth+8 bytes of
// their strings (zero padded), by the strings' following bytes, with the
// same radix sort on the next 8 bytes, run by run, stably (ties keep their
// order of position). keys2 and pos2 are buffers as long as keys.
func sortTies(keys []uint64, pos []uint32, keys2 []uint64, pos2 []uint32, str func(p uint32) []byte, depth int) {
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		if j-i > 1 {
			sortRun(keys[i:j], pos[i:j], keys2[i:j], pos2[i:j], str, depth+8)
		}
		i = j
	}
}

// sortRun orders pos, strings equal in their first d bytes (zero padded),
// by the rest; keys and the buffers are scratch.
func sortRun(keys []uint64, pos []uint32, keys2 []uint64, pos2 []uint32, str func(p uint32) []byte, d int) {
	if len(pos) <= 64 { // cheaper compared than counted
		slices.SortStableFunc(pos, func(a, b uint32) int { return bytes.Compare(str(a), str(b)) })
		return
	}
	minLen, maxLen := len(str(pos[0])), len(str(pos[0]))
	for _, p := range pos[1:] {
		l := len(str(p))
		minLen, maxLen = min(minLen, l), max(maxLen, l)
	}
	if maxLen <= d {
		// Nothing left but the zero padding: a shorter string is a prefix
		// of a longer one, which it precedes.
		if minLen != maxLen {
			slices.SortStableFunc(pos, func(a, b uint32) int { return len(str(a)) - len(str(b)) })
		}
		return
	}
	for k, p := range pos {
		b := str(p)
		keys[k] = prefixKey(b[min(d, len(b)):])
	}
	k, q, _, _ := radixSort(keys, pos, keys2, pos2)
	if &q[0] != &pos[0] {
		copy(keys, k)
		copy(pos, q)
	}
	sortTies(keys, pos, keys2, pos2, str, d)
}
