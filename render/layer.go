package render

import (
	"cmp"
	"context"
	"errors"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/image/vector"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
	"mapcommons/style"
)

// plan is how a layer is drawn: its look (style.LookOf, the one home of
// the styling model) in this image's device pixels and colours.
type plan struct {
	*style.Look
	classTyp, sizeTyp mapcommons.AttrType

	fill       []color.NRGBA64 // by class; one for an unclassed layer
	drawFill   bool
	stroke     color.NRGBA64
	caseColor  color.NRGBA64
	drawStroke bool
	strokeHalf float32 // half the line's width, device pixels
	caseHalf   float32
	dash       [2]float32 // on, off (device pixels); zero: solid
	icon       *icon      // the one symbol of a layer neither classed nor sized, once made
	iconMade   bool
	// centroids is the plan of the symbols at polygons' centroids when
	// they differ from the points' (a heatmap fades the points only, as
	// the web application's).
	centroids *plan
}

func nrgba(c int, opacity float64) color.NRGBA64 {
	a := uint16(math.Round(max(0, min(1, opacity)) * 0xffff))
	return color.NRGBA64{R: uint16(c>>16&0xff) * 0x101, G: uint16(c>>8&0xff) * 0x101, B: uint16(c&0xff) * 0x101, A: a}
}

// newPlan classes a layer (CHOROPLETH, GRADUATED) and takes its look.
func (d *drawer) newPlan(l *mapcommons.Layer, ds *mapcommons.Dataset) (*plan, error) {
	k, err := d.classifier.Look(d.ctx, l, ds)
	if err != nil {
		return nil, err
	}
	p := &plan{Look: k}
	if k.ClassCol >= 0 {
		p.classTyp = ds.Attributes[k.ClassCol].Type
	}
	if k.SizeCol >= 0 {
		p.sizeTyp = ds.Attributes[k.SizeCol].Type
	}
	for _, c := range k.Fill {
		p.fill = append(p.fill, nrgba(c, k.FillOpacity))
	}
	p.drawFill = k.DrawsFill()
	p.stroke = nrgba(k.Stroke, k.StrokeOpacity)
	p.strokeHalf = float32(k.StrokeWidth * d.v.scale / 2)
	p.drawStroke = k.DrawsStroke()
	if k.Cased {
		p.caseColor = nrgba(0xffffff, k.StrokeOpacity)
		p.caseHalf = float32(k.CaseWidth * d.v.scale / 2)
	}
	p.dash = [2]float32{float32(k.Dash[0] * d.v.scale), float32(k.Dash[1] * d.v.scale)}
	return p, nil
}

// iconFor is the symbol of a feature: its class's colour and size
// (GRADUATED) or its value's size (PROPORTIONAL). nil: nothing to draw.
func (d *drawer) iconFor(p *plan, f *mapcommons.Feature) *icon {
	if p.Classes == nil && p.SizeCol < 0 { // one symbol for every feature
		if !p.iconMade {
			p.icon, p.iconMade = d.symbol(p, p.IconColor, p.IconScale), true
		}
		return p.icon
	}
	colour, size := p.IconColor, p.IconScale
	if p.Classes != nil {
		colour, size = p.ClassSymbol(p.ClassOf(style.NumberAt(f, p.ClassCol, p.classTyp)))
	}
	if p.SizeCol >= 0 {
		size = p.ProportionalSize(toNumber(f, p.SizeCol, p.sizeTyp))
	}
	return d.symbol(p, colour, size)
}

// symbol is the layer's symbol in a colour and icon-size; nil: nothing to
// draw.
func (d *drawer) symbol(p *plan, colour int, size float64) *icon {
	if !(size > 0) || p.IconOpacity <= 0 || p.SizeGone {
		return nil
	}
	return d.icons.get(iconKey{symbol: p.Symbol, color: colour, shadow: p.Shadow,
		size: quantize(size * d.v.scale), opacity: uint16(math.Round(min(1, p.IconOpacity) * 0xffff))})
}

// toNumber is MapLibre's ["to-number", value, 0] of a feature's attribute.
func toNumber(f *mapcommons.Feature, col int, t mapcommons.AttrType) float64 {
	if t.Numeric() {
		v := style.NumberAt(f, col, t)
		if math.IsNaN(v) {
			return 0
		}
		return v
	}
	var v any
	if f.Row != nil {
		if f.Row.IsNull(col) {
			return 0
		}
		switch t {
		case mapcommons.AttrBoolean:
			v = f.Row.Bool(col)
		default:
			v = string(f.Row.Bytes(col))
		}
	} else if col < len(f.Values) {
		v = f.Values[col]
	}
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
	case string:
		if n, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil && !math.IsNaN(n) {
			return n
		}
	}
	return 0
}

