package gpkg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"mapcommons/format/wkb"
)

// GeoPackage geometry encoding ("GeoPackageBinary", spec clause 2.1.3):
//
//	'G' 'P'     magic
//	0x00        version 1
//	flags       bit 0 byte order of the header (1 little endian), bits 1-3
//	            the envelope (0 none, 1 xy, 2 xyz, 3 xym, 4 xyzm), bit 4
//	            empty geometry, bit 5 extended type (0: standard)
//	int32       srs_id
//	doubles     the envelope: min x, max x, min y, max y (for xy)
//	…           standard WKB
const (
	flagLE       = 0x01
	flagEnvXY    = 1 << 1
	flagEnvMask  = 0x0E
	flagEmpty    = 0x10
	flagExtended = 0x20
)

// ErrInvalid is wrapped by every error of Decode.
var ErrInvalid = errors.New("invalid GeoPackage geometry")

// AppendGeometry appends the GeoPackage geometry of the WKB value b with the
// given srs_id. A Point has no envelope in its header (it is its own, as
// GDAL writes it), other geometries an xy one; an empty geometry has the
// empty flag and no envelope, and empty is true (it goes into no spatial
// index). The WKB is 2-D little endian, with an empty point's coordinates
// the quiet NaN 0x7FF8000000000000, as GDAL writes them.
// env is the bounding box (meaningless when empty). An empty b is an error:
// a feature without geometry is NULL, which the caller handles.
func AppendGeometry(dst, b []byte, srsID int32) (out []byte, env wkb.Rect, empty bool, err error) {
	if x, y, ok := wkb.StoredPoint(b); ok {
		dst = appendHeader(dst, flagLE, srsID)
		return append(dst, b...), wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}, false, nil
	}
	g, err := wkb.Decode(b)
	if err != nil {
		return dst, env, false, err
	}
	env, ok := g.Bounds()
	if !ok {
		dst = appendHeader(dst, flagLE|flagEmpty, srsID)
		return g.AppendWKBNaN(dst, quietNaN), env, true, nil
	}
	if g.Type == wkb.Point {
		dst = appendHeader(dst, flagLE, srsID)
	} else {
		dst = appendHeader(dst, flagLE|flagEnvXY, srsID)
		dst = wkb.AppendXY(dst, env.MinX, env.MaxX)
		dst = wkb.AppendXY(dst, env.MinY, env.MaxY)
	}
	return g.AppendWKBNaN(dst, quietNaN), env, false, nil
}

// quietNaN is the NaN GeoPackage (and GDAL) write for the coordinates of
// an empty point; Go's math.NaN() has another payload.
var quietNaN = math.Float64frombits(0x7FF8000000000000)

func appendHeader(dst []byte, flags byte, srsID int32) []byte {
	dst = append(dst, 'G', 'P', 0, flags)
	return binary.LittleEndian.AppendUint32(dst, uint32(srsID))
}

// wkbType returns the geometry type of a geometry AppendGeometry made.
func wkbType(g []byte) uint32 {
	off := 8
	if g[3]&flagEnvMask == flagEnvXY {
		off += 32
	}
	return binary.LittleEndian.Uint32(g[off+1:])
}

// Header is what a GeoPackage geometry says before its WKB.
type Header struct {
	SRSID    int32
	Empty    bool
	Envelope *wkb.Rect // the xy envelope, nil when there is none
}

// Decode parses a GeoPackage geometry (standard type, any envelope, either
// byte order) into its header and geometry (the WKB's extra ordinates
// dropped, as wkb.Decode does).
func Decode(b []byte) (Header, wkb.Geom, error) {
	var h Header
	if len(b) < 8 || b[0] != 'G' || b[1] != 'P' {
		return h, wkb.Geom{}, fmt.Errorf("%w: no magic", ErrInvalid)
	}
	if b[2] != 0 {
		return h, wkb.Geom{}, fmt.Errorf("%w: version %d", ErrInvalid, b[2])
	}
	flags := b[3]
	if flags&flagExtended != 0 {
		return h, wkb.Geom{}, fmt.Errorf("%w: extended geometry type", ErrInvalid)
	}
	var order binary.ByteOrder = binary.BigEndian
	if flags&flagLE != 0 {
		order = binary.LittleEndian
	}
	h.SRSID = int32(order.Uint32(b[4:]))
	h.Empty = flags&flagEmpty != 0
	var n int // envelope doubles
	switch (flags & flagEnvMask) >> 1 {
	case 0:
	case 1:
		n = 4
	case 2, 3:
		n = 6
	case 4:
		n = 8
	default:
		return h, wkb.Geom{}, fmt.Errorf("%w: envelope code %d", ErrInvalid, (flags&flagEnvMask)>>1)
	}
	if len(b) < 8+8*n {
		return h, wkb.Geom{}, fmt.Errorf("%w: truncated envelope", ErrInvalid)
	}
	if n > 0 {
		f := func(i int) float64 { return math.Float64frombits(order.Uint64(b[8+8*i:])) }
		h.Envelope = &wkb.Rect{MinX: f(0), MaxX: f(1), MinY: f(2), MaxY: f(3)}
	}
	g, err := wkb.Decode(b[8+8*n:])
	if err != nil {
		return h, g, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return h, g, nil
}
