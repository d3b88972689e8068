package feature

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/gdaltest"
)

// relateOps are the spatial functions and GEOS's names of them.
var relateOps = []struct{ op, geos string }{
	{mapcommons.ExprIntersects, "ST_Intersects"},
	{mapcommons.ExprDisjoint, "ST_Disjoint"},
	{mapcommons.ExprEquals, "ST_Equals"},
	{mapcommons.ExprTouches, "ST_Touches"},
	{mapcommons.ExprCrosses, "ST_Crosses"},
	{mapcommons.ExprWithin, "ST_Within"},
	{mapcommons.ExprContains, "ST_Contains"},
	{mapcommons.ExprOverlaps, "ST_Overlaps"},
}

// oracleShape draws a valid geometry as WKT: a point, a line, a polygon
// (a rectangle or a triangle, with a hole or not), or a multi- form. On
// the grid (small integers) shapes share vertices and edges often, so
// that touching, equal, within and crossing shapes are common; off it
// they are in general position.
func oracleShape(r *rand.Rand, grid bool) string {
	c := func() float64 {
		if grid {
			return float64(r.IntN(9))
		}
		return r.Float64() * 8
	}
	xy := func(x, y float64) string {
		return strconv.FormatFloat(x, 'g', -1, 64) + " " + strconv.FormatFloat(y, 'g', -1, 64)
	}
	line := func() string {
		n := 2 + r.IntN(3)
		var pts []string
		px, py := -1.0, -1.0
		for len(pts) < n {
			x, y := c(), c()
			if x == px && y == py {
				continue
			}
			pts = append(pts, xy(x, y))
			px, py = x, y
		}
		return "(" + strings.Join(pts, ", ") + ")"
	}
	// poly draws a polygon in x from lo to hi.
	poly := func(lo, hi float64) string {
		span := func() (a, b float64) {
			for {
				a, b = lo+(hi-lo)*float64(r.IntN(9))/8, lo+(hi-lo)*float64(r.IntN(9))/8
				if !grid {
					a, b = lo+(hi-lo)*r.Float64(), lo+(hi-lo)*r.Float64()
				}
				if a > b {
					a, b = b, a
				}
				if b-a >= (hi-lo)/4 {
					return a, b
				}
			}
		}
		x0, x1 := span()
		y0, y1 := 8*(x0-lo)/(hi-lo), 8*(x1-lo)/(hi-lo)
		if r.IntN(2) == 0 {
			y0, y1 = float64(r.IntN(3)), float64(5+r.IntN(4))
			if !grid {
				y0, y1 = r.Float64()*3, 5+r.Float64()*3
			}
		}
		if r.IntN(4) == 0 { // a triangle
			return fmt.Sprintf("((%s, %s, %s, %s))", xy(x0, y0), xy(x1, y0), xy(x0, y1), xy(x0, y0))
		}
		shell := fmt.Sprintf("(%s, %s, %s, %s, %s)", xy(x0, y0), xy(x1, y0), xy(x1, y1), xy(x0, y1), xy(x0, y0))
		if r.IntN(2) == 0 || x1-x0 < 2 || y1-y0 < 2 {
			return "(" + shell + ")"
		}
		// A hole strictly inside.
		hx0, hx1 := x0+(x1-x0)/4, x1-(x1-x0)/4
		hy0, hy1 := y0+(y1-y0)/4, y1-(y1-y0)/4
		hole := fmt.Sprintf("(%s, %s, %s, %s, %s)", xy(hx0, hy0), xy(hx0, hy1), xy(hx1, hy1), xy(hx1, hy0), xy(hx0, hy0))
		return "(" + shell + ", " + hole + ")"
	}
	switch r.IntN(7) {
	case 0:
		return "POINT(" + xy(c(), c()) + ")"
	case 1:
		return "MULTIPOINT((" + xy(c(), c()) + "), (" + xy(c(), c()) + "))"
	case 2:
		return "LINESTRING" + line()
	case 3:
		return "MULTILINESTRING(" + line() + ", " + line() + ")"
	case 4, 5:
		return "POLYGON" + poly(0, 8)
	}
	return "MULTIPOLYGON(" + poly(0, 3.5) + ", " + poly(4.5, 8) + ")"
}

