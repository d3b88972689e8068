package render

import (
	"image/color"
	"math"

	"mapcommons/style"
)

// heat is a layer's heatmap being read (style.Look's Heatmap), as MapLibre
// draws the web application's (web/src/lib/style.js heatmapSpecs): the
// weight of the points on a grid over the clip box of a quarter of the
// image's resolution (heatQ), spread there by MapLibre's kernel, then
// sampled bilinearly at each pixel of the image and coloured by the
// layer's ramp, as MapLibre draws the density into a texture of a quarter
// of the canvas's size and samples it with linear filtering. The cost is
// of the grid (a sixteenth of the image's pixels, times the kernel's
// width) and of one pass over the image, whatever the points. Up to the
// zoom the tiles thin points at, a dataset the web application draws from
// its tiles is weighed as its tiles' points are: by cells, each weighing
// style.HeatWeight of the points in it.
type heat struct {
	on     bool
	z      float64 // the image's zoom, MapLibre's
	radius float64 // the kernel's, device pixels
	x0, y0 float64 // the grid's corner (the clip box's), device pixels
	gw, gh int     // the grid's size, in its pixels (heatQ device pixels)
	cell   float64 // a thinning cell's side, device pixels; 0: not thinned
	cw, ch int     // the cells over the grid
	// weights are by grid pixel: the points weighed there.
	weights []float32
	// Thinned: by cell, its points, the grid pixel of its first point
	// (the least Position, as the tiles keep) and that position.
	counts   []float32
	first    []int32
	firstPos []int64
	// The density: along the rows, then along the columns.
	rows, density []float32
}

// heatQ is the side, in device pixels, of a pixel of the heatmap's grid.
const heatQ = 4

// zoom is MapLibre's zoom of the view: 512 CSS pixels are the world's
// width at zoom 0.
func (v *view) zoom() float64 { return math.Log2(360 * v.kx / v.scale / 512) }

// start readies the heatmap of a layer over the clip box when on (the
// layer asks for one, of points, at a zoom before the one where it is
// gone); tiled says the web application draws the dataset from its tiles.
func (h *heat) start(d *drawer, on, tiled bool) {
	h.on = on
	if !on {
		return
	}
	h.z = d.v.zoom()
	h.radius = style.HeatRadius(h.z) * d.v.scale
	h.x0, h.y0 = float64(d.clip[0]), float64(d.clip[1])
	w, ht := float64(d.clip[2]-d.clip[0]), float64(d.clip[3]-d.clip[1])
	h.gw, h.gh = int(math.Ceil(w/heatQ))+1, int(math.Ceil(ht/heatQ))+1
	h.weights = reuse(h.weights, h.gw*h.gh)
	h.cell = 0
	if tiled && math.Floor(h.z) <= style.HeatThinnedZoom {
		// The tiles of zoom floor(z), drawn at z; the cells are the
		// image's, not aligned with the tiles', so a point of a cell may
		// be weighed at another point of it than the tile's first (a few
		// pixels away: the same look, not the same pixels).
		h.cell = style.HeatCell * d.v.scale * math.Exp2(h.z-math.Floor(h.z))
		h.cw, h.ch = int(math.Ceil(w/h.cell))+1, int(math.Ceil(ht/h.cell))+1
		n := h.cw * h.ch
		h.counts, h.first, h.firstPos = reuse(h.counts, n), reuse(h.first, n), reuse(h.firstPos, n)
	}
}

// reuse is buf cleared at length n, its memory kept when it is enough.
func reuse[T any](buf []T, n int) []T {
	if cap(buf) >= n {
		buf = buf[:n]
		clear(buf)
		return buf
	}
	return make([]T, n)
}

// add counts a point of Position pos at device pixel x, y (within the
// clip box); thinned says it may be weighed with its cell's (a point: a
// multipoint's parts the tiles keep every one of).
func (h *heat) add(x, y float64, pos int64, thinned bool) {
	gx, gy := int((x-h.x0)/heatQ), int((y-h.y0)/heatQ)
	if gx < 0 || gy < 0 || gx >= h.gw || gy >= h.gh {
		return
	}
	g := gy*h.gw + gx
	if h.cell == 0 || !thinned {
		h.weights[g]++
		return
	}
	cx, cy := min(h.cw-1, int((x-h.x0)/h.cell)), min(h.ch-1, int((y-h.y0)/h.cell))
	i := cy*h.cw + cx
	if h.counts[i] == 0 || pos < h.firstPos[i] {
		h.first[i], h.firstPos[i] = int32(g), pos
	}
	h.counts[i]++
}