// fillIndex is the fill colour of a feature (an index into plan.fill), -1
// for none.
func (p *plan) fillIndex(f *mapcommons.Feature) int {
	if !p.FillNone {
		return 0
	}
	return p.ClassOf(style.NumberAt(f, p.ClassCol, p.classTyp))
}

// drawer draws the layers of one request.
type drawer struct {
	ctx        context.Context
	features   mapcommons.FeatureService
	classifier *style.Classifier
	v          *view
	img        *image.RGBA
	max        int
	steps      int
	z          vector.Rasterizer
	mask       image.Alpha
	icons      iconCache
	grid       []int32 // point thinning: index+1 of the point drawn at a pixel of the clip box
	gridW      int     // the clip box's width in pixels, the grid's row
	gridReady  bool    // grid is this layer's
	scratch    []float32
	clipA      []float32
	clipB      []float32
	dashes     []float32
	stroker    stroker
	cellStart  []int32
	cellList   []int32
	cellFill   []int32
	stack      stack // a layer of many points, drawn front to back
	heat       heat  // a layer's heatmap
	inMulti    bool  // the geometry read is a part of a multipoint's

	// The layer being read, in device pixels (clipped to clip).
	pts    []float32
	paths  []path
	fills  []group
	lines  []group
	points []point
	cents  []point
	clip   [4]float32
	rings  [][]float64
}

// path is a run of pts: a ring (closed) or a line, from distance dist
// along its line (for dashes).
type path struct {
	off, n int32
	closed bool
	part   bool // the first ring of a polygon of a multipolygon
	dist   float32
}

// group is the paths of one feature: filled together (a polygon's rings,
// holes reversed) or stroked together.
type group struct {
	p0, p1 int32
	fill   int32
}

// point is a symbol at a pixel.
type point struct {
	x, y int32
	ic   *icon
	pos  int64 // the feature's Position: points are drawn in its order
}

// step counts work and checks ctx every so often.
func (d *drawer) step(n int) error {
	d.steps += n
	if d.steps >= 1<<12 {
		d.steps = 0
		return d.ctx.Err()
	}
	return nil
}

