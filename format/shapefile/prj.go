package shapefile

import (
	"math"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/proj/wkt"
)

// maxPRJLen bounds the length of a .prj.
const maxPRJLen = 64 << 10

// wktName returns the node's first argument when it is a quoted string
// (which may be empty).
func wktName(n *wkt.Node) (string, bool) {
	if len(n.Args) > 0 && n.Args[0].Node == nil && n.Args[0].Quoted {
		return n.Args[0].Val, true
	}
	return "", false
}

// ClassifyPRJ parses the ESRI or OGC WKT (WKT1 or WKT2, with brackets or
// parentheses) of a .prj far enough to name the coordinate reference system
// and say whether it is geographic lon/lat. A geographic CRS (GEOGCS,
// GEOGCRS, GEODCRS) gives its name and true, whatever its datum (WGS 84,
// NAD83, NAD27, ETRS89, GRS 1980 and any other), provided its angular unit
// is the degree; a projected one (PROJCS, PROJCRS) gives its name and false.
// A compound CRS is classified by its horizontal part, a bound CRS by its
// source. A blank prj gives ("", true, nil). Text that is not WKT, a
// geographic CRS in other units than degrees and other kinds of CRS
// (geocentric, vertical, engineering) are EINVALID errors.
func ClassifyPRJ(prj string) (name string, geographic bool, err error) {
	s := strings.TrimSpace(strings.TrimPrefix(prj, "\uFEFF"))
	if s == "" {
		return "", true, nil
	}
	if len(s) > maxPRJLen {
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is too long (%d bytes, at most %d)", len(s), maxPRJLen)
	}
	root, err := wkt.Parse(s, 0)
	if err != nil {
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is not a coordinate system in WKT: %v", err)
	}
	return classify(root, 0)
}

func classify(n *wkt.Node, depth int) (string, bool, error) {
	if n.Key == "BOUNDCRS" { // no name of its own
		if src := n.Child("SOURCECRS"); src != nil && depth < 2 {
			for _, a := range src.Args {
				if a.Node != nil {
					return classify(a.Node, depth+1)
				}
			}
		}
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is not a coordinate system in WKT: BOUNDCRS has no source CRS")
	}
	name, ok := wktName(n)
	if !ok {
		return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj is not a coordinate system in WKT: %s has no name", n.Key)
	}
	switch n.Key {
	case "GEOGCS", "GEOGCRS", "GEOGRAPHICCRS", "GEODCRS", "GEODETICCRS":
		if cs := n.Child("CS"); cs != nil && len(cs.Args) > 0 && !strings.EqualFold(cs.Args[0].Val, "ellipsoidal") {
			return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj describes %s coordinate system %q, which is not supported; upload data in geographic lon/lat", strings.ToLower(cs.Args[0].Val), name)
		}
		if unit, ok := angularUnit(n); !ok {
			return "", false, mapcommons.Errorf(mapcommons.EINVALID, "geographic coordinate system %q uses angular unit %q; only degrees are supported", name, unit)
		}
		return name, true, nil
	case "PROJCS", "PROJCRS", "PROJECTEDCRS":
		return name, false, nil
	case "COMPD_CS", "COMPOUNDCRS":
		if depth < 2 {
			for _, a := range n.Args {
				if a.Node != nil && horizontal(a.Node.Key) {
					return classify(a.Node, depth+1)
				}
			}
		}
	}
	return "", false, mapcommons.Errorf(mapcommons.EINVALID, "the .prj describes a coordinate system of kind %s (%q), which is not supported; upload data in geographic lon/lat", n.Key, name)
}

func horizontal(key string) bool {
	switch key {
	case "GEOGCS", "GEOGCRS", "GEOGRAPHICCRS", "GEODCRS", "GEODETICCRS", "PROJCS", "PROJCRS", "PROJECTEDCRS":
		return true
	}
	return false
}

// angularUnit finds the angular unit of a geographic CRS (see
// wkt.Node.Unit). ok is false when it is not the degree; a CRS with no
// unit at all is taken to be in degrees.
func angularUnit(n *wkt.Node) (string, bool) {
	u := n.Unit("UNIT", "ANGLEUNIT")
	if u == nil {
		return "", true
	}
	name, _ := wktName(u)
	if strings.Contains(strings.ToLower(name), "degree") {
		return name, true
	}
	if len(u.Args) > 1 && u.Args[1].Node == nil {
		if f, err := strconv.ParseFloat(u.Args[1].Val, 64); err == nil && math.Abs(f-math.Pi/180) < 1e-12 {
			return name, true
		}
	}
	return name, false
}
