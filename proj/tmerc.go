package proj

import "math"

// projection is one map projection on one ellipsoid. Coordinates are in
// metres relative to the false origin (false easting and northing removed);
// longitudes are in radians relative to the central meridian.
type projection interface {
	inverse(x, y float64) (lam, phi float64)
	forward(lam, phi float64) (x, y float64)
}

// tmerc is the Transverse Mercator projection (EPSG method 9807) by the
// Krüger n-series to sixth order in the third flattening n, in the complex
// form and with the coefficients of Karney (2011), which are also EPSG's
// "JHS" formulas of Guidance Note 7-2. Within 4000 km of the central
// meridian the series is good to a few nanometres (Karney 2011, fig. 4);
// it degrades slowly beyond.
type tmerc struct {
	e     float64
	k0A   float64    // k0 times the rectifying radius A
	m0    float64    // k0 A xi0: northing of the latitude of origin
	alpha [7]float64 // forward coefficients, alpha[1..6]
	beta  [7]float64 // inverse coefficients, beta[1..6]
}

func newTmerc(el ellipsoid, k0, phi0 float64) *tmerc {
	n := el.f / (2 - el.f)
	n2 := n * n
	n3 := n2 * n
	n4, n5, n6 := n2*n2, n2*n3, n3*n3
	t := &tmerc{e: el.e}
	A := el.a / (1 + n) * (1 + n2/4 + n4/64 + n6/256)
	t.k0A = k0 * A
	t.alpha = [7]float64{0,
		n/2 - 2*n2/3 + 5*n3/16 + 41*n4/180 - 127*n5/288 + 7891*n6/37800,
		13*n2/48 - 3*n3/5 + 557*n4/1440 + 281*n5/630 - 1983433*n6/1935360,
		61*n3/240 - 103*n4/140 + 15061*n5/26880 + 167603*n6/181440,
		49561*n4/161280 - 179*n5/168 + 6601661*n6/7257600,
		34729*n5/80640 - 3418889*n6/1995840,
		212378941 * n6 / 319334400,
	}
	t.beta = [7]float64{0,
		n/2 - 2*n2/3 + 37*n3/96 - n4/360 - 81*n5/512 + 96199*n6/604800,
		n2/48 + n3/15 - 437*n4/1440 + 46*n5/105 - 1118711*n6/3870720,
		17*n3/480 - 37*n4/840 - 209*n5/4480 + 5569*n6/90720,
		4397*n4/161280 - 11*n5/504 - 830251*n6/7257600,
		4583*n5/161280 - 108847*n6/3991680,
		20648693 * n6 / 638668800,
	}
	if phi0 != 0 {
		_, y := t.forward(0, phi0)
		t.m0 = y
	}
	return t
}

// clenshaw returns sum c[j] sin(2 j z) for j = 1..6 and complex z = xi + i
// eta, as (real, imaginary), by Clenshaw summation.
func clenshaw(c *[7]float64, xi, eta float64) (float64, float64) {
	s2, c2 := math.Sincos(2 * xi)
	sh2, ch2 := math.Sinh(2*eta), math.Cosh(2*eta)
	// sin(2z) and 2 cos(2z)
	sr, si := s2*ch2, c2*sh2
	ar, ai := 2*c2*ch2, -2*s2*sh2
	var y0r, y0i, y1r, y1i float64
	for j := 6; j >= 1; j-- {
		// y2 = y1; y1 = y0; y0 = a*y1 - y2 + c[j]
		nr := ar*y0r - ai*y0i - y1r + c[j]
		ni := ar*y0i + ai*y0r - y1i
		y1r, y1i = y0r, y0i
		y0r, y0i = nr, ni
	}
	return y0r*sr - y0i*si, y0r*si + y0i*sr
}

func (t *tmerc) forward(lam, phi float64) (x, y float64) {
	tau := math.Tan(phi)
	if math.Abs(phi) >= math.Pi/2 {
		tau = math.Copysign(math.Inf(1), phi)
	}
	taup := taupf(tau, t.e)
	sl, cl := math.Sincos(lam)
	var xip, etap float64
	if math.IsInf(taup, 0) {
		xip, etap = math.Copysign(math.Pi/2, taup), 0
	} else {
		xip = math.Atan2(taup, cl)
		etap = math.Asinh(sl / math.Hypot(taup, cl))
	}
	dr, di := clenshaw(&t.alpha, xip, etap)
	return t.k0A * (etap + di), t.k0A*(xip+dr) - t.m0
}

func (t *tmerc) inverse(x, y float64) (lam, phi float64) {
	xip := (y + t.m0) / t.k0A
	etap := x / t.k0A
	dr, di := clenshaw(&t.beta, xip, etap)
	xi, eta := xip-dr, etap-di
	sx, cx := math.Sincos(xi)
	sh := math.Sinh(eta)
	r := math.Hypot(sh, cx)
	lam = math.Atan2(sh, cx)
	if r == 0 {
		return lam, math.Copysign(math.Pi/2, sx)
	}
	return lam, math.Atan(tauf(sx/r, t.e))
}