// layer reads and draws one layer.
func (d *drawer) layer(l *Layer, res *LayerResult) error {
	if !l.Layer.Visible || l.Layer.Opacity <= 0 || l.Dataset == nil {
		return nil
	}
	ds := l.Dataset
	p, err := d.newPlan(&l.Layer, ds)
	if err != nil {
		return err
	}
	// What reaches into the image from outside it: a symbol, a line.
	reach := style.IconPixels * 0.5 * d.v.scale * p.IconScale * style.ProportionalFactor
	reach = max(reach, float64(max(p.strokeHalf, p.caseHalf))*2)
	// A heatmap: the points' kernel reaches into the image too; the
	// symbols fade in as it fades out (none below style.HeatFade[0]).
	heatOpacity := 0.0
	if p.Heatmap && (ds.GeometryMask == 0 || ds.GeometryMask&(1<<wkb.Point|1<<wkb.MultiPoint) != 0) {
		if z := d.v.zoom(); z < style.HeatFade[1] {
			heatOpacity = min(1, p.IconOpacity) * style.HeatOpacity(z)
			if heatOpacity > 0 {
				reach = max(reach, 1.5*style.HeatRadius(z)*d.v.scale)
			}
			// The points' symbols fade in as the heatmap fades out (none
			// below style.HeatFade[0]); the centroids' do not.
			cp := *p
			k := *p.Look
			k.IconOpacity *= 1 - style.HeatOpacity(z)
			p.Look, p.centroids = &k, &cp
		}
	}
	margin := float32(reach + 2)
	d.clip = [4]float32{-margin, -margin, float32(d.v.w) + margin, float32(d.v.h) + margin}
	d.pts, d.paths, d.fills, d.lines, d.points, d.cents = d.pts[:0], d.paths[:0], d.fills[:0], d.lines[:0], d.points[:0], d.cents[:0]
	d.gridReady = false
	d.heat.start(d, heatOpacity > 0, ds.FeatureCount > style.HeatTiledMin)

	q := &mapcommons.FeatureQuery{BBox: d.v.queryBox(reach + 2), Limit: int64(d.max) + 1}
	// A layer of points is thinned to one per pixel, its memory bounded
	// by the image's: all of them are read (the query's deadline bounds
	// the time), in any order the store reads fastest, and drawn in the
	// order of their positions.
	// When the image's box holds much of the dataset, a scan of every
	// point beats the index (those outside are dropped by addPoint).
	points := ds.OnlyPoints() && l.Scan == nil
	if points {
		q.Limit, q.AnyOrder = -1, true
		if b := q.BBox; b.W <= b.E && mapcommons.ScanBeatsIndex(wkb.Rect{MinX: b.W, MinY: b.S, MaxX: b.E, MaxY: b.N}, ds.Extent) {
			q.BBox = nil
		}
	}
	if p.Classes != nil || p.SizeCol >= 0 {
		q.Lazy = true
	} else {
		q.NoValues = true
	}
	scan := func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
		return d.features.ScanFeatures(ctx, ds.ID, q, fn)
	}
	if l.Scan != nil {
		scan = l.Scan
	}
	err = scan(d.ctx, q, func(f *mapcommons.Feature) error {
		if err := d.step(16); err != nil { // the deadline, every 256 features
			return err
		}
		if res.Read == d.max && !points {
			res.Capped = true
			return errCapped
		}
		res.Read++
		return d.feature(p, f)
	})
	if err != nil && err != errCapped {
		return err
	}
	// MapLibre's layers of it, in order.
	if p.drawFill {
		for _, g := range d.fills {
			if g.fill < 0 {
				continue
			}
			if err := d.fillGroup(g, p.fill[g.fill]); err != nil {
				return err
			}
		}
	}
	if p.Cased {
		for _, g := range d.lines {
			if err := d.strokeGroup(g, p.caseHalf, [2]float32{}, p.caseColor); err != nil {
				return err
			}
		}
	}
	if p.drawStroke {
		for _, g := range d.lines {
			if err := d.strokeGroup(g, p.strokeHalf, p.dash, p.stroke); err != nil {
				return err
			}
		}
	}
	if d.heat.on {
		if err := d.heat.draw(d, p.IconColor, heatOpacity); err != nil {
			return err
		}
	}
	slices.SortFunc(d.points, func(a, b point) int { return cmp.Compare(a.pos, b.pos) })
	lists := [][]point{d.points, d.cents}
	if b := d.img.Bounds(); float64(len(d.points)) >= stackMin*float64(b.Dx()*b.Dy()) {
		// Many points: front to back, those hidden skipped.
		d.stack.reset(b)
		for i := len(d.points) - 1; i >= 0; i-- {
			if err := d.step(4); err != nil {
				return err
			}
			pt := d.points[i]
			d.stack.under(pt.ic, int(pt.x), int(pt.y))
			res.Points++
		}
		d.stack.over(d.img)
		lists = lists[1:]
	}
	for _, list := range lists {
		for _, pt := range list {
			if err := d.step(16); err != nil {
				return err
			}
			pt.ic.draw(d.img, int(pt.x), int(pt.y))
			res.Points++
		}
	}
	return nil
}

var errCapped = errors.New("render: capped")

// feature reads one feature's geometry into the layer's lists.
func (d *drawer) feature(p *plan, f *mapcommons.Feature) error {
	if x, y, ok := wkb.StoredPoint(f.Geometry); ok {
		d.addPoint(p, f, x, y, false)
		return nil
	}
	if len(f.Geometry) == 0 {
		return nil
	}
	g, err := wkb.Decode(f.Geometry)
	if err != nil {
		return nil // not drawable: nothing of it is drawn
	}
	return d.geom(p, f, &g)
}

