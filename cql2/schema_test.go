package cql2_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"mapcommons/cql2"
)

// cql2Schema is the standard's JSON Schema of the JSON encoding
// (testdata/ogc/cql2.json).
func cql2Schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	b, err := os.ReadFile("../testdata/ogc/cql2.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://schemas.test/cql2.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("https://schemas.test/cql2.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJSONParserWithinTheSchema: the standard's JSON examples fit its
// schema, and the JSON parser takes nothing the schema refuses — checked
// on the examples and on 1,500 of their mutations (a node replaced,
// an argument dropped or repeated, an operator renamed, a member taken
// out). The parser may refuse more (a function not offered, an argument
// of the wrong type, which the schema cannot tell).
func TestJSONParserWithinTheSchema(t *testing.T) {
	t.Parallel()
	schema := cql2Schema(t)
	paths, err := filepath.Glob("../testdata/ogc/cql2-examples/json/*.json")
	if err != nil || len(paths) < 100 {
		t.Fatalf("%d examples: %v", len(paths), err)
	}
	fits := func(b []byte) bool {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		return err == nil && schema.Validate(v) == nil
	}
	var examples []any
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fits(b) {
			t.Errorf("%s does not fit the schema", filepath.Base(p))
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		examples = append(examples, v)
	}
	r := rand.New(rand.NewPCG(26, 1))
	refused, tried := 0, 0
	for i := 0; i < 1500; i++ {
		m := mutate(r, clone(examples[r.IntN(len(examples))]))
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		tried++
		if fits(b) {
			continue
		}
		refused++
		if _, err := cql2.Parse(cql2.LangJSON, string(b)); err == nil && !draftBetween(m) {
			t.Errorf("the parser takes what the schema refuses: %s", b)
		}
	}
	if refused < tried/4 {
		t.Fatalf("only %d of %d mutations refused by the schema: the mutations are too mild to test", refused, tried)
	}
}

// draftBetween reports whether v holds a BETWEEN in the form of the
// standard's drafts, [value, [low, high]], which the parser takes too
// (clients written against the drafts send it) and the schema does not.
func draftBetween(v any) bool {
	switch x := v.(type) {
	case []any:
		return slices.ContainsFunc(x, draftBetween)
	case map[string]any:
		if args, ok := x["args"].([]any); ok && x["op"] == "between" && len(args) == 2 {
			if _, ok := args[1].([]any); ok {
				return true
			}
		}
		for _, c := range x {
			if draftBetween(c) {
				return true
			}
		}
	}
	return false
}

// clone is a deep copy of a decoded JSON value.
func clone(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// mutations' stock: values put in place of a node, operators put in place
// of another's.
var (
	stockValues = []any{nil, 42.0, "x", true, []any{}, map[string]any{},
		map[string]any{"op": "=", "args": []any{}}, map[string]any{"property": 5.0},
		map[string]any{"timestamp": "yesterday"}, map[string]any{"date": 20200101.0},
		map[string]any{"bbox": []any{1.0, 2.0}}, map[string]any{"interval": []any{"2020-01-01"}},
		map[string]any{"type": "Point", "coordinates": []any{"a", "b"}}}
	stockOps = []string{"and", "or", "not", "=", "<>", "<", ">", "like", "between", "in", "isNull",
		"s_intersects", "t_after", "a_contains", "casei", "accenti", "+", "div", "AND", "Between", "foo", ""}
)

// mutate changes one node of v (chosen at random) and returns v.
func mutate(r *rand.Rand, v any) any {
	var nodes []*any
	var walk func(p *any)
	walk = func(p *any) {
		nodes = append(nodes, p)
		switch x := (*p).(type) {
		case []any:
			for i := range x {
				walk(&x[i])
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				c := x[k]
				walk(&c)
				x[k] = c // maps hold values: walk a copy, then put it back below
			}
		}
	}
	root := v
	walk(&root)
	p := nodes[r.IntN(len(nodes))]
	switch x := (*p).(type) {
	case map[string]any:
		switch k := r.IntN(3); {
		case k == 0 && x["op"] != nil:
			x["op"] = stockOps[r.IntN(len(stockOps))]
		case k == 1 && len(x) > 0:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			delete(x, keys[r.IntN(len(keys))])
		default:
			if args, ok := x["args"].([]any); ok && len(args) > 0 {
				if r.IntN(2) == 0 {
					x["args"] = args[:len(args)-1]
				} else {
					x["args"] = append(args, args[0])
				}
			} else {
				*p = clone(stockValues[r.IntN(len(stockValues))])
			}
		}
	default:
		*p = clone(stockValues[r.IntN(len(stockValues))])
	}
	return root
}
