package api

import (
	"strings"
	"testing"
)

func TestTopLevelType(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"type":"Feature"}`: "Feature", `{"a":{"type":"x"},"b":[1,[2,{"c":3}]],"type":"Point"}`: "Point",
		`[{"type":"Feature"}]`: "", `{"a":1}`: "", `{"type":7}`: "",
	} {
		if got, _ := topLevelType(strings.NewReader(body)); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}
