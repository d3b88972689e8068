package classify

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mapcommons"
)

// docRamps reads the table of a colour-ramps document: family name to its
// ramps, and the names in order.
func docRamps(t *testing.T, path string) (map[string][][]int, []string) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s: %v", path, err)
	}
	row := regexp.MustCompile(`^\|\s*([^|]+?)\s*\|\s*(\[.*\])\s*\|\s*$`)
	out := map[string][][]int{}
	var names []string
	for _, line := range strings.Split(string(text), "\n") {
		m := row.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		var ramps [][]int
		for _, r := range strings.Split(m[2], "<br>") {
			r = strings.TrimSpace(r)
			if !strings.HasPrefix(r, "[") || !strings.HasSuffix(r, "]") {
				t.Fatalf("%s: ramp %q", m[1], r)
			}
			var colors []int
			for _, c := range strings.Split(r[1:len(r)-1], ",") {
				v, err := strconv.ParseInt(strings.TrimSpace(c), 0, 32)
				if err != nil || v < 0 || v > 0xFFFFFF {
					t.Fatalf("%s: colour %q: %v", m[1], c, err)
				}
				colors = append(colors, int(v))
			}
			ramps = append(ramps, colors)
		}
		out[m[1]] = ramps
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("%s: no ramps", path)
	}
	return out, names
}

// TestRampsMatchDoc checks every ramp of every family, at every size,
// against the documentation (our copy of the spec's color-ramps.md).
func TestRampsMatchDoc(t *testing.T) {
	for _, path := range []string{"testdata/color-ramps.md"} {
		t.Run(path, func(t *testing.T) {
			doc, names := docRamps(t, path)
			if !slices.Equal(RampNames(), names) {
				t.Fatalf("RampNames() = %v\nthe document has %v", RampNames(), names)
			}
			for name, ramps := range doc {
				sizes := map[int]bool{}
				for _, want := range ramps {
					n := len(want)
					sizes[n] = true
					for _, spelling := range []string{name, strings.ToUpper(name), strings.ToLower(name),
						strings.NewReplacer("-", "_", " ", "_").Replace(name), strings.NewReplacer("-", " ", "_", " ").Replace(name)} {
						got, err := Ramp(spelling, n)
						if err != nil || !slices.Equal(got, want) {
							t.Fatalf("Ramp(%q, %d) = %x, %v; want %x", spelling, n, got, err, want)
						}
					}
				}
				for n := MinRampColors; n <= MaxRampColors; n++ {
					if !sizes[n] {
						t.Fatalf("%s has no ramp of %d colours", name, n)
					}
				}
				if len(ramps) != MaxRampColors-MinRampColors+1 {
					t.Fatalf("%s has %d ramps", name, len(ramps))
				}
			}
		})
	}
}

func TestRampErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		want string
	}{
		{"Nope", 5, `unknown colour ramp "Nope"`},
		{"", 5, `unknown colour ramp ""`},
		{"White-Blue-", 5, "White-Blue"}, // a trailing hyphen folds away: found, so this is a size error below
		{"White", 5, "unknown colour ramp"},
		{"White-Blue", 1, "White-Blue has 2 to 7 colours, not 1"},
		{"white blue", 8, "White-Blue has 2 to 7 colours, not 8"},
		{"Diverging", 0, "Diverging has 2 to 7 colours, not 0"},
		{"Diverging", -3, "not -3"},
	} {
		got, err := Ramp(c.name, c.n)
		if c.name == "White-Blue-" {
			if err != nil || len(got) != 5 {
				t.Errorf("Ramp(%q, 5) = %v, %v", c.name, got, err)
			}
			continue
		}
		msg := mapcommons.ErrorMessage(err)
		if got != nil || mapcommons.ErrorCode(err) != mapcommons.EINVALID || !strings.Contains(msg, c.want) {
			t.Errorf("Ramp(%q, %d) = %v, %v; want an EINVALID error with %q", c.name, c.n, got, err, c.want)
		}
		for _, family := range RampNames() {
			if !strings.Contains(msg, family) {
				t.Errorf("Ramp(%q, %d): %q does not list %s", c.name, c.n, msg, family)
			}
		}
	}
}

func TestRampCopies(t *testing.T) {
	a, _ := Ramp("Blue-White", 3)
	a[0] = 0
	b, _ := Ramp("Blue-White", 3)
	if !slices.Equal(b, []int{0x3182BD, 0x9ECAE1, 0xDEEBF7}) {
		t.Fatalf("a caller's change reached the table: %x", b)
	}
	names := RampNames()
	names[0] = "x"
	if RampNames()[0] != "Diverging" {
		t.Fatal("RampNames aliases the table")
	}
	// Families stay distinct however they are spelt.
	seen := map[string]string{}
	for _, n := range RampNames() {
		if other, ok := seen[fold(n)]; ok {
			t.Fatalf("%s and %s fold alike", n, other)
		}
		seen[fold(n)] = n
	}
}
