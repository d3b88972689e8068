package render

import (
	"image/color"
	"math"

	"mapcommons/style"
)

// heat is a layer's heatmap being read (style.Look's Heatmap), as MapLibre
// draws the web application's (web/src/lib/style.js heatmapSpecs): the
// weight of the points on a grid of device pixels over the clip box, then
// spread by MapLibre's kernel and coloured by the layer's ramp. Up to the
// zoom the tiles thin points at, a dataset the web application draws from
// its tiles is weighed as its tiles' points are: by cells, each weighing
// style.HeatWeight of the points in it.
type heat struct {
	on     bool
	z      float64 // the image's zoom, MapLibre's
	radius float64 // the kernel's, device pixels
	x0, y0 int     // the grid's corner (the clip box's), device pixels
	w, h   int     // the grid's size, device pixels
	cell   float64 // a thinning cell's side, device pixels; 0: not thinned
	cw, ch int     // the cells of the grid
	counts []float32
	// Thinned: by cell, the grid pixel of its first point (the least
	// Position, as the tiles keep) and that position.
	first    []int32
	firstPos []int64
}

// zoom is MapLibre's zoom of the view: 512 CSS pixels are the world's
// width at zoom 0.
func (v *view) zoom() float64 { return math.Log2(360 * v.kx / v.scale / 512) }

// start readies the heatmap of a layer of p over the clip box: on when
// the layer asks for one and the zoom is below the one where it is gone;
// tiled says the web application draws the dataset from its tiles.
func (h *heat) start(d *drawer, p *plan, tiled bool) {
	h.on = p.Heatmap && d.v.zoom() < style.HeatFade[1]
	if !h.on {
		return
	}
	h.z = d.v.zoom()
	h.radius = style.HeatRadius(h.z) * d.v.scale
	h.x0, h.y0 = int(math.Floor(float64(d.clip[0]))), int(math.Floor(float64(d.clip[1])))
	h.w, h.h = int(math.Ceil(float64(d.clip[2])))-h.x0+1, int(math.Ceil(float64(d.clip[3])))-h.y0+1
	h.cell, h.cw, h.ch = 0, h.w, h.h
	if tiled && math.Floor(h.z) <= style.HeatThinnedZoom {
		// The tiles of zoom floor(z), drawn at z; the cells are the
		// image's, not aligned with the tiles', so a point of a cell may
		// be weighed at another point of it than the tile's first (a few
		// pixels away: the same look, not the same pixels).
		h.cell = style.HeatCell * d.v.scale * math.Exp2(h.z-math.Floor(h.z))
		h.cw, h.ch = int(math.Ceil(float64(h.w)/h.cell)), int(math.Ceil(float64(h.h)/h.cell))
	}
	n := h.cw * h.ch
	h.counts = reuse(h.counts, n)
	if h.cell > 0 {
		h.first, h.firstPos = reuse(h.first, n), reuse(h.firstPos, n)
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
// clip box).
func (h *heat) add(x, y float64, pos int64) {
	px, py := int(math.Floor(x))-h.x0, int(math.Floor(y))-h.y0
	if px < 0 || py < 0 || px >= h.w || py >= h.h {
		return
	}
	if h.cell == 0 {
		h.counts[py*h.w+px]++
		return
	}
	cx, cy := min(h.cw-1, int(float64(px)/h.cell)), min(h.ch-1, int(float64(py)/h.cell))
	i := cy*h.cw + cx
	if h.counts[i] == 0 || pos < h.firstPos[i] {
		h.first[i], h.firstPos[i] = int32(py*h.w+px), pos
	}
	h.counts[i]++
}

// draw spreads the points' weights by MapLibre's kernel over the image,
// colours the density by the ramp of colour c and draws it over the image
// at opacity.
func (h *heat) draw(d *drawer, c int, opacity float64) error {
	if opacity <= 0 {
		return nil
	}
	W, H := d.v.w, d.v.h
	// The kernel is a Gaussian: spread along the rows from the weighed
	// pixels only, then gathered along the columns row by row of the
	// image (memory: the grid's rows at the image's width).
	r := int(math.Ceil(1.5 * h.radius))
	k := make([]float32, r+1)
	for i := range k {
		k[i] = float32(style.HeatKernel(1, style.HeatIntensity(h.z), float64(i)/h.radius))
	}
	rows := make([]float32, W*h.h) // by image column, grid row
	rowUsed := make([]bool, h.h)
	spread := func(gx, gy int, wt float32) {
		x := gx + h.x0
		for ix := max(0, x-r); ix <= min(W-1, x+r); ix++ {
			rows[gy*W+ix] += wt * k[absInt(ix-x)]
		}
		rowUsed[gy] = true
	}
	for i, n := range h.counts {
		if err := d.step(1); err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		if h.cell > 0 {
			// A cell's points weigh as the tile's point of them, at its
			// first point.
			p := int(h.first[i])
			spread(p%h.w, p/h.w, float32(style.HeatWeight(float64(n))))
		} else {
			spread(i%h.w, i/h.w, n)
		}
	}
	density := make([]float32, W)
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
	row := make([]uint8, 4*W)
	for y := 0; y < H; y++ {
		if err := d.step(W / 4); err != nil {
			return err
		}
		clear(density)
		for gy := max(0, y-h.y0-r); gy <= min(h.h-1, y-h.y0+r); gy++ {
			if !rowUsed[gy] {
				continue
			}
			kv := k[absInt(gy+h.y0-y)]
			for x, v := range rows[gy*W : (gy+1)*W] {
				density[x] += v * kv
			}
		}
		for x, v := range density {
			p := lut[int(math.Round(float64(min(max(v, 0), 1))*255))]
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = p.R, p.G, p.B, p.A
		}
		over(d.img.Pix[y*d.img.Stride:y*d.img.Stride+4*W], row)
	}
	return nil
}

func absInt(v int) int { return max(v, -v) }
