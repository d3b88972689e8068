package classify

import (
	"strings"

	"mapcommons"
)

// The lengths of the named colour ramps: every family has one ramp of each
// length from MinRampColors to MaxRampColors.
const (
	MinRampColors = 2
	MaxRampColors = 7
)

// Ramp returns the colour ramp of family name with n colours, as 0xRRGGBB
// integers from the first class to the last. The name is matched ignoring
// case, spaces, underscores, hyphens and dots ("white-blue", "WHITE_BLUE",
// "White Blue" and "whiteblue" are all White-Blue). The families are those
// of the original service's documentation (see RampNames); each has one
// ramp of every length from MinRampColors to MaxRampColors. An unknown name
// or an n outside that range is an EINVALID error naming the ramp and
// listing the families. The slice returned is the caller's own.
func Ramp(name string, n int) ([]int, error) {
	key := fold(name)
	for _, r := range ramps {
		if fold(r.name) != key {
			continue
		}
		if n < MinRampColors || n > MaxRampColors {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "colour ramp %s has %d to %d colours, not %d (families: %s)",
				r.name, MinRampColors, MaxRampColors, n, strings.Join(RampNames(), ", "))
		}
		return append([]int(nil), r.colors[n-MinRampColors]...), nil
	}
	return nil, mapcommons.Errorf(mapcommons.EINVALID, "unknown colour ramp %q: use one of %s",
		clip(name), strings.Join(RampNames(), ", "))
}

// RampNames returns the names of the colour ramp families, in the order of
// the original documentation. The slice returned is the caller's own.
func RampNames() []string {
	names := make([]string, len(ramps))
	for i, r := range ramps {
		names[i] = r.name
	}
	return names
}

// fold is the key names are matched by: lower case without spaces,
// underscores, hyphens or dots.
func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case ' ', '\t', '_', '-', '.':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clip shortens a name quoted back in an error message.
func clip(s string) string {
	const limit = 60
	if len(s) <= limit {
		return s
	}
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit]) + "…"
}