// TestRelateOracle compares each spatial function of the evaluator (a
// compiled Node, as both stores run it) with GEOS's answer (GDAL's SQLite
// dialect, SpatiaLite's ST_ functions) for random features and literals:
// points, lines, polygons with holes and the multi- forms, on a grid of
// integers (shared edges and vertices) and off it, and BBOX literals.
func TestRelateOracle(t *testing.T) {
	gdaltest.Need(t)
	r := rand.New(rand.NewPCG(7, 2026))
	type lit struct {
		wkt  string
		expr func(op string) *mapcommons.Expr
	}
	var feats []string
	for i := 0; i < 160; i++ {
		feats = append(feats, oracleShape(r, i%4 != 0))
	}
	var lits []lit
	for i := 0; i < 48; i++ {
		w := oracleShape(r, i%4 != 0)
		if i >= 36 { // a feature again, so that S_EQUALS holds at times
			w = feats[i-36]
			if s, ok := strings.CutPrefix(w, "LINESTRING("); ok { // reversed: the same point set
				pts := strings.Split(strings.TrimSuffix(s, ")"), ", ")
				slices.Reverse(pts)
				w = "LINESTRING(" + strings.Join(pts, ", ") + ")"
			}
		}
		g, err := wkb.ParseWKT(w)
		if err != nil {
			t.Fatalf("%s: %v", w, err)
		}
		lits = append(lits, lit{w, func(op string) *mapcommons.Expr {
			return &mapcommons.Expr{Op: op, Property: "geometry", Geometry: g}
		}})
	}
	for i := 0; i < 6; i++ {
		x0, y0 := float64(r.IntN(5)), float64(r.IntN(5))
		x1, y1 := x0+float64(1+r.IntN(4)), y0+float64(1+r.IntN(4))
		b := &mapcommons.BBox{W: x0, S: y0, E: x1, N: y1}
		w := fmt.Sprintf("POLYGON((%g %g, %g %g, %g %g, %g %g, %g %g))", x0, y0, x1, y0, x1, y1, x0, y1, x0, y0)
		lits = append(lits, lit{w, func(op string) *mapcommons.Expr {
			return &mapcommons.Expr{Op: op, Property: "geometry", BBox: b}
		}})
	}

	// GEOS's answers, all pairs in one ogrinfo run over a CSV of them.
	dir := t.TempDir()
	var csv strings.Builder
	csv.WriteString("id,f,l\n")
	for i, f := range feats {
		for j, l := range lits {
			fmt.Fprintf(&csv, "%d,\"%s\",\"%s\"\n", i*len(lits)+j, f, l.wkt)
		}
	}
	path := filepath.Join(dir, "pairs.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var sel []string
	for k, o := range relateOps {
		sel = append(sel, fmt.Sprintf("%s(GeomFromText(f), GeomFromText(l)) AS p%d", o.geos, k))
	}
	var rows []map[string]string
	for _, f := range gdaltest.Features(t, path, "-dialect", "SQLite", "-sql", "SELECT id, "+strings.Join(sel, ", ")+" FROM pairs") {
		rows = append(rows, f.Fields)
	}
	if len(rows) != len(feats)*len(lits) {
		t.Fatalf("GEOS answered %d rows of %d", len(rows), len(feats)*len(lits))
	}
	geos := make([][]string, len(rows))
	for _, row := range rows {
		id, err := strconv.Atoi(row["id"])
		if err != nil || id < 0 || id >= len(rows) {
			t.Fatalf("row %v", row)
		}
		for k := range relateOps {
			geos[id] = append(geos[id], row["p"+strconv.Itoa(k)])
		}
	}

	stored := make([][]byte, len(feats))
	for i, f := range feats {
		g, err := wkb.ParseWKT(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		stored[i] = g
	}
	compared, mismatches := 0, 0
	trues := make([]int, len(relateOps))
	for k, o := range relateOps {
		for j, l := range lits {
			e := l.expr(o.op)
			if err := e.Validate(nil); err != nil {
				t.Fatalf("%s: %v", l.wkt, err)
			}
			n := Compile(nil, e)
			for i := range feats {
				want := geos[i*len(lits)+j][k]
				if want != "0" && want != "1" {
					continue // GEOS could not say
				}
				got := n.match(&valueCells{g: stored[i]})
				compared++
				if got == triTrue {
					trues[k]++
				}
				if (got == triTrue) != (want == "1") {
					if mismatches++; mismatches <= 20 {
						t.Errorf("%s(%s, %s) = %v, GEOS says %s", strings.ToUpper(o.op), feats[i], l.wkt, got == triTrue, want)
					}
				}
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%d of %d answers differ from GEOS's", mismatches, compared)
	}
	if compared < len(relateOps)*len(feats)*len(lits)*9/10 {
		t.Errorf("only %d of %d answers compared: GEOS failed on the rest", compared, len(relateOps)*len(feats)*len(lits))
	}
	for k, o := range relateOps {
		if trues[k] < 10 {
			t.Errorf("%s is true for only %d pairs: the draw does not exercise it", o.op, trues[k])
		}
	}
	t.Logf("%d answers compared; true per predicate: %v", compared, trues)
}
