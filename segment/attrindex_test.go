package segment

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

var indexAttrs = []mapcommons.Attribute{
	{Name: "n", Type: mapcommons.AttrInteger},
	{Name: "x", Type: mapcommons.AttrFloat},
	{Name: "s", Type: mapcommons.AttrString},
	{Name: "b", Type: mapcommons.AttrBoolean},
	{Name: "d", Type: mapcommons.AttrDate},
}

var indexStrings = []string{"", "a", "a\x00", "a\x00b", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefghj", "b", "\x00", "\x00\x00", "zz"}

var indexFloats = []float64{math.NaN(), math.Copysign(0, -1), 0, 1, -1, 2.5, math.Inf(1), math.Inf(-1), 1e300, -1e-300}

// indexFeatures draws features from few values, so that duplicates, nulls,
// NaN, -0 and strings with NUL bytes abound.
func indexFeatures(r *rand.Rand, n, spread int) []mapcommons.Feature {
	feats := make([]mapcommons.Feature, n)
	for i := range feats {
		var x float64
		if r.IntN(2) == 0 {
			x = indexFloats[r.IntN(len(indexFloats))]
		} else {
			x = float64(r.IntN(spread)) / 4
		}
		vals := []any{int64(r.IntN(spread) - spread/2), x, indexStrings[r.IntN(len(indexStrings))], r.IntN(2) == 0,
			"2020-01-0" + strconv.Itoa(1+r.IntN(9))}
		if r.IntN(3) == 0 {
			vals[2] = fmt.Sprintf("abcdefgh%d\x00%d", r.IntN(spread), r.IntN(3))
		}
		if r.IntN(4) == 0 {
			vals[0] = int64(1<<53 + r.IntN(3)) // equal as floats, not as integers
		}
		for j := range vals {
			if r.IntN(6) == 0 {
				vals[j] = nil
			}
		}
		var g []byte
		if r.IntN(20) != 0 {
			g = wkb.AppendPoint(nil, r.Float64()*360-180, r.Float64()*170-85)
		}
		feats[i] = mapcommons.Feature{Values: vals, Geometry: g}
	}
	return feats
}

// indexValue draws a filter value for attribute a.
func indexValue(r *rand.Rand, a mapcommons.Attribute, spread int) string {
	switch a.Type {
	case mapcommons.AttrInteger:
		if r.IntN(5) == 0 {
			return strconv.Itoa(1<<53 + r.IntN(3))
		}
		return strconv.Itoa(r.IntN(spread+2) - spread/2 - 1)
	case mapcommons.AttrFloat:
		for {
			x := indexFloats[r.IntN(len(indexFloats))]
			if r.IntN(2) == 0 {
				x = float64(r.IntN(spread)) / 4
			}
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				return strconv.FormatFloat(x, 'g', -1, 64)
			}
		}
	case mapcommons.AttrBoolean:
		return strconv.FormatBool(r.IntN(2) == 0)
	case mapcommons.AttrDate:
		return "2020-01-0" + strconv.Itoa(1+r.IntN(9))
	}
	if r.IntN(3) == 0 {
		return fmt.Sprintf("abcdefgh%d\x00%d", r.IntN(spread), r.IntN(3))
	}
	return indexStrings[r.IntN(len(indexStrings))]
}

func randomIndexQuery(r *rand.Rand, spread int) *mapcommons.FeatureQuery {
	q := &mapcommons.FeatureQuery{Limit: -1}
	if r.IntN(3) != 0 {
		q.Limit = int64(r.IntN(40))
	}
	if r.IntN(3) == 0 {
		q.Offset = int64(r.IntN(50))
	}
	if r.IntN(3) != 0 {
		q.Sort = indexAttrs[r.IntN(len(indexAttrs))].Name
	}
	q.Descending = r.IntN(2) == 0
	for k := r.IntN(3); k >= 0; k-- {
		a := indexAttrs[r.IntN(len(indexAttrs))]
		switch r.IntN(5) {
		case 0:
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpEquals, Values: []string{indexValue(r, a, spread)}})
		case 1:
			var vs []string
			for range 1 + r.IntN(12) {
				vs = append(vs, indexValue(r, a, spread))
			}
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpIn, Values: vs})
		case 2:
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMin, Values: []string{indexValue(r, a, spread)}})
		case 3:
			q.Filters = append(q.Filters, mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMax, Values: []string{indexValue(r, a, spread)}})
		default:
			lo, hi := indexValue(r, a, spread), indexValue(r, a, spread)
			q.Filters = append(q.Filters,
				mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMin, Values: []string{lo}},
				mapcommons.Filter{Attr: a.Name, Op: mapcommons.OpMax, Values: []string{hi}})
		}
	}
	if r.IntN(8) == 0 {
		q.BBox = &mapcommons.BBox{W: -90, S: -40, E: 90, N: 40}
	}
	if r.IntN(2) == 0 {
		q.Where = randomIndexWhere(r, spread, 0)
		if r.IntN(2) == 0 {
			q.Filters = nil
		}
	}
	return q
}