// draw spreads the points' weights by MapLibre's kernel on the grid,
// colours the density by the ramp of colour c and draws it over the image
// at opacity.
func (h *heat) draw(d *drawer, c int, opacity float64) error {
	opacity = min(1, opacity)
	if opacity <= 0 {
		return nil
	}
	// A cell's points weigh as the tile's point of them, at its first.
	for i, n := range h.counts {
		if err := d.step(1); err != nil {
			return err
		}
		if n > 0 {
			h.weights[h.first[i]] += float32(style.HeatWeight(float64(n)))
		}
	}
	// The kernel is a Gaussian, cut off at 1.5 radii: spread along the
	// rows from the weighed pixels only, then gathered along the columns
	// from the rows that have any.
	r := int(math.Ceil(1.5 * h.radius / heatQ))
	k := make([]float32, r+1)
	for i := range k {
		k[i] = float32(style.HeatKernel(1, 1, float64(i)*heatQ/h.radius) / style.HeatKernel(1, 1, 0))
	}
	scale := float32(style.HeatKernel(1, style.HeatIntensity(h.z), 0))
	gw, gh := h.gw, h.gh
	h.rows, h.density = reuse(h.rows, gw*gh), reuse(h.density, gw*gh)
	used := make([]bool, gh)
	for i, wt := range h.weights {
		if wt == 0 {
			continue
		}
		if err := d.step(2*r + 1); err != nil {
			return err
		}
		gx, gy := i%gw, i/gw
		row := h.rows[gy*gw : (gy+1)*gw]
		for x := max(0, gx-r); x <= min(gw-1, gx+r); x++ {
			row[x] += wt * k[absInt(x-gx)]
		}
		used[gy] = true
	}
	for gy := range gh {
		out := h.density[gy*gw : (gy+1)*gw]
		for sy := max(0, gy-r); sy <= min(gh-1, gy+r); sy++ {
			if !used[sy] {
				continue
			}
			if err := d.step(gw / 16); err != nil {
				return err
			}
			kv := k[absInt(sy-gy)] * scale
			for x, v := range h.rows[sy*gw : (sy+1)*gw] {
				out[x] += v * kv
			}
		}
	}
	W, H := d.v.w, d.v.h
	// The colours, as MapLibre's ramp of 256 (premultiplied), at opacity.
	var lut [256]color.RGBA
	ramp := style.HeatRamp(c)
	for i := range lut {
		t := float64(i) / 255
		j := 1
		for j < len(ramp)-1 && t > ramp[j].Density {
			j++
		}
		a, b := ramp[j-1], ramp[j]
		f := (t - a.Density) / (b.Density - a.Density)
		ch := func(shift int, s style.HeatStop) float64 { return float64(s.Color>>shift&0xff) * s.Alpha }
		px := func(pa, pb float64) uint8 { return uint8(math.Round((pa + (pb-pa)*f) * opacity)) }
		lut[i] = color.RGBA{px(ch(16, a), ch(16, b)), px(ch(8, a), ch(8, b)), px(ch(0, a), ch(0, b)),
			px(a.Alpha*255, b.Alpha*255)}
	}
	// Each pixel of the image samples the grid bilinearly at its centre.
	type tap struct {
		i0, i1 int
		f      float32
	}
	taps := func(n int, o float64, size int) []tap {
		out := make([]tap, n)
		for x := range out {
			u := (float64(x)+0.5-o)/heatQ - 0.5
			i := int(math.Floor(u))
			out[x] = tap{min(max(i, 0), size-1), min(max(i+1, 0), size-1), float32(u - math.Floor(u))}
		}
		return out
	}
	xs, ys := taps(W, h.x0, gw), taps(H, h.y0, gh)
	row := make([]uint8, 4*W)
	for y, ty := range ys {
		if err := d.step(W / 4); err != nil {
			return err
		}
		a, b := h.density[ty.i0*gw:(ty.i0+1)*gw], h.density[ty.i1*gw:(ty.i1+1)*gw]
		for x, tx := range xs {
			top := a[tx.i0] + (a[tx.i1]-a[tx.i0])*tx.f
			bottom := b[tx.i0] + (b[tx.i1]-b[tx.i0])*tx.f
			v := top + (bottom-top)*ty.f
			p := lut[int(math.Round(float64(min(max(v, 0), 1))*255))]
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = p.R, p.G, p.B, p.A
		}
		over(d.img.Pix[y*d.img.Stride:y*d.img.Stride+4*W], row)
	}
	return nil
}

func absInt(v int) int { return max(v, -v) }
