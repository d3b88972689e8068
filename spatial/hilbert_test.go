package spatial

import (
	"testing"

	"mapcommons/format/wkb"
)

func TestHilbert(t *testing.T) {
	// The curve visits every cell of a small grid once, moving one cell at
	// a time: check on the 4 × 4 corner the curve starts with.
	seen := map[uint32][2]uint32{}
	for x := uint32(0); x < 4; x++ {
		for y := uint32(0); y < 4; y++ {
			seen[Hilbert(x, y)] = [2]uint32{x, y}
		}
	}
	for d := uint32(0); d < 16; d++ {
		p, ok := seen[d]
		if !ok {
			t.Fatalf("index %d not in the corner: %v", d, seen)
		}
		if d > 0 {
			q := seen[d-1]
			if dx, dy := int(p[0])-int(q[0]), int(p[1])-int(q[1]); dx*dx+dy*dy != 1 {
				t.Errorf("step %d: %v to %v", d, q, p)
			}
		}
	}
	if Hilbert(HilbertSide-1, 0) != 1<<32-1 {
		t.Errorf("last cell %d", Hilbert(HilbertSide-1, 0))
	}
	// Over the whole grid, a coarse 16 × 16 sampling: every cell once.
	const side = 16
	cells := map[uint32]bool{}
	for x := uint32(0); x < side; x++ {
		for y := uint32(0); y < side; y++ {
			cells[Hilbert(x*(HilbertSide/side), y*(HilbertSide/side))/(HilbertSide/side*HilbertSide/side)] = true
		}
	}
	if len(cells) != side*side {
		t.Fatalf("%d distinct cells of %d", len(cells), side*side)
	}
}

func TestHilbertKey(t *testing.T) {
	world := wkb.Rect{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}
	corner := HilbertKey(wkb.Rect{MinX: -180, MinY: -90, MaxX: -180, MaxY: -90}, world)
	far := HilbertKey(wkb.Rect{MinX: 180, MinY: -90, MaxX: 180, MaxY: -90}, world)
	if corner != 0 || far != 1<<32-1 {
		t.Errorf("keys of the corners %d, %d", corner, far)
	}
	// A box outside the extent is clamped to its edge; a flat extent is all
	// one column.
	if k := HilbertKey(wkb.Rect{MinX: 500, MinY: -90, MaxX: 500, MaxY: -90}, world); k != far {
		t.Errorf("outside: %d", k)
	}
	if k := HilbertKey(wkb.Rect{MinX: 3, MinY: 4, MaxX: 3, MaxY: 4}, wkb.Rect{MinX: 3, MinY: 4, MaxX: 3, MaxY: 4}); k != 0 {
		t.Errorf("flat extent: %d", k)
	}
}