// randomIndexWhere draws a Where of the conditions the planner serves
// through the indexes (mapcommons.SplitWhere: comparisons, BETWEEN, IN,
// LIKE of a prefix, ORs across columns) and of others.
func randomIndexWhere(r *rand.Rand, spread, depth int) *mapcommons.Expr {
	if depth < 2 {
		switch r.IntN(6) {
		case 0, 1:
			op := []string{mapcommons.ExprAnd, mapcommons.ExprOr}[r.IntN(2)]
			e := &mapcommons.Expr{Op: op}
			for range 2 + r.IntN(2) {
				e.Args = append(e.Args, randomIndexWhere(r, spread, depth+1))
			}
			return e
		case 2:
			if r.IntN(3) == 0 {
				return &mapcommons.Expr{Op: mapcommons.ExprNot, Args: []*mapcommons.Expr{randomIndexWhere(r, spread, depth+1)}}
			}
		}
	}
	a := indexAttrs[r.IntN(len(indexAttrs))]
	lit := func() mapcommons.Literal {
		v := indexValue(r, a, spread)
		switch a.Type {
		case mapcommons.AttrInteger, mapcommons.AttrFloat:
			x, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return mapcommons.Literal{Kind: mapcommons.LitNumber, Num: x}
		case mapcommons.AttrBoolean:
			b, _ := mapcommons.ParseBool(v)
			return mapcommons.Literal{Kind: mapcommons.LitBoolean, Bool: b}
		}
		return mapcommons.Literal{Kind: mapcommons.LitString, Str: v}
	}
	e := &mapcommons.Expr{Property: a.Name}
	ops := []string{mapcommons.ExprEq, mapcommons.ExprNe, mapcommons.ExprLt, mapcommons.ExprLe, mapcommons.ExprGt, mapcommons.ExprGe,
		mapcommons.ExprBetween, mapcommons.ExprIn, mapcommons.ExprIsNull}
	if a.Type == mapcommons.AttrString || a.Type == mapcommons.AttrDate {
		ops = append(ops, mapcommons.ExprLike, mapcommons.ExprLike)
	}
	switch e.Op = ops[r.IntN(len(ops))]; e.Op {
	case mapcommons.ExprIsNull:
	case mapcommons.ExprBetween:
		e.Values = []mapcommons.Literal{lit(), lit()}
	case mapcommons.ExprIn:
		for range 1 + r.IntN(10) {
			e.Values = append(e.Values, lit())
		}
	case mapcommons.ExprLike:
		v := lit().Str
		cut := r.IntN(len(v) + 1)
		e.Values = []mapcommons.Literal{{Kind: mapcommons.LitString, Str: v[:cut] + []string{"%", "_%", "%b", ""}[r.IntN(4)]}}
	default:
		e.Values = []mapcommons.Literal{lit()}
	}
	return e
}

// TestAttrIndexServesOr checks that an OR of conditions on two columns is
// served by both columns' indexes, as a union of their runs.
func TestAttrIndexServesOr(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	indexed, scan := writeTwice(t, indexFeatures(r, 20000, 4000))
	e := &mapcommons.Expr{Op: mapcommons.ExprOr, Args: []*mapcommons.Expr{
		{Op: mapcommons.ExprEq, Property: "n", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: 5}}},
		{Op: mapcommons.ExprLike, Property: "s", Values: []mapcommons.Literal{{Kind: mapcommons.LitString, Str: "abcdefgh12%"}}},
		{Op: mapcommons.ExprBetween, Property: "x", Values: []mapcommons.Literal{{Kind: mapcommons.LitNumber, Num: 3}, {Kind: mapcommons.LitNumber, Num: 4}}},
	}}
	q := &mapcommons.FeatureQuery{Limit: -1, Where: e}
	p, err := indexed.compile(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.orParts) != 3 || !p.selective() {
		t.Fatalf("the OR is served by %d index parts (selective %v), want 3", len(p.orParts), p.selective())
	}
	got, want := queryAll(t, indexed, q), queryAll(t, scan, q)
	if len(want) == 0 || !reflect.DeepEqual(got, want) && !sameNaN(got, want) {
		t.Fatalf("%d features through the indexes, %d by scan", len(got), len(want))
	}
}

