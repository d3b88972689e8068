package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mapcommons"
)

// TestReadEditsStreamsAdds: an edits body of more than heldAdds adds is
// not held in memory: readEdits checks and counts the adds and leaves
// them in the body, which the edit's AddSource reads again, in order.
func TestReadEditsStreamsAdds(t *testing.T) {
	t.Parallel()
	attrs := []mapcommons.Attribute{{Name: "n", Type: mapcommons.AttrInteger}}
	const n = 3*heldAdds + 7
	var b strings.Builder
	b.WriteString(`{"deletes": [1], "adds": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n ")
		}
		fmt.Fprintf(&b, `{"n": %d, "geometry": {"type": "Point", "coordinates": [%d, 1]}}`, i, i%180)
	}
	b.WriteString(`], "updates": []}`)
	path := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &Server{}
	e, err := s.readEdits(f, attrs)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Adds) != 0 || e.AddCount != n || e.AddSource == nil || len(e.Deletes) != 1 {
		t.Fatalf("%d adds held, %d counted, source %v, deletes %v", len(e.Adds), e.AddCount, e.AddSource, e.Deletes)
	}
	for i := 0; ; i++ {
		a, err := e.AddSource.Next()
		if errors.Is(err, mapcommons.EOF) {
			if i != n {
				t.Fatalf("read again: %d adds, want %d", i, n)
			}
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if a.Values[0] != int64(i) {
			t.Fatalf("add %d read again as %v", i, a.Values)
		}
	}
	// A few adds stay in memory, as before.
	small := `{"adds": [{"n": 1, "geometry": null}, {"n": 2, "geometry": null}]}`
	if err := os.WriteFile(path, []byte(small), 0o600); err != nil {
		t.Fatal(err)
	}
	g, _ := os.Open(path)
	defer g.Close()
	if e, err := s.readEdits(g, attrs); err != nil || len(e.Adds) != 2 || e.AddSource != nil {
		t.Fatalf("small: %+v, %v", e, err)
	}
}
