package cql2_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/cql2"
)

// The CQL2 standard's own examples (testdata/ogc/cql2-examples, from the
// standard's repository: each filter in the text encoding, some in two
// spellings, and in the JSON encoding) are each parsed in both; both
// encodings must give the same expression, or, for the examples of a
// class not implemented, both must be refused.

// examplesOfOtherClasses are the examples that call a function not
// offered (mapcommons.Functions: avg, Foo, Bar and Buffer are the
// standard's examples of functions a server may offer), refused in both
// encodings. An example parsed in both encodings must not be here.
var examplesOfOtherClasses = map[string]string{
	"clause6_01": "functions", "clause6_02b": "functions", "example68": "functions", "example69": "functions",
	"clause7_18": "functions", // S_WITHIN(road, Buffer(geometry, 10, 'm'))
}

// TestStandardExamples: every example of the standard reads alike in both
// encodings, or is refused in both as of a class not implemented.
func TestStandardExamples(t *testing.T) {
	const dir = "../testdata/ogc/cql2-examples"
	texts, err := filepath.Glob(dir + "/text/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) < 100 {
		t.Fatalf("%d examples in %s", len(texts), dir)
	}
	parsed := 0
	seen := map[string]bool{}
	for _, path := range texts {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		seen[name] = true
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// exampleN-alt01.txt is another spelling of exampleN.json.
		js, err := os.ReadFile(filepath.Join(dir, "json", strings.TrimSuffix(name, "-alt01")+".json"))
		if err != nil {
			t.Fatal(err)
		}
		te, terr := cql2.Parse("cql2-text", string(text))
		je, jerr := cql2.Parse("cql2-json", string(js))
		if class, other := examplesOfOtherClasses[name]; other {
			for enc, err := range map[string]error{"text": terr, "json": jerr} {
				if err == nil {
					t.Errorf("%s (%s) parses in %s now: take it off the list, and check it in both", name, class, enc)
				} else if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
					t.Errorf("%s in %s: %v, not a refusal", name, enc, err)
				}
			}
			continue
		}
		if terr != nil || jerr != nil {
			t.Errorf("%s: text %v; json %v", name, terr, jerr)
			continue
		}
		if !reflect.DeepEqual(te, je) {
			t.Errorf("%s: the encodings differ:\ntext %+v\njson %+v", name, te, je)
		}
		parsed++
	}
	for name := range examplesOfOtherClasses {
		if !seen[name] {
			t.Errorf("%s is listed but no example", name)
		}
	}
	t.Logf("%d of %d examples parsed in both encodings alike", parsed, len(texts))
}
