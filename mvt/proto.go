package mvt

// This file holds the few protobuf wire-format primitives the encoder
// needs (https://protobuf.dev/programming-guides/encoding/).

import "encoding/binary"

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendTag(b []byte, field, wire int) []byte {
	return appendVarint(b, uint64(field)<<3|uint64(wire))
}

func varintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// appendPacked appends a packed repeated uint32 field (omitted when empty).
func appendPacked(b []byte, field int, vs []uint32) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += varintLen(uint64(v))
	}
	b = appendTag(b, field, wireBytes)
	b = appendVarint(b, uint64(n))
	for _, v := range vs {
		b = appendVarint(b, uint64(v))
	}
	return b
}
