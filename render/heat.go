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
		// The tiles of zoom floor(z), drawn at z.
		h.cell = style.HeatCell * d.v.scale * math.Exp2(h.z-math.Floor(h.z))
		h.cw, h.ch = int(math.Ceil(float64(h.w)/h.cell)), int(math.Ceil(float64(h.h)/h.cell))
	}
	n := h.cw * h.ch
	if cap(h.counts) >= n {
		h.counts = h.counts[:n]
		clear(h.counts)
	} else {
		h.counts = make([]float32, n)
	}
}

// add counts a point at device pixel x, y (within the clip box).
func (h *heat) add(x, y float64) {
	cx, cy := int(math.Floor(x))-h.x0, int(math.Floor(y))-h.y0
	if h.cell > 0 {
		cx, cy = int((x-float64(h.x0))/h.cell), int((y-float64(h.y0))/h.cell)
	}
	if cx >= 0 && cy >= 0 && cx < h.cw && cy < h.ch {
		h.counts[cy*h.cw+cx]++
	}
}

// draw spreads the points' weights by MapLibre's kernel over the image,
// colours the density by the ramp of colour c and draws it over the image
// at opacity.
func (h *heat) draw(d *drawer, c int, opacity float64) error {
	if opacity <= 0 {
		return nil
	}
	W, H := d.v.w, d.v.h
	// The weights, by pixel of the grid.
	weights := make([]float32, h.w*h.h)
	if h.cell > 0 {
		for i, n := range h.counts {
			if n == 0 {
				continue
			}
			x := int(math.Min(float64(h.w-1), (float64(i%h.cw)+0.5)*h.cell))
			y := int(math.Min(float64(h.h-1), (float64(i/h.cw)+0.5)*h.cell))
			weights[y*h.w+x] += float32(style.HeatWeight(float64(n)))
		}
	} else {
		copy(weights, h.counts)
	}
	// The kernel is a Gaussian: spread along rows, then along columns,
	// from the weighed pixels only.
	r := int(math.Ceil(1.5 * h.radius))
	k := make([]float32, r+1)
	for i := range k {
		k[i] = float32(style.HeatKernel(1, style.HeatIntensity(h.z), float64(i)/h.radius))
	}
	rows := make([]float32, W*h.h) // by image column, grid row
	rowUsed := make([]bool, h.h)
	for y := 0; y < h.h; y++ {
		if err := d.step(h.w / 16); err != nil {
			return err
		}
		for gx, wt := range weights[y*h.w : (y+1)*h.w] {
			if wt == 0 {
				continue
			}
			x := gx + h.x0
			for ix := max(0, x-r); ix <= min(W-1, x+r); ix++ {
				rows[y*W+ix] += wt * k[absInt(ix-x)]
				rowUsed[y] = true
			}
		}
	}
	density := make([]float32, W*H)
	for gy := 0; gy < h.h; gy++ {
		if !rowUsed[gy] {
			continue
		}
		if err := d.step(W / 4); err != nil {
			return err
		}
		y := gy + h.y0
		for iy := max(0, y-r); iy <= min(H-1, y+r); iy++ {
			kv := k[absInt(iy-y)]
			out, in := density[iy*W:(iy+1)*W], rows[gy*W:(gy+1)*W]
			for x, v := range in {
				out[x] += v * kv
			}
		}
	}
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
		if err := d.step(W / 16); err != nil {
			return err
		}
		for x, v := range density[y*W : (y+1)*W] {
			p := lut[int(math.Round(float64(min(max(v, 0), 1))*255))]
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = p.R, p.G, p.B, p.A
		}
		over(d.img.Pix[y*d.img.Stride:y*d.img.Stride+4*W], row)
	}
	return nil
}

func absInt(v int) int { return max(v, -v) }
