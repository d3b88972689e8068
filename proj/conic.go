package proj

import (
	"errors"
	"math"
)

// lcc is the Lambert Conformal Conic projection: EPSG methods 9801 (1SP)
// and 9802 (2SP), and ESRI's Lambert_Conformal_Conic, which is the 2SP
// form with a scale factor applied to the radii (the 1SP form when both
// standard parallels are equal). EPSG's t is exp(-psi), psi the isometric
// latitude.
type lcc struct {
	el ellipsoid
	cone
	aF float64 // a F k0 (negative when n is)
}

// cone is what the conic projections share: the plane the cone unrolls to,
// with the apex at (0, rho0) and the central meridian along x = 0.
type cone struct {
	n    float64 // cone constant
	rho0 float64 // radius of the latitude of origin
}

// xy returns the point at radius r from the apex on the meridian lam (from
// the central one).
func (c cone) xy(r, lam float64) (x, y float64) {
	s, cs := math.Sincos(c.n * lam)
	return r * s, c.rho0 - r*cs
}

// polar returns the radius of x, y from the apex (never negative) and its
// angle from the central meridian, seen from the apex the side the cone
// opens to (flipped when n is negative); the angle divided by n is the
// longitude.
func (c cone) polar(x, y float64) (r, theta float64) {
	dy := c.rho0 - y
	if c.n < 0 {
		x, dy = -x, -dy
	}
	return math.Hypot(x, dy), math.Atan2(x, dy)
}

func newLcc(el ellipsoid, phi1, phi2, phi0, k0 float64) (*lcc, error) {
	if !(math.Abs(phi1) < math.Pi/2) || !(math.Abs(phi2) < math.Pi/2) || !(math.Abs(phi0) <= math.Pi/2) {
		return nil, errors.New("standard parallels must lie strictly between the poles")
	}
	m1, psi1 := el.m(phi1), el.isometric(phi1)
	var n float64
	if math.Abs(phi1-phi2) < 1e-12 {
		n = math.Sin(phi1)
	} else {
		m2, psi2 := el.m(phi2), el.isometric(phi2)
		n = (math.Log(m1) - math.Log(m2)) / (psi2 - psi1)
	}
	if !(math.Abs(n) > 1e-10) {
		return nil, errors.New("the standard parallels make no cone (n = 0)")
	}
	p := &lcc{el: el, cone: cone{n: n}}
	p.aF = el.a * k0 * m1 * math.Exp(n*psi1) / n
	p.rho0 = p.rho(phi0)
	if math.IsNaN(p.aF) || math.IsInf(p.aF, 0) || math.IsNaN(p.rho0) || math.IsInf(p.rho0, 0) {
		return nil, errors.New("the latitude of origin is the apex-opposite pole")
	}
	return p, nil
}

func (p *lcc) rho(phi float64) float64 {
	if math.Abs(phi) >= math.Pi/2 {
		if phi*p.n > 0 {
			return 0
		}
		return math.Inf(1)
	}
	return p.aF * math.Exp(-p.n*p.el.isometric(phi))
}

func (p *lcc) forward(lam, phi float64) (x, y float64) { return p.xy(p.rho(phi), lam) }

func (p *lcc) inverse(x, y float64) (lam, phi float64) {
	r, theta := p.polar(x, y)
	if r == 0 {
		return 0, math.Copysign(math.Pi/2, p.n)
	}
	if p.n < 0 {
		r = -r
	}
	psi := -math.Log(r/p.aF) / p.n
	return theta / p.n, p.el.fromIsometric(psi)
}

// aea is the Albers Equal Area conic projection (EPSG method 9822), after
// Snyder (1987) eqs. 14-1 to 14-21 and 3-16: the inverse solves q(phi) by
// Newton's method (from EPSG's series as the first guess), so it is exact
// to machine precision rather than to the series' O(e^8).
type aea struct {
	el ellipsoid
	cone
	c  float64
	qp float64 // q at the pole
}

// q returns Snyder's q (EPSG's alpha) for sin(phi).
func (el ellipsoid) q(s float64) float64 {
	if el.e < 1e-7 {
		return 2 * s
	}
	return (1 - el.e2) * (s/(1-el.e2*s*s) + math.Atanh(el.e*s)/el.e)
}

func newAea(el ellipsoid, phi1, phi2, phi0 float64) (*aea, error) {
	if !(math.Abs(phi1) < math.Pi/2) || !(math.Abs(phi2) < math.Pi/2) || !(math.Abs(phi0) <= math.Pi/2) {
		return nil, errors.New("standard parallels must lie strictly between the poles")
	}
	m1, q1 := el.m(phi1), el.q(math.Sin(phi1))
	var n float64
	if math.Abs(phi1-phi2) < 1e-12 {
		n = math.Sin(phi1)
	} else {
		m2, q2 := el.m(phi2), el.q(math.Sin(phi2))
		n = (m1*m1 - m2*m2) / (q2 - q1)
	}
	if !(math.Abs(n) > 1e-10) {
		return nil, errors.New("the standard parallels make no cone (n = 0)")
	}
	p := &aea{el: el, cone: cone{n: n}, c: m1*m1 + n*q1, qp: el.q(1)}
	p.rho0 = p.rho(phi0)
	if math.IsNaN(p.rho0) || math.IsInf(p.rho0, 0) {
		return nil, errors.New("the latitude of origin is outside the projection")
	}
	return p, nil
}

