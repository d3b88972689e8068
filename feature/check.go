package feature

import (
	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// CheckFeature checks feature n (its values having passed
// sum.CheckValues) and adds it to the summary sum: its geometry must be
// stored WKB with finite coordinates, and its index box too (arcs bulge
// beyond the vertices). It returns the box the index keeps for it
// (spatial.IndexBounds; ok false when it has none: no geometry, or an
// empty one). Every store checks features through it, so that all refuse
// and summarise alike.
func CheckFeature(sum *mapcommons.SummaryBuilder, n int, f *mapcommons.Feature) (box wkb.Rect, ok bool, err error) {
	return CheckRow(sum, n, f.Geometry, f.Values, nil)
}

// CheckRow is CheckFeature of the geometry geom and the values (row when
// not nil, else values): for a store that reads a feature's parts apart.
func CheckRow(sum *mapcommons.SummaryBuilder, n int, geom []byte, values []any, row mapcommons.Row) (box wkb.Rect, ok bool, err error) {
	add := func(g *wkb.Geom) error {
		if row != nil {
			return sum.AddRow(g, row)
		}
		return sum.Add(g, values)
	}
	if len(geom) == 0 {
		return wkb.Rect{}, false, add(nil)
	}
	if x, y, isPoint := wkb.StoredPoint(geom); isPoint {
		if row != nil {
			err = sum.AddPointRow(x, y, row)
		} else {
			err = sum.AddPoint(x, y, values)
		}
		if err != nil {
			return wkb.Rect{}, false, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", n, err)
		}
		return wkb.Rect{MinX: x, MinY: y, MaxX: x, MaxY: y}, true, nil
	}
	g, err := wkb.Decode(geom)
	if err != nil {
		return wkb.Rect{}, false, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", n, err)
	}
	if box, ok = spatial.IndexBounds(g); ok {
		err = mapcommons.CheckBounds(box)
	}
	if err == nil {
		err = add(&g)
	}
	if err != nil {
		return wkb.Rect{}, false, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", n, err)
	}
	return box, ok, nil
}
