package mapcommons_test

import (
	"strings"
	"testing"

	"mapcommons"
)

// TestReadableName: a title becomes a lower-case name of letters, digits
// and underscores with the id after it, which alone finds the dataset.
func TestReadableName(t *testing.T) {
	long := strings.Repeat("word ", 20)
	for _, c := range []struct {
		title string
		id    int64
		want  string
	}{
		{"North Carolina Counties", 7, "north_carolina_counties-7"},
		{"  Towns (2021) — São Paulo!  ", 12, "towns_2021_s_o_paulo-12"},
		{"", 3, "dataset-3"},
		{"Ελλάδα", 4, "dataset-4"},
		{"a-b_c", 5, "a_b_c-5"},
		{long, 9, strings.TrimSuffix(strings.Repeat("word_", 9), "_") + "-9"},
		{strings.Repeat("x", 100), 1, strings.Repeat("x", 48) + "-1"},
	} {
		got := mapcommons.ReadableName(c.title, c.id)
		if got != c.want {
			t.Errorf("ReadableName(%q, %d) = %q, want %q", c.title, c.id, got, c.want)
		}
		if id, ok := mapcommons.ParseReadableName(got); !ok || id != c.id {
			t.Errorf("ParseReadableName(%q) = %d, %v", got, id, ok)
		}
	}
	for _, c := range []struct {
		name string
		id   int64
		ok   bool
	}{
		{"7", 7, true}, {"07", 7, true}, {"+7", 7, true}, // as numeric ids were always read
		{"old_title-7", 7, true},
		{"0", 0, false}, {"-7", 0, false}, {"x-07", 0, false}, {"x-0", 0, false}, {"x-", 0, false},
		{"X-7", 0, false}, {"a b-7", 0, false}, {"a-b-7", 0, false}, {"x-7a", 0, false}, {"x-+7", 0, false},
		{strings.Repeat("x", 49) + "-7", 0, false}, {"x-99999999999999999999", 0, false}, {"", 0, false},
	} {
		if id, ok := mapcommons.ParseReadableName(c.name); id != c.id || ok != c.ok {
			t.Errorf("ParseReadableName(%q) = %d, %v; want %d, %v", c.name, id, ok, c.id, c.ok)
		}
	}
}

func FuzzReadableName(f *testing.F) {
	f.Add("North Carolina Counties", int64(7))
	f.Add("", int64(1))
	f.Fuzz(func(t *testing.T, title string, id int64) {
		if id <= 0 {
			return
		}
		name := mapcommons.ReadableName(title, id)
		if got, ok := mapcommons.ParseReadableName(name); !ok || got != id {
			t.Fatalf("%q: ParseReadableName(%q) = %d, %v", title, name, got, ok)
		}
	})
}