func (p *aea) rho(phi float64) float64 {
	return p.el.a * math.Sqrt(p.c-p.n*p.el.q(math.Sin(phi))) / p.n
}

func (p *aea) forward(lam, phi float64) (x, y float64) { return p.xy(p.rho(phi), lam) }

func (p *aea) inverse(x, y float64) (lam, phi float64) {
	r, theta := p.polar(x, y)
	rn := r * p.n / p.el.a
	q := (p.c - rn*rn) / p.n
	return theta / p.n, p.el.authalicInverse(q, p.qp)
}

// authalicInverse returns the latitude whose q is q (qp at the pole); NaN
// when |q| exceeds qp by more than rounding.
func (el ellipsoid) authalicInverse(q, qp float64) float64 {
	if math.IsNaN(q) {
		return q
	}
	if math.Abs(q) >= qp {
		if math.Abs(q)-qp > 1e-10*qp {
			return math.NaN()
		}
		return math.Copysign(math.Pi/2, q)
	}
	if el.e < 1e-7 {
		return math.Asin(q / 2)
	}
	// EPSG's series from the authalic latitude, then Newton on q(phi).
	e2 := el.e2
	e4, e6 := e2*e2, e2*e2*e2
	beta := math.Asin(q / qp)
	phi := beta + (e2/3+31*e4/180+517*e6/5040)*math.Sin(2*beta) +
		(23*e4/360+251*e6/3780)*math.Sin(4*beta) + (761*e6/45360)*math.Sin(6*beta)
	for i := 0; i < 8; i++ {
		s, c := math.Sincos(phi)
		if math.Abs(c) < 1e-12 {
			break
		}
		w := 1 - e2*s*s
		d := w * w / (2 * c) * (q/(1-e2) - s/w - math.Atanh(el.e*s)/el.e)
		phi += d
		if math.Abs(d) < 1e-15 {
			break
		}
	}
	return phi
}

// merc is the Mercator projection: EPSG methods 9804 (variant A, scale
// factor at the equator) and 9805 (variant B, from a standard parallel),
// both reduced to a scale factor, and on a sphere (e == 0) method 1024,
// Popular Visualisation Pseudo Mercator, whose lon/lat are taken as WGS 84
// ones unchanged.
type merc struct {
	el  ellipsoid
	ak0 float64
}

func (p *merc) forward(lam, phi float64) (x, y float64) {
	return p.ak0 * lam, p.ak0 * p.el.isometric(phi)
}

func (p *merc) inverse(x, y float64) (lam, phi float64) {
	return x / p.ak0, p.el.fromIsometric(y / p.ak0)
}

// pstere is the Polar Stereographic projection, EPSG methods 9810
// (variant A, scale factor at the pole) and 9829 (variant B, latitude of
// standard parallel), both reduced to k: rho = k t with t = exp(-psi) the
// EPSG t of the (north-pole-ward) latitude.
type pstere struct {
	el    ellipsoid
	k     float64
	south bool
}

// newPstereA is variant A: scale factor k0 at the pole.
func newPstereA(el ellipsoid, k0 float64, south bool) *pstere {
	e := el.e
	return &pstere{el: el, south: south, k: 2 * el.a * k0 / math.Sqrt(math.Pow(1+e, 1+e)*math.Pow(1-e, 1-e))}
}

// newPstereB is variant B: true scale at latitude phiF.
func newPstereB(el ellipsoid, phiF float64) (*pstere, error) {
	south := phiF < 0
	phiF = math.Abs(phiF)
	if !(phiF > 0 && phiF <= math.Pi/2) {
		return nil, errors.New("the standard parallel must lie between the equator and a pole")
	}
	if phiF == math.Pi/2 {
		return newPstereA(el, 1, south), nil
	}
	tF := math.Exp(-el.isometric(phiF))
	return &pstere{el: el, south: south, k: el.a * el.m(phiF) / tF}, nil
}

func (p *pstere) forward(lam, phi float64) (x, y float64) {
	if p.south {
		phi = -phi
	}
	var r float64
	if phi < math.Pi/2 {
		r = p.k * math.Exp(-p.el.isometric(phi))
	}
	s, c := math.Sincos(lam)
	if p.south {
		return r * s, r * c
	}
	return r * s, -r * c
}

func (p *pstere) inverse(x, y float64) (lam, phi float64) {
	if !p.south {
		y = -y
	}
	r := math.Hypot(x, y)
	lam = math.Atan2(x, y)
	if r == 0 {
		phi = math.Pi / 2
	} else {
		phi = p.el.fromIsometric(-math.Log(r / p.k))
	}
	if p.south {
		phi = -phi
	}
	return lam, phi
}
