package params

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"mapcommons"
)

// Invalid is the EINVALID error of a parameter: its message starts with
// the parameter's name ("bbox: needs 4 numbers …").
func Invalid(param, format string, args ...any) error {
	return mapcommons.Errorf(mapcommons.EINVALID, "%s: %s", param, fmt.Sprintf(format, args...))
}

// Flag reads a boolean parameter; absent is false.
func (p Params) Flag(name string) (bool, error) {
	v, _, err := p.Bool(name)
	return v, err
}

// Number reads a single numeric parameter (finite), and whether it is
// given.
func (p Params) Number(name string) (float64, bool, error) {
	v, ok := p.String(name)
	if !ok {
		return 0, false, nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, true, Invalid(name, "%q is not a number", v)
	}
	return x, true, nil
}

// Numbers reads a comma-separated list of numbers (also given as a list
// parameter, bbox[]=...), and whether it is given.
func (p Params) Numbers(name string) ([]float64, bool, error) {
	var parts []string
	if list, ok := p.Strings(name); ok && len(list) > 1 {
		parts = list
	} else if v, ok := p.String(name); ok {
		parts = strings.Split(v, ",")
	} else if ok && len(list) == 1 {
		parts = strings.Split(list[0], ",")
	} else {
		return nil, false, nil
	}
	out := make([]float64, 0, len(parts))
	for _, s := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, true, Invalid(name, "%q is not a number", s)
		}
		out = append(out, v)
	}
	return out, true, nil
}

// Int reads an integer parameter; absent or blank gives def.
func (p Params) Int(name string, def int64) (int64, error) {
	v, ok := p.String(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, mapcommons.Errorf(mapcommons.EINVALID, "%s: not an integer: %q", name, v)
	}
	return n, nil
}
