package geojson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"mapcommons/format/wkb"
)

// ErrGeometry is wrapped by every error of ParseGeometry.
var ErrGeometry = errors.New("invalid GeoJSON geometry")

type rawGeometry struct {
	Type        string            `json:"type"`
	Coordinates json.RawMessage   `json:"coordinates"`
	Geometries  []json.RawMessage `json:"geometries"`
}

// ParseGeometry reads a GeoJSON geometry object into the stored WKB form.
// JSON null gives nil. Positions need at least two numbers (a third and
// more are dropped); longitudes must lie in [-180, 180] and latitudes in
// [-90, 90].
func ParseGeometry(b []byte) ([]byte, error) {
	g, err := parseGeom(b, 0)
	if err != nil || g == nil {
		return nil, err
	}
	return g.AppendWKB(nil), nil
}

func fail(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrGeometry, fmt.Sprintf(format, args...))
}

func parseGeom(b []byte, depth int) (*wkb.Geom, error) {
	if string(b) == "null" || len(b) == 0 {
		return nil, nil
	}
	if depth > 8 {
		return nil, fail("collections nested too deeply")
	}
	var r rawGeometry
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fail("%v", err)
	}
	// Go reads a null into a float64 as nothing (0): a position's null is
	// refused here. Coordinates hold only numbers, brackets, commas and
	// space, so "null" in them is that token.
	if bytes.Contains(r.Coordinates, []byte("null")) && string(bytes.TrimSpace(r.Coordinates)) != "null" {
		return nil, fail("a position holds null, not a number")
	}
	g := &wkb.Geom{}
	var err error
	switch r.Type {
	case "Point":
		g.Type = wkb.Point
		var p []float64
		if err = json.Unmarshal(r.Coordinates, &p); err == nil && len(p) > 0 {
			g.Coords, err = position(p)
		}
	case "LineString":
		g.Type = wkb.LineString
		g.Coords, err = sequence(r.Coordinates, 2)
	case "Polygon":
		g.Type = wkb.Polygon
		g.Rings, err = rings(r.Coordinates)
	case "MultiPoint":
		g.Type = wkb.MultiPoint
		var xy []float64
		if xy, err = sequence(r.Coordinates, 0); err == nil {
			for i := 0; i+1 < len(xy); i += 2 {
				g.Parts = append(g.Parts, wkb.Geom{Type: wkb.Point, Coords: xy[i : i+2]})
			}
		}
	case "MultiLineString":
		g.Type = wkb.MultiLineString
		var raws []json.RawMessage
		if err = json.Unmarshal(r.Coordinates, &raws); err == nil {
			for _, l := range raws {
				xy, e := sequence(l, 2)
				if e != nil {
					return nil, e
				}
				g.Parts = append(g.Parts, wkb.Geom{Type: wkb.LineString, Coords: xy})
			}
		}
	case "MultiPolygon":
		g.Type = wkb.MultiPolygon
		var raws []json.RawMessage
		if err = json.Unmarshal(r.Coordinates, &raws); err == nil {
			for _, p := range raws {
				rs, e := rings(p)
				if e != nil {
					return nil, e
				}
				g.Parts = append(g.Parts, wkb.Geom{Type: wkb.Polygon, Rings: rs})
			}
		}
	case "GeometryCollection":
		g.Type = wkb.GeometryCollection
		for _, m := range r.Geometries {
			p, e := parseGeom(m, depth+1)
			if e != nil {
				return nil, e
			}
			if p == nil {
				return nil, fail("a collection's member is null, not a geometry")
			}
			g.Parts = append(g.Parts, *p)
		}
	default:
		return nil, fail("unknown type %q", r.Type)
	}
	if err != nil {
		if errors.Is(err, ErrGeometry) {
			return nil, err
		}
		return nil, fail("%s coordinates: %v", r.Type, err)
	}
	return g, nil
}

func position(p []float64) ([]float64, error) {
	if len(p) < 2 {
		return nil, fail("a position needs two numbers")
	}
	x, okx := wkb.ClampLon(p[0])
	y, oky := wkb.ClampLat(p[1])
	if !okx || !oky {
		return nil, fail("position [%v, %v] is not a longitude, latitude", p[0], p[1])
	}
	return []float64{x, y}, nil
}

// sequence reads a list of positions into flat x,y pairs.
func sequence(b json.RawMessage, min int) ([]float64, error) {
	var ps [][]float64
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, err
	}
	if len(ps) < min {
		return nil, fail("needs at least %d positions", min)
	}
	xy := make([]float64, 0, 2*len(ps))
	for _, p := range ps {
		q, err := position(p)
		if err != nil {
			return nil, err
		}
		xy = append(xy, q...)
	}
	return xy, nil
}

// rings reads a polygon's rings; each must be closed with at least 4 positions.
func rings(b json.RawMessage) ([][]float64, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(b, &raws); err != nil {
		return nil, err
	}
	out := make([][]float64, 0, len(raws))
	for _, r := range raws {
		xy, err := sequence(r, 4)
		if err != nil {
			return nil, err
		}
		if xy[0] != xy[len(xy)-2] || xy[1] != xy[len(xy)-1] {
			return nil, fail("a polygon ring must end where it starts")
		}
		out = append(out, xy)
	}
	return out, nil
}
