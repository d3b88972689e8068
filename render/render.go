// Package render draws a map — its layers in order, each with its styles —
// into an image, as the web application draws the same layers with
// MapLibre (web/src/lib/style.js: layerPlan, layerSpecs, byClass,
// classIndex; web/src/lib/layers.js: drawSymbol). It reads the features
// of each layer's dataset within the box drawn through a
// mapcommons.FeatureService and the classes of a classed layer through a
// style.Classifier; it knows nothing of HTTP, permissions or the stores.
//
// Each layer is drawn as MapLibre draws its layer specs, in their order:
// the polygons' fill, the lines' casing (lineStyle cased), the lines and
// polygons' outlines, then the points' symbols (and, for POINT, GRADUATED
// and PROPORTIONAL layers, a symbol at each polygon's centroid); a layer
// whose styles ask for a heatmap (density heatmap) has it under its points
// (heat.go), the points fading in as it fades out with the zoom. Sizes are
// CSS pixels, multiplied by the request's Scale.
//
// Not drawn: a url: layer (its data is not the store's), a temporal
// layer's time window (all its features are drawn), the web application's
// clusters (every point is drawn), and a box across the antimeridian (west
// must be less than east; features are not wrapped).
package render

import (
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"

	"mapcommons"
	"mapcommons/style"
)

// Bounds of a request.
const (
	MaxSide     = 4096        // CSS pixels, either side
	MaxScale    = 4           // device pixels per CSS pixel
	MaxPixels   = 4096 * 4096 // device pixels of the image (64 MiB of RGBA)
	MaxFeatures = 200_000     // features read per layer by default
	TileSize    = 256         // CSS pixels of a WebMercatorQuad tile
)

// CRSs a map is drawn in.
const (
	CRSMercator = "EPSG:3857" // spherical (web) Mercator; EPSG:3785 and EPSG:900913 are read as it
	CRSLonLat   = "EPSG:4326" // plate carrée: longitude and latitude as x and y
)