type answer struct {
	Pos    int64
	ID     int64
	Values []any
}

func queryAll(t *testing.T, s *Segment, q *mapcommons.FeatureQuery) []answer {
	t.Helper()
	var out []answer
	err := s.Query(context.Background(), q, func(f *mapcommons.Feature) error {
		out = append(out, answer{f.Position, f.ID, append([]any(nil), f.Values...)})
		return nil
	})
	if err != nil {
		t.Fatalf("%+v: %v", q, err)
	}
	return out
}

// TestAttrIndexMatchesScan compares the plans through the attribute
// indexes with the scan, on random data and queries.
func TestAttrIndexMatchesScan(t *testing.T) {
	for _, tc := range []struct{ n, spread, queries int }{{0, 4, 20}, {1, 4, 50}, {37, 4, 300}, {500, 8, 600}, {5000, 40, 600}, {20000, 4000, 300}} {
		r := rand.New(rand.NewPCG(uint64(tc.n), 7))
		indexed, scan := writeTwice(t, indexFeatures(r, tc.n, tc.spread))
		for col := range indexAttrs {
			if tc.n > 0 && !indexed.hasAttrIndex(col) {
				t.Fatalf("n %d: column %d has no index", tc.n, col)
			}
		}
		for range tc.queries {
			q := randomIndexQuery(r, tc.spread)
			if err := q.Validate(indexAttrs); err != nil {
				continue
			}
			got, want := queryAll(t, indexed, q), queryAll(t, scan, q)
			if !reflect.DeepEqual(got, want) && !sameNaN(got, want) {
				t.Fatalf("n %d, query %+v:\nindexed %v\nscan    %v", tc.n, q, got, want)
			}
			qc := *q
			qc.Sort, qc.GroupBy = "", []string{"s"}
			qc.Aggregates = []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcSum}}
			qc.Limit, qc.Offset = -1, 0
			if qc.Validate(indexAttrs) == nil {
				g1, err1 := indexed.Groups(context.Background(), &qc)
				g2, err2 := scan.Groups(context.Background(), &qc)
				if err1 != nil || err2 != nil || !reflect.DeepEqual(g1, g2) {
					t.Fatalf("groups of %+v: %v %v\n%v\n%v", qc, err1, err2, g1, g2)
				}
			}
		}
	}
}

// sameNaN compares answers whose values may hold NaN (never DeepEqual).
func sameNaN(a, b []answer) bool {
	return fmt.Sprintf("%v", a) == fmt.Sprintf("%v", b)
}

// writeTwice writes features to a segment and opens it twice: with its
// attribute indexes and forced to scan.
func writeTwice(t *testing.T, feats []mapcommons.Feature) (indexed, scan *Segment) {
	t.Helper()
	indexed, scan, _ = writeTwiceAt(t, feats)
	return indexed, scan
}

func writeTwiceAt(t *testing.T, feats []mapcommons.Feature) (indexed, scan *Segment, path string) {
	t.Helper()
	dir := t.TempDir()
	w, err := NewWriter(dir, indexAttrs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range feats {
		if err := w.Add(&feats[i]); err != nil {
			t.Fatal(err)
		}
	}
	path = filepath.Join(dir, "x.seg")
	if _, err := w.Finish(path); err != nil {
		t.Fatal(err)
	}
	if indexed, err = Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { indexed.Close() })
	if scan, err = Open(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scan.Close() })
	scan.noAttrIndex = true
	return indexed, scan, path
}

func FuzzAttrIndex(f *testing.F) {
	f.Add(uint64(1), uint16(100), uint8(4))
	f.Add(uint64(2), uint16(3000), uint8(200))
	f.Fuzz(func(t *testing.T, seed uint64, n uint16, spread uint8) {
		r := rand.New(rand.NewPCG(seed, 1))
		sp := int(spread)%64 + 2
		indexed, scan := writeTwice(t, indexFeatures(r, int(n)%5000, sp))
		for range 50 {
			q := randomIndexQuery(r, sp)
			if q.Validate(indexAttrs) != nil {
				continue
			}
			got, want := queryAll(t, indexed, q), queryAll(t, scan, q)
			if !reflect.DeepEqual(got, want) && !sameNaN(got, want) {
				t.Fatalf("query %+v:\nindexed %v\nscan    %v", q, got, want)
			}
		}
	})
}

