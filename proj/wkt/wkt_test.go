package wkt

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	n, err := Parse(` PROJCS["NAD27 / ""x""",GEOGCS("NAD27", DATUM["D",SPHEROID["Clarke 1866",6378206.4,294.97869821]]),`+
		`PROJECTION["Transverse_Mercator"],PARAMETER["k",-1.5e-3],AXIS["E",EAST],EXTENSION["PROJ4","+proj=tmerc"]] `, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n.Key != "PROJCS" || n.Name() != `NAD27 / "x"` || len(n.Args) != 6 {
		t.Fatalf("%+v", n)
	}
	sp := n.Child("GEOGCS").Child("DATUM").Child("ELLIPSOID", "SPHEROID")
	if a, ok := sp.Number(1); !ok || a != 6378206.4 || sp.Name() != "Clarke 1866" || sp.Word(0) != "Clarke 1866" || sp.Word(1) != "" {
		t.Errorf("spheroid %+v", sp)
	}
	if k, ok := n.Child("PARAMETER").Number(1); !ok || k != -1.5e-3 || n.Child("PARAMETER").Args[1].Val != "-1.5e-3" {
		t.Errorf("parameter %+v", n.Child("PARAMETER"))
	}
	if ax := n.Child("AXIS"); ax.Word(1) != "EAST" || ax.Args[1].Quoted || !ax.Args[0].Quoted {
		t.Errorf("axis %+v", ax)
	}
	if got := len(n.Children("PARAMETER")); got != 1 {
		t.Errorf("%d parameters", got)
	}
	var none *Node
	if none.Name() != "" || none.Child("X") != nil || none.Word(0) != "" {
		t.Error("nil node")
	}
	if _, ok := none.Number(0); ok {
		t.Error("nil node has a number")
	}
	if n.Child("UNIT") != nil {
		t.Error("UNIT found")
	}
	if e, err := Parse("empty[]", 0); err != nil || e.Key != "EMPTY" || len(e.Args) != 0 {
		t.Errorf("%+v %v", e, err)
	}
}

func TestParseErrors(t *testing.T) {
	deep := strings.Repeat("A[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	many := "A[" + strings.Repeat("B[],", 10) + "B[]]"
	for _, c := range []struct {
		in, want string
		maxNodes int
	}{
		{"", "at byte 0: expected a keyword", 0},
		{"GEOGCS", "at byte 6: expected [ or ( after GEOGCS", 0},
		{`GEOGCS["x"`, "at byte 10: GEOGCS is not closed", 0},
		{`GEOGCS["x)`, "at byte 8: unterminated string", 0},
		{`GEOGCS["x")`, `at byte 10: unexpected ')' in GEOGCS`, 0},
		{`GEOGCS[1e400]`, `at byte 12: bad number "1e400"`, 0},
		{`GEOGCS[,]`, `at byte 7: unexpected ','`, 0},
		{`GEOGCS["x",`, `at byte 11: unexpected end`, 0},
		{`A[] B[]`, `at byte 4: unexpected text after the end`, 0},
		{deep, "nested too deeply", 0},
		{many, "at byte 42: too many elements", 11},
	} {
		_, err := Parse(c.in, c.maxNodes)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%.40q) = %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := Parse(many, 12); err != nil {
		t.Errorf("12 nodes: %v", err)
	}
	if _, err := Parse(many, 0); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if _, err := Parse(strings.Repeat("A[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1), 0); err != nil {
		t.Errorf("MaxDepth: %v", err)
	}
}

func TestUnit(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`GEOGCS["g",UNIT["degree",0.0174532925199433],AXIS["Lat",NORTH]]`, "degree"},
		{`GEOGCRS["g",CS[ellipsoidal,2],AXIS["lat",north,ANGLEUNIT["grad",0.01]],ANGLEUNIT["deg",0.0174]]`, "deg"},
		{`GEOGCRS["g",CS[ellipsoidal,2,ANGLEUNIT["cs",1]],AXIS["lat",north,ANGLEUNIT["grad",0.01]]]`, "cs"},
		{`GEOGCRS["g",CS[ellipsoidal,2],AXIS["lat",north,ANGLEUNIT["grad",0.01]],AXIS["lon",east,ANGLEUNIT["x",1]]]`, "grad"},
		{`GEOGCRS["g",CS[ellipsoidal,2],AXIS["lat",north]]`, ""},
		{`GEOGCRS["g",LENGTHUNIT["metre",1]]`, ""},
	} {
		n, err := Parse(c.in, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Unit("UNIT", "ANGLEUNIT").Name(); got != c.want {
			t.Errorf("%s: unit %q, want %q", c.in, got, c.want)
		}
	}
}