// Layer is one layer of a map with its dataset, which the caller has found
// and may show (nil: drawn as nothing).
type Layer struct {
	Layer   mapcommons.Layer
	Dataset *mapcommons.Dataset
	// Scan, when set, reads the layer's features in place of Draw's
	// FeatureService (a layer of data the stores do not keep: the built-in
	// basemap's countries).
	Scan func(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error
}

// LayersOf pairs a map's layers with their datasets, in the map's order:
// dataset gives the dataset of a finder:<id> source, or nil when there is
// none or the viewer may not see it (the layer is then drawn as nothing,
// as is a url: source's).
func LayersOf(m *mapcommons.Map, dataset func(id int64) *mapcommons.Dataset) []Layer {
	out := make([]Layer, len(m.Layers))
	for i, l := range m.Layers {
		out[i].Layer = l
		if id, ok := l.DatasetID(); ok {
			out[i].Dataset = dataset(id)
		}
	}
	return out
}

// CRSOf is the CRS a map's projection names (mapcommons.ProjectionLonLat,
// else Web Mercator).
func CRSOf(m *mapcommons.Map) string {
	if m.Projection == mapcommons.ProjectionLonLat {
		return CRSLonLat
	}
	return CRSMercator
}

// Request is what to draw: the layers, bottom first, over the box BBox
// (west, south, east, north in lon/lat; west < east: a box across the
// antimeridian is not drawn as one) in CRS, Width×Height CSS pixels at
// Scale device pixels each.
type Request struct {
	Layers []Layer
	BBox   [4]float64
	Width  int
	Height int
	Scale  float64 // 1 to MaxScale; 0 means 1
	CRS    string  // CRSMercator (the default, also for "") or CRSLonLat
	// Background fills the image before the layers; nil leaves it
	// transparent.
	Background color.Color
	// MaxFeatures bounds the features read per layer; 0 means MaxFeatures.
	MaxFeatures int
}

// Result is a drawn map and what was drawn of each layer.
type Result struct {
	Image  *image.RGBA
	Layers []LayerResult // one per request layer
}

// LayerResult says what a layer's drawing read and drew.
type LayerResult struct {
	Read   int  // features read from the store
	Points int  // point symbols drawn (after thinning)
	Capped bool // the layer has more features in the box than were read
}

// Capped tells whether any layer was cut at MaxFeatures.
func (r *Result) Capped() bool {
	for _, l := range r.Layers {
		if l.Capped {
			return true
		}
	}
	return false
}

// TileRequest is the request of tile x, y of zoom z of the WebMercatorQuad
// matrix set: its box in lon/lat, TileSize square, in CRSMercator.
func TileRequest(z, x, y int, scale float64, layers []Layer) Request {
	n := math.Exp2(float64(z))
	lon := func(x int) float64 { return float64(x)/n*360 - 180 }
	lat := func(y int) float64 { return math.Atan(math.Sinh(math.Pi*(1-2*float64(y)/n))) * 180 / math.Pi }
	return Request{Layers: layers, BBox: [4]float64{lon(x), lat(y + 1), lon(x + 1), lat(y)},
		Width: TileSize, Height: TileSize, Scale: scale, CRS: CRSMercator}
}

// EncodePNG writes img as a PNG: a drawn image (*image.RGBA) by this
// package's encoder (png.go), any other by image/png.
func EncodePNG(w io.Writer, img image.Image) error {
	if m, ok := img.(*image.RGBA); ok {
		return encodePNG(w, m)
	}
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	return enc.Encode(w, img)
}

// Draw draws req's visible layers in order. features gives the layers'
// features; classifier (nil: classed layers are drawn unclassed) their
// classes. It returns EINVALID for a request out of bounds, and ctx's
// error when ctx ends while it draws.
func Draw(ctx context.Context, features mapcommons.FeatureService, classifier *style.Classifier, req Request) (*Result, error) {
	v, err := newView(req)
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, v.w, v.h))
	if req.Background != nil {
		draw.Draw(img, img.Bounds(), image.NewUniform(req.Background), image.Point{}, draw.Src)
	}
	d := &drawer{ctx: ctx, features: features, classifier: classifier, v: v, img: img, max: req.MaxFeatures}
	if d.max <= 0 {
		d.max = MaxFeatures
	}
	res := &Result{Image: img, Layers: make([]LayerResult, len(req.Layers))}
	for i := range req.Layers {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := d.layer(&req.Layers[i], &res.Layers[i]); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// view is the projection of lon/lat onto the image's device pixels.
type view struct {
	w, h   int
	scale  float64
	lonLat bool
	// The box projected (x: degrees of longitude; y: degrees of latitude,
	// or Mercator's y in radians), and device pixels per unit.
	x0, y1 float64
	kx, ky float64
	bbox   [4]float64
}

const maxMercatorLat = 85.0511287798066

func newView(req Request) (*view, error) {
	invalid := func(format string, args ...any) error {
		return mapcommons.Errorf(mapcommons.EINVALID, format, args...)
	}
	s := req.Scale
	if s == 0 {
		s = 1
	}
	if !(s >= 1 && s <= MaxScale) {
		return nil, invalid("scale must be 1 to %d, not %g", MaxScale, req.Scale)
	}
	if req.Width < 1 || req.Height < 1 || req.Width > MaxSide || req.Height > MaxSide {
		return nil, invalid("an image is 1 to %d pixels wide and high, not %d×%d", MaxSide, req.Width, req.Height)
	}
	w, h := int(math.Round(float64(req.Width)*s)), int(math.Round(float64(req.Height)*s))
	if w*h > MaxPixels {
		return nil, invalid("%d×%d pixels at scale %g is %d×%d device pixels: at most %d", req.Width, req.Height, s, w, h, MaxPixels)
	}
	v := &view{w: w, h: h, scale: s, bbox: req.BBox}
	switch req.CRS {
	case "", CRSMercator, mapcommons.ProjectionMercator, "EPSG:900913":
	case CRSLonLat:
		v.lonLat = true
	default:
		return nil, invalid("a map is drawn in %s or %s, not %q", CRSMercator, CRSLonLat, req.CRS)
	}
	b := req.BBox
	for _, c := range b {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return nil, invalid("the box %v is not finite", b)
		}
	}
	if !(b[0] < b[2] && b[1] < b[3]) || b[0] < -180 || b[2] > 180 || b[1] < -90 || b[3] > 90 {
		return nil, invalid("the box %v is not west, south, east, north within -180, -90, 180, 90 with west < east and south < north", b)
	}
	x0, y0 := v.proj(b[0], b[1])
	x1, y1 := v.proj(b[2], b[3])
	if !(y1 > y0) {
		return nil, invalid("the box %v is empty in %s", b, req.CRS)
	}
	v.x0, v.y1 = x0, y1
	v.kx, v.ky = float64(w)/(x1-x0), float64(h)/(y1-y0)
	return v, nil
}

// proj projects lon/lat into the view's units.
func (v *view) proj(lon, lat float64) (float64, float64) {
	if v.lonLat {
		return lon, lat
	}
	lat = max(-maxMercatorLat, min(maxMercatorLat, lat))
	return lon, math.Log(math.Tan(math.Pi/4 + lat*math.Pi/360))
}

// unproj is proj's inverse.
func (v *view) unproj(x, y float64) (lon, lat float64) {
	if v.lonLat {
		return x, y
	}
	return x, (2*math.Atan(math.Exp(y)) - math.Pi/2) * 180 / math.Pi
}

// pixel is where lon/lat falls in device pixels (y down).
func (v *view) pixel(lon, lat float64) (float64, float64) {
	x, y := v.proj(lon, lat)
	return (x - v.x0) * v.kx, (v.y1 - y) * v.ky
}

// queryBox is the lon/lat box of the image grown by margin device pixels
// (a symbol's or a line's reach), within the world.
func (v *view) queryBox(margin float64) *mapcommons.BBox {
	w, n := v.unproj(v.x0-margin/v.kx, v.y1+margin/v.ky)
	e, s := v.unproj(v.x0+(float64(v.w)+margin)/v.kx, v.y1-(float64(v.h)+margin)/v.ky)
	if !v.lonLat {
		// Mercator draws what is nearer the poles at its edge.
		if s <= -maxMercatorLat+1e-9 {
			s = -90
		}
		if n >= maxMercatorLat-1e-9 {
			n = 90
		}
	}
	return &mapcommons.BBox{W: max(w, -180), S: max(s, -90), E: min(e, 180), N: min(n, 90)}
}