// rewriteFooter rewrites a segment file with its header changed by edit
// (the sections left where they are).
func rewriteFooter(t *testing.T, path string, edit func(h *header, data []byte)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	size := len(data)
	hl := int(binary.LittleEndian.Uint64(data[size-16:]))
	var h header
	if err := json.Unmarshal(data[size-16-hl:size-16], &h); err != nil {
		t.Fatal(err)
	}
	body := data[:size-16-hl]
	edit(&h, body)
	hb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append([]byte(nil), body...), hb...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(hb)))
	out = append(out, magic...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAttrIndexOldAndCorrupt checks that files without indexes (written
// before them) and files whose index is out of range or out of order answer
// as the scan, and that a wrongly sized index is refused.
func TestAttrIndexOldAndCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	feats := indexFeatures(r, 3000, 50)
	indexed, scan, segPath := writeTwiceAt(t, feats)
	var queries []*mapcommons.FeatureQuery
	for len(queries) < 200 {
		if q := randomIndexQuery(r, 50); q.Validate(indexAttrs) == nil && (len(q.Filters) > 0 || q.Sort != "") {
			queries = append(queries, q)
		}
	}
	want := make([][]answer, len(queries))
	for i, q := range queries {
		want[i] = queryAll(t, scan, q)
		if got := queryAll(t, indexed, q); fmt.Sprint(got) != fmt.Sprint(want[i]) {
			t.Fatalf("%+v: indexed %v, scan %v", q, got, want[i])
		}
	}
	dir := t.TempDir()
	src, err := os.ReadFile(segPath)
	if err != nil {
		t.Fatal(err)
	}
	n := len(feats)
	for _, tc := range []struct {
		name    string
		edit    func(h *header, data []byte)
		refused bool
		trusted bool // not detected: answers may differ, without failing
	}{
		{"old file", func(h *header, _ []byte) {
			for i := range h.Attrs {
				delete(h.Sections, permName(i))
			}
		}, false, false},
		{"a null first", func(h *header, data []byte) {
			for i := range h.Attrs {
				r := h.Sections[permName(i)]
				perm := data[r[0] : r[0]+r[1]]
				last := binary.LittleEndian.Uint32(perm[len(perm)-4:]) // a null's
				copy(perm[4:], perm[:len(perm)-4])
				binary.LittleEndian.PutUint32(perm, last)
			}
		}, false, false},
		{"garbled", func(h *header, data []byte) {
			for i := range h.Attrs {
				r := h.Sections[permName(i)]
				slices.Reverse(data[r[0] : r[0]+r[1]]) // bytes reversed: positions out of range
			}
		}, false, false},
		{"out of range", func(h *header, data []byte) {
			for i := range h.Attrs {
				r := h.Sections[permName(i)]
				binary.LittleEndian.PutUint32(data[r[0]+4*int64(i*7):], uint32(n+i))
			}
		}, false, false},
		{"out of order", func(h *header, data []byte) {
			for i := range h.Attrs {
				r := h.Sections[permName(i)]
				a, b := r[0]+4*int64(i), r[0]+4*int64(n-1-i)
				x, y := binary.LittleEndian.Uint32(data[a:]), binary.LittleEndian.Uint32(data[b:])
				binary.LittleEndian.PutUint32(data[a:], y)
				binary.LittleEndian.PutUint32(data[b:], x)
			}
		}, false, true},
		{"duplicate", func(h *header, data []byte) {
			for i := range h.Attrs {
				r := h.Sections[permName(i)]
				copy(data[r[0]+4*int64(n/2):r[0]+4*int64(n/2)+4], data[r[0]+4*int64(n/2-1):])
			}
		}, false, false},
		{"short", func(h *header, _ []byte) {
			r := h.Sections[permName(1)]
			h.Sections[permName(1)] = [2]int64{r[0], r[1] - 4}
		}, true, false},
	} {
		path := filepath.Join(dir, tc.name+".seg")
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		rewriteFooter(t, path, tc.edit)
		s, err := Open(path)
		if tc.refused {
			if err == nil || !strings.Contains(err.Error(), "corrupt") {
				t.Fatalf("%s: opened (%v)", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i, q := range queries {
			if got := queryAll(t, s, q); !tc.trusted && fmt.Sprint(got) != fmt.Sprint(want[i]) {
				t.Fatalf("%s, %+v: %v, scan %v", tc.name, q, got, want[i])
			}
		}
		if tc.trusted {
			s.Close()
			continue
		}
		for col := range indexAttrs {
			if s.hasAttrIndex(col) {
				t.Fatalf("%s: column %d has an index", tc.name, col)
			}
		}
		s.Close()
	}
}