func (d *drawer) geom(p *plan, f *mapcommons.Feature, g *wkb.Geom) error {
	switch g.Type {
	case wkb.Point:
		if len(g.Coords) >= 2 {
			d.addPoint(p, f, g.Coords[0], g.Coords[1], false)
		}
	case wkb.LineString:
		p0 := int32(len(d.paths))
		if err := d.addLine(g.Coords); err != nil {
			return err
		}
		d.lines = append(d.lines, group{p0: p0, p1: int32(len(d.paths))})
	case wkb.Polygon:
		return d.addPolygons(p, f, [][][]float64{g.Rings})
	case wkb.MultiPolygon:
		polys := make([][][]float64, 0, len(g.Parts))
		for i := range g.Parts {
			if g.Parts[i].Type == wkb.Polygon {
				polys = append(polys, g.Parts[i].Rings)
			}
		}
		return d.addPolygons(p, f, polys)
	default: // multipoints, multilines, collections
		multi := d.inMulti
		d.inMulti = multi || g.Type == wkb.MultiPoint
		defer func() { d.inMulti = multi }()
		for i := range g.Parts {
			if err := d.geom(p, f, &g.Parts[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// addPoint adds a symbol at lon/lat, thinned to one per pixel: a later
// point at the same pixel takes the earlier one's place.
func (d *drawer) addPoint(p *plan, f *mapcommons.Feature, lon, lat float64, centroid bool) {
	x, y := d.v.pixel(lon, lat)
	if !(x > float64(d.clip[0]) && x < float64(d.clip[2]) && y > float64(d.clip[1]) && y < float64(d.clip[3])) {
		return
	}
	if d.heat.on && !centroid {
		d.heat.add(x, y, f.Position, !d.inMulti)
	}
	if centroid && p.centroids != nil {
		p = p.centroids
	}
	ic := d.iconFor(p, f)
	if ic == nil {
		return
	}
	pt := point{x: int32(math.Floor(x)), y: int32(math.Floor(y)), ic: ic, pos: f.Position}
	if centroid {
		d.cents = append(d.cents, pt)
		return
	}
	// One point per pixel of the clip box: the last by position, which
	// covers the others there.
	x0, y0 := int32(math.Floor(float64(d.clip[0]))), int32(math.Floor(float64(d.clip[1])))
	if !d.gridReady {
		d.gridW = int(math.Ceil(float64(d.clip[2]))) - int(x0) + 1
		n := d.gridW * (int(math.Ceil(float64(d.clip[3]))) - int(y0) + 1)
		if len(d.grid) != n {
			d.grid = make([]int32, n)
		} else {
			clear(d.grid)
		}
		d.gridReady = true
	}
	cell := int(pt.y-y0)*d.gridW + int(pt.x-x0)
	if cell < 0 || cell >= len(d.grid) {
		d.points = append(d.points, pt)
		return
	}
	if i := d.grid[cell]; i > 0 {
		if pt.pos >= d.points[i-1].pos {
			d.points[i-1] = pt
		}
		return
	}
	d.points = append(d.points, pt)
	d.grid[cell] = int32(len(d.points))
}

// addLine adds a line, clipped: a path for each run of it inside the clip
// box, each from its distance along the line.
func (d *drawer) addLine(xy []float64) error {
	var dist float64
	var px, py float64
	open := false
	for i := 0; i+1 < len(xy); i += 2 {
		if err := d.step(1); err != nil {
			return err
		}
		x, y := d.v.pixel(xy[i], xy[i+1])
		if i == 0 {
			px, py = x, y
			continue
		}
		// Segment (px,py)-(x,y), clipped by Liang–Barsky.
		seg := math.Hypot(x-px, y-py)
		t0, t1, ok := spatial.ClipSegment(px, py, x, y, float64(d.clip[0]), float64(d.clip[1]), float64(d.clip[2]), float64(d.clip[3]))
		if ok {
			ax, ay := px+(x-px)*t0, py+(y-py)*t0
			bx, by := px+(x-px)*t1, py+(y-py)*t1
			if !open || t0 > 0 {
				d.paths = append(d.paths, path{off: int32(len(d.pts)), n: 1, dist: float32(dist + seg*t0)})
				d.pts = append(d.pts, float32(ax), float32(ay))
				open = true
			}
			last := &d.paths[len(d.paths)-1]
			n := len(d.pts)
			if dx, dy := float32(bx)-d.pts[n-2], float32(by)-d.pts[n-1]; dx*dx+dy*dy > 0.0625 || t1 < 1 {
				d.pts = append(d.pts, float32(bx), float32(by))
			}
			last.n = int32(len(d.pts))/2 - last.off/2
			if t1 < 1 {
				open = false
			}
		} else {
			open = false
		}
		dist += seg
		px, py = x, y
	}
	return nil
}

// addPolygons adds a polygon or multipolygon: its rings, clipped, shells
// one way round and holes the other (the rasterizer's winding rule is
// nonzero), as one fill and one outline; and its centroid's symbol when
// the layer draws one.
func (d *drawer) addPolygons(p *plan, f *mapcommons.Feature, polys [][][]float64) error {
	p0 := int32(len(d.paths))
	for _, rings := range polys {
		first := len(d.paths)
		for k, ring := range rings {
			if err := d.addRing(ring, k > 0); err != nil {
				return err
			}
		}
		if first < len(d.paths) {
			d.paths[first].part = true
		}
	}
	p1 := int32(len(d.paths))
	if p1 > p0 {
		g := group{p0: p0, p1: p1, fill: int32(p.fillIndex(f))}
		d.fills = append(d.fills, g)
		d.lines = append(d.lines, g)
	}
	if p.Centroids {
		if x, y, ok := centroid(polys); ok {
			d.addPoint(p, f, x, y, true)
		}
	}
	return nil
}

// addRing projects a ring, drops vertices within a quarter pixel of the
// last, clips it to the clip box (Sutherland–Hodgman) and orients it.
func (d *drawer) addRing(xy []float64, hole bool) error {
	buf := d.scratch[:0]
	for i := 0; i+1 < len(xy); i += 2 {
		if err := d.step(1); err != nil {
			return err
		}
		x, y := d.v.pixel(xy[i], xy[i+1])
		if n := len(buf); n >= 2 {
			dx, dy := float32(x)-buf[n-2], float32(y)-buf[n-1]
			if dx*dx+dy*dy < 0.0625 {
				continue
			}
		}
		buf = append(buf, clampF(x), clampF(y))
	}
	if n := len(buf); n >= 4 && buf[0] == buf[n-2] && buf[1] == buf[n-1] {
		buf = buf[:n-2]
	}
	off := len(d.pts)
	d.scratch = buf
	d.pts = d.clipRing(d.pts, buf, d.clip)
	n := (len(d.pts) - off) / 2
	if n < 3 {
		d.pts = d.pts[:off]
		return nil
	}
	r := d.pts[off:]
	if a := area(r); a == 0 {
		d.pts = d.pts[:off]
		return nil
	} else if (a < 0) != hole {
		reverse(r)
	}
	d.paths = append(d.paths, path{off: int32(off), n: int32(n), closed: true})
	return nil
}

// clampF keeps a pixel coordinate within float32's comfortable range
// (clipping makes the rest exact).
func clampF(v float64) float32 { return float32(max(-1e7, min(1e7, v))) }

// clipRing appends ring (flat x,y) clipped to box c to dst
// (Sutherland–Hodgman, which keeps the ring's orientation).
func (d *drawer) clipRing(dst, ring []float32, c [4]float32) []float32 {
	in := ring
	bufs := [2][]float32{d.clipA[:0], d.clipB[:0]}
	for edge := range 4 {
		out := bufs[edge%2][:0]
		n := len(in) / 2
		if n == 0 {
			break
		}
		inside := func(x, y float32) bool {
			switch edge {
			case 0:
				return x >= c[0]
			case 1:
				return x <= c[2]
			case 2:
				return y >= c[1]
			}
			return y <= c[3]
		}
		px, py := in[2*n-2], in[2*n-1]
		pin := inside(px, py)
		for i := range n {
			x, y := in[2*i], in[2*i+1]
			xin := inside(x, y)
			if xin != pin {
				var t float32
				switch edge {
				case 0:
					t = (c[0] - px) / (x - px)
				case 1:
					t = (c[2] - px) / (x - px)
				case 2:
					t = (c[1] - py) / (y - py)
				default:
					t = (c[3] - py) / (y - py)
				}
				out = append(out, px+(x-px)*t, py+(y-py)*t)
			}
			if xin {
				out = append(out, x, y)
			}
			px, py, pin = x, y, xin
		}
		bufs[edge%2] = out
		in = out
	}
	d.clipA, d.clipB = bufs[0], bufs[1]
	return append(dst, in...)
}

// area is twice the signed area of a ring (flat x,y).
func area(r []float32) float64 {
	var a float64
	n := len(r) / 2
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		a += float64(r[2*j])*float64(r[2*i+1]) - float64(r[2*i])*float64(r[2*j+1])
	}
	return a
}

func reverse(r []float32) {
	n := len(r) / 2
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		r[2*i], r[2*j] = r[2*j], r[2*i]
		r[2*i+1], r[2*j+1] = r[2*j+1], r[2*i+1]
	}
}

// centroid is style.js's centroid: the centre of the shell of the largest
// part, in lon/lat.
func centroid(polys [][][]float64) (float64, float64, bool) {
	best := -1.0
	var bx, by float64
	found := false
	for _, rings := range polys {
		if len(rings) == 0 {
			continue
		}
		ring := rings[0]
		n := len(ring) / 2
		var a, x, y float64
		for i, j := 0, n-1; i < n; j, i = i, i+1 {
			f := ring[2*j]*ring[2*i+1] - ring[2*i]*ring[2*j+1]
			a += f
			x += (ring[2*j] + ring[2*i]) * f
			y += (ring[2*j+1] + ring[2*i+1]) * f
		}
		if math.Abs(a) > best && a != 0 {
			best = math.Abs(a)
			bx, by = x/(3*a), y/(3*a)
			found = true
		}
	}
	if !found {
		for _, rings := range polys {
			if len(rings) > 0 && len(rings[0]) >= 2 {
				return rings[0][0], rings[0][1], true
			}
		}
	}
	return bx, by, found
}
