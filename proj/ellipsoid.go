package proj

import "math"

// ellipsoid is an oblate ellipsoid of revolution (f == 0 for a sphere).
type ellipsoid struct {
	a  float64 // semi-major axis, metres
	f  float64 // flattening
	e2 float64 // first eccentricity squared
	e  float64 // first eccentricity
}

func newEllipsoid(a, invf float64) ellipsoid {
	el := ellipsoid{a: a}
	if invf != 0 {
		el.f = 1 / invf
	}
	el.e2 = el.f * (2 - el.f)
	el.e = math.Sqrt(el.e2)
	return el
}

var wgs84 = newEllipsoid(6378137, 298.257223563)

// Latitudes are handled through their tangents and the conformal
// ("isometric") latitude, after Karney, "Transverse Mercator with an
// accuracy of a few nanometers" (2011), which keeps full precision up to the
// poles: taupf maps tan(phi) to tan(chi), chi the conformal latitude, tauf
// inverts it by Newton's method. The isometric latitude is asinh(tan(chi)),
// and the t of EPSG's formulas for Mercator, Lambert and polar stereographic
// is exp(-asinh(tan(chi))).

// eatanhe returns e * atanh(e * x).
func eatanhe(x, e float64) float64 {
	return e * math.Atanh(e*x)
}

// taupf returns tan(chi) for tau = tan(phi).
func taupf(tau, e float64) float64 {
	if math.IsInf(tau, 0) {
		return tau
	}
	tau1 := math.Hypot(1, tau)
	sig := math.Sinh(eatanhe(tau/tau1, e))
	return math.Hypot(1, sig)*tau - sig*tau1
}

// tauf returns tan(phi) for taup = tan(chi).
func tauf(taup, e float64) float64 {
	const (
		numit  = 5
		tol    = 1.4901161193847656e-08 / 10 // sqrt(machine epsilon) / 10
		taumax = 2 / 1.4901161193847656e-08
	)
	e2m := 1 - e*e
	var tau float64
	if math.Abs(taup) > 70 {
		tau = taup * math.Exp(eatanhe(1, e))
	} else {
		tau = taup / e2m
	}
	stol := tol * math.Max(1, math.Abs(taup))
	if !(math.Abs(tau) < taumax) { // also ±Inf and NaN
		return tau
	}
	for i := 0; i < numit; i++ {
		taupa := taupf(tau, e)
		dtau := (taup - taupa) * (1 + e2m*tau*tau) / (e2m * math.Hypot(1, tau) * math.Hypot(1, taupa))
		tau += dtau
		if !(math.Abs(dtau) >= stol) {
			break
		}
	}
	return tau
}

// isometric returns the isometric latitude psi of phi: asinh(tan(chi)).
func (el ellipsoid) isometric(phi float64) float64 {
	return math.Asinh(taupf(math.Tan(phi), el.e))
}

// fromIsometric returns the latitude of isometric latitude psi.
func (el ellipsoid) fromIsometric(psi float64) float64 {
	return math.Atan(tauf(math.Sinh(psi), el.e))
}

// m returns cos(phi) / sqrt(1 - e² sin²(phi)), EPSG's m.
func (el ellipsoid) m(phi float64) float64 {
	s, c := math.Sincos(phi)
	return c / math.Sqrt(1-el.e2*s*s)
}

// geocentric converts geodetic latitude and longitude (radians, height
// zero) to Earth-centred Cartesian coordinates.
func (el ellipsoid) geocentric(lam, phi float64) (x, y, z float64) {
	sp, cp := math.Sincos(phi)
	sl, cl := math.Sincos(lam)
	n := el.a / math.Sqrt(1-el.e2*sp*sp)
	return n * cp * cl, n * cp * sl, n * (1 - el.e2) * sp
}

// geodetic converts Earth-centred Cartesian coordinates to geodetic
// longitude and latitude (radians; the height is dropped). It starts from
// Bowring's formula and refines it by fixed-point iteration, which converges
// to well below a micrometre near the surface.
func (el ellipsoid) geodetic(x, y, z float64) (lam, phi float64) {
	lam = math.Atan2(y, x)
	p := math.Hypot(x, y)
	b := el.a * (1 - el.f)
	if p == 0 {
		if z >= 0 {
			return lam, math.Pi / 2
		}
		return lam, -math.Pi / 2
	}
	ep2 := el.e2 / (1 - el.e2)
	st, ct := math.Sincos(math.Atan2(z*el.a, p*b))
	phi = math.Atan2(z+ep2*b*st*st*st, p-el.e2*el.a*ct*ct*ct)
	for i := 0; i < 4; i++ {
		sp, cp := math.Sincos(phi)
		n := el.a / math.Sqrt(1-el.e2*sp*sp)
		h := p*cp + z*sp - el.a*math.Sqrt(1-el.e2*sp*sp)
		next := math.Atan2(z, p*(1-el.e2*n/(n+h)))
		done := math.Abs(next-phi) < 1e-15
		phi = next
		if done {
			break
		}
	}
	return lam, phi
}
