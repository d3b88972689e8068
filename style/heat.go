package style

import "math"

// A heatmap of a layer's points (Styles.Density heatmap), as the web
// application draws it (web/src/lib/style.js: heatmapSpecs, heatRamp,
// heatWeight, heatFade), for the server's images to draw the same.

// HeatFade are the zooms over which a heatmap gives way to the layer's
// own symbols: from HeatFade[0] the symbols fade in, at HeatFade[1] the
// heatmap is gone.
var HeatFade = [2]float64{11, 13}

// HeatCell is the side, in CSS pixels, of the grid the vector tiles thin
// points on up to HeatThinnedZoom (package api's tileOptions: 64 of 4096
// on a 512-pixel tile), and HeatTiledMin the features past which the web
// application draws a dataset from the tiles (layers.js geojsonMax): an
// image weighs its points as the tiles' thinned ones weigh in MapLibre.
const (
	HeatCell        = 8
	HeatThinnedZoom = 8
	HeatTiledMin    = 5000
)

// heatGauss is MapLibre's heatmap kernel's factor (1/√(2π)): a point of
// weight 1 at intensity 1 gives this density at its centre.
const heatGauss = 0.3989422804014327

// interp is MapLibre's ["interpolate", ["linear"], x, stops...] of
// numbers: clamped to the first and last stops.
func interp(x float64, stops ...float64) float64 {
	if x <= stops[0] {
		return stops[1]
	}
	for i := 2; i < len(stops); i += 2 {
		if x <= stops[i] {
			return stops[i-1] + (stops[i+1]-stops[i-1])*(x-stops[i-2])/(stops[i]-stops[i-2])
		}
	}
	return stops[len(stops)-1]
}

// The stops (input, value, input, value, …) of a heatmap's weight by the
// points a point stands for, of its intensity by zoom, and of its radius
// in CSS pixels by zoom: the images' functions below and the MapLibre
// styles' expressions (maplibre.go) are made of them.
var (
	heatWeightStops    = []float64{1, 1, 10, 3, 100, 10, 1000, 30, 10000, 60}
	heatIntensityStops = []float64{0, 0.4, HeatFade[1], 1.2}
	heatRadiusStops    = []float64{0, 6, 6, 14, HeatFade[1], 28}
)

// HeatWeight is how much a point standing for n points weighs (heatWeight:
// about the square root of n).
func HeatWeight(n float64) float64 { return interp(max(n, 1), heatWeightStops...) }

// HeatIntensity is the heatmap's intensity at zoom z.
func HeatIntensity(z float64) float64 { return interp(z, heatIntensityStops...) }

// HeatRadius is the kernel's radius in CSS pixels at zoom z.
func HeatRadius(z float64) float64 { return interp(z, heatRadiusStops...) }

// HeatOpacity is the part of the layer's opacity the heatmap has at zoom z
// (1 up to HeatFade[0], 0 from HeatFade[1]); the symbols have the rest.
func HeatOpacity(z float64) float64 { return interp(z, HeatFade[0], 1, HeatFade[1], 0) }

// HeatKernel is the density a point of weight w gives at d kernel radii
// from it, at intensity i (MapLibre's heatmap shader).
func HeatKernel(w, i, d float64) float64 { return w * i * heatGauss * math.Exp(-4.5*d*d) }

// HeatStop is a stop of a heatmap's colours: a density and a colour
// (0xRRGGBB) with its alpha.
type HeatStop struct {
	Density float64
	Color   int
	Alpha   float64
}

// HeatRamp is the colours of a heatmap in the family of colour c, by
// density (heatRamp): transparent, a pale tint, the colour, then a darker
// one where points are densest.
func HeatRamp(c int) []HeatStop {
	return []HeatStop{{0, 0, 0}, {0.1, mix(c, 0xffffff, 0.7), 0.35}, {0.35, mix(c, 0xffffff, 0.35), 0.65},
		{0.65, c, 0.85}, {1, mix(c, 0x000000, 0.45), 0.95}}
}

// mix is colour c moved a fraction t towards colour to (style.js's mix).
func mix(c, to int, t float64) int {
	out := 0
	for shift := 16; shift >= 0; shift -= 8 {
		p, q := float64(c>>shift&0xff), float64(to>>shift&0xff)
		out |= int(math.Round(p+(q-p)*t)) << shift
	}
	return out
}
