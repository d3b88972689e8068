package basemap

// This file cuts the layers' shapes into the pieces tiles are made of.
// A continent of 1:10m has a hundred thousand points and more; a tile of
// zoom 9 covers a thousandth of it. Cut once, on load, into pieces of at
// most pieceMax points (polygons halved along their longer side, each
// half clipped to its box, until small; lines in runs of points), a tile
// reads the few pieces its box meets. The pieces of a polygon share their
// cut edges: filled, they are the polygon; their outlines are not its
// outline, which is why the tiles carry the coastline as lines of its own.

import (
	"math"

	"mapcommons/format/wkb"
)

// pieceMinSide is the smallest side, in degrees, of a polygon's box that
// is still cut in two.
const pieceMinSide = 0.05

// ringsBounds is the box of rings' points.
func ringsBounds(rings [][]float64) wkb.Rect {
	r := wkb.EmptyRect
	for _, ring := range rings {
		for i := 0; i+1 < len(ring); i += 2 {
			r.MinX, r.MaxX = math.Min(r.MinX, ring[i]), math.Max(r.MaxX, ring[i])
			r.MinY, r.MaxY = math.Min(r.MinY, ring[i+1]), math.Max(r.MaxY, ring[i+1])
		}
	}
	return r
}

// appendPolygonPieces appends the pieces of polygon rings (of shape s),
// which lie within box.
func appendPolygonPieces(dst []piece, s Shape, rings [][]float64, box wkb.Rect) []piece {
	n := 0
	for _, r := range rings {
		n += len(r) / 2
	}
	if n == 0 {
		return dst
	}
	w, h := box.MaxX-box.MinX, box.MaxY-box.MinY
	if n <= pieceMax || max(w, h) < pieceMinSide {
		return append(dst, piece{geom: wkb.AppendPolygon(nil, rings), bounds: ringsBounds(rings),
			minZoom10: s.MinZoom10, rank: s.Rank, name: s.Name})
	}
	lo, hi := box, box
	if w >= h {
		lo.MaxX = box.MinX + w/2
		hi.MinX = lo.MaxX
	} else {
		lo.MaxY = box.MinY + h/2
		hi.MinY = lo.MaxY
	}
	for _, half := range []wkb.Rect{lo, hi} {
		var clipped [][]float64
		for i, r := range rings {
			c := clipRing(r, half)
			if len(c) < 8 {
				if i == 0 {
					break // the exterior left the half: so did its holes
				}
				continue
			}
			clipped = append(clipped, c)
		}
		if len(clipped) > 0 {
			dst = appendPolygonPieces(dst, s, clipped, half)
		}
	}
	return dst
}

// clipRing clips closed ring r to box b (Sutherland–Hodgman, one side of
// the box at a time): a closed ring, or nil when nothing is left. Parts of
// the ring outside the box become runs along its sides, which fill
// nothing.
func clipRing(r []float64, b wkb.Rect) []float64 {
	out := r
	for side := range 4 {
		in := func(x, y float64) bool {
			switch side {
			case 0:
				return x >= b.MinX
			case 1:
				return x <= b.MaxX
			case 2:
				return y >= b.MinY
			}
			return y <= b.MaxY
		}
		cut := func(ax, ay, bx, by float64) (float64, float64) {
			var t float64
			switch side {
			case 0:
				t = (b.MinX - ax) / (bx - ax)
				return b.MinX, ay + t*(by-ay)
			case 1:
				t = (b.MaxX - ax) / (bx - ax)
				return b.MaxX, ay + t*(by-ay)
			case 2:
				t = (b.MinY - ay) / (by - ay)
				return ax + t*(bx-ax), b.MinY
			}
			t = (b.MaxY - ay) / (by - ay)
			return ax + t*(bx-ax), b.MaxY
		}
		src := out
		out = make([]float64, 0, len(src)+8)
		n := len(src)/2 - 1 // the last point repeats the first
		for i := 0; i < n; i++ {
			ax, ay := src[2*i], src[2*i+1]
			bx, by := src[2*i+2], src[2*i+3]
			ain, bin := in(ax, ay), in(bx, by)
			if ain {
				out = append(out, ax, ay)
			}
			if ain != bin {
				x, y := cut(ax, ay, bx, by)
				out = append(out, x, y)
			}
		}
		if len(out) < 6 {
			return nil
		}
		out = append(out, out[0], out[1])
	}
	return out
}

// appendLinePieces appends the pieces of line xy (of shape s): runs of at
// most pieceMax points, each run starting at the last point of the one
// before.
func appendLinePieces(dst []piece, s Shape, xy []float64) []piece {
	for start := 0; start+3 < len(xy); start += 2 * (pieceMax - 1) {
		end := min(len(xy), start+2*pieceMax)
		run := xy[start:end:end]
		dst = append(dst, piece{geom: wkb.AppendLineString(nil, run), bounds: ringsBounds([][]float64{run}),
			minZoom10: s.MinZoom10, rank: s.Rank, name: s.Name})
	}
	return dst
}

// coastLines are the parts of land ring r that are coast: without its
// edges along the antimeridian and along the south pole's parallel, where
// Natural Earth closes the rings of Antarctica, Russia and Fiji.
func coastLines(r []float64) [][]float64 {
	artificial := func(ax, ay, bx, by float64) bool {
		return (math.Abs(ax) >= 179.9999 && ax == bx) || (ay <= -89.9 && by <= -89.9)
	}
	var out [][]float64
	var cur []float64
	for i := 0; i+3 < len(r); i += 2 {
		if artificial(r[i], r[i+1], r[i+2], r[i+3]) {
			if len(cur) >= 4 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		if len(cur) == 0 {
			cur = append(cur, r[i], r[i+1])
		}
		cur = append(cur, r[i+2], r[i+3])
	}
	if len(cur) >= 4 {
		out = append(out, cur)
	}
	return out
}
