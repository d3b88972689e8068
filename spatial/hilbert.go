package spatial

import (
	"math"

	"mapcommons/format/wkb"
)

// HilbertSide is the side of the grid of cells Hilbert orders.
const HilbertSide = 1 << 16

// Hilbert returns the distance of cell (x, y), each below HilbertSide,
// along the Hilbert curve over the HilbertSide × HilbertSide grid: the
// order in which the spatial indexes lay out their leaves.
func Hilbert(x, y uint32) uint32 {
	var d uint32
	for s := uint32(HilbertSide / 2); s > 0; s /= 2 {
		var rx, ry uint32
		if x&s != 0 {
			rx = 1
		}
		if y&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		if ry == 0 { // rotate the quadrant
			if rx == 1 {
				x = s - 1 - x&(s-1)
				y = s - 1 - y&(s-1)
			}
			x, y = y, x
		}
	}
	return d
}

// HilbertKey is the Hilbert value of the centre of box b on the grid laid
// over extent: the order of the embedded index's leaves, and of the rows
// of a PostgreSQL load.
func HilbertKey(b, extent wkb.Rect) uint64 {
	w, h := extent.MaxX-extent.MinX, extent.MaxY-extent.MinY
	var cx, cy uint32
	if w > 0 {
		cx = uint32(math.Min(HilbertSide-1, math.Floor(((b.MinX+b.MaxX)/2-extent.MinX)/w*(HilbertSide-1))))
	}
	if h > 0 {
		cy = uint32(math.Min(HilbertSide-1, math.Floor(((b.MinY+b.MaxY)/2-extent.MinY)/h*(HilbertSide-1))))
	}
	return uint64(Hilbert(cx, cy))
}
