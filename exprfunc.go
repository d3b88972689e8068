// exprfunc.go: the functions an expression may call (CQL2's functions
// class, listed at /ogc/functions) and its arrays (the array-functions
// class: A_EQUALS, A_CONTAINS, A_CONTAINEDBY, A_OVERLAPS).
package mapcommons

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kinds of Operand for functions and arrays.
const (
	OperandFunction = "function" // Function of Args
	OperandArray    = "array"    // an array literal: Args are its elements (literals, arrays)
)

// The array functions: an Expr of two Operands, each a property whose
// value is a JSON array (GeoJSON properties that are arrays are kept as
// their JSON text) or an array literal. Elements are equal when they are
// the same JSON value (numbers by value; dates and timestamps as their
// text). A value that is not an array, or null, makes the test UNKNOWN.
const (
	ExprAEquals      = "a_equals"      // the same elements in the same order
	ExprAContains    = "a_contains"    // the first holds every element of the second
	ExprAContainedBy = "a_containedby" // every element of the first is in the second
	ExprAOverlaps    = "a_overlaps"    // they share an element
)

// ArrayOps are the array functions.
var ArrayOps = []string{ExprAEquals, ExprAContains, ExprAContainedBy, ExprAOverlaps}

// MaxArrayElements bounds an array literal's elements (nested ones
// counted), as MaxInValues bounds an IN list.
const MaxArrayElements = MaxInValues

// Function is a function an expression may call: its arguments' and its
// result's types (LitString or LitNumber; a string argument takes string
// and date properties). A null argument makes the result null.
type Function struct {
	Name        string
	Description string
	Args        []string
	Returns     string
	num         func(x float64) (float64, bool) // number → number
	str         func(s string) string           // string → string
	length      bool                            // string → number: its characters
}

// Functions are the functions offered, by name (matched without regard to
// case).
var Functions = []Function{
	{Name: "lower", Description: "The string in lower case (Unicode).", Args: []string{LitString}, Returns: LitString, str: strings.ToLower},
	{Name: "upper", Description: "The string in upper case (Unicode).", Args: []string{LitString}, Returns: LitString, str: strings.ToUpper},
	{Name: "trim", Description: "The string without the white space that starts or ends it.", Args: []string{LitString}, Returns: LitString, str: strings.TrimSpace},
	{Name: "length", Description: "The number of characters of the string.", Args: []string{LitString}, Returns: LitNumber, length: true},
	{Name: "abs", Description: "The absolute value of the number.", Args: []string{LitNumber}, Returns: LitNumber, num: func(x float64) (float64, bool) { return math.Abs(x), true }},
	{Name: "ceil", Description: "The least integer not below the number.", Args: []string{LitNumber}, Returns: LitNumber, num: func(x float64) (float64, bool) { return math.Ceil(x), true }},
	{Name: "floor", Description: "The greatest integer not above the number.", Args: []string{LitNumber}, Returns: LitNumber, num: func(x float64) (float64, bool) { return math.Floor(x), true }},
	{Name: "round", Description: "The integer nearest the number (halves away from zero).", Args: []string{LitNumber}, Returns: LitNumber, num: func(x float64) (float64, bool) { return math.Round(x), true }},
}

// LookupFunction is the function of that name (in any case); nil for none.
func LookupFunction(name string) *Function {
	for i := range Functions {
		if strings.EqualFold(Functions[i].Name, name) {
			return &Functions[i]
		}
	}
	return nil
}

// CallNumber is f of a number; false for a null result. f takes a number.
func (f *Function) CallNumber(x float64) (float64, bool) {
	r, ok := f.num(x)
	if !ok || math.IsNaN(r) || math.IsInf(r, 0) {
		return 0, false
	}
	return r, true
}

// CallString is f of a string: a string (text) or, for a function whose
// result is a number, that number. f takes a string.
func (f *Function) CallString(s []byte) (text []byte, num float64) {
	if f.length {
		return nil, float64(utf8.RuneCount(s))
	}
	return []byte(f.str(string(s))), 0
}

// IsArrayOp reports whether op is one of ArrayOps.
func IsArrayOp(op string) bool { return slices.Contains(ArrayOps, op) }

// ArrayElements are the elements of an array operand's literal, each in
// the canonical form ArrayOf gives a property's elements.
func ArrayElements(o *Operand) []string {
	out := make([]string, 0, len(o.Args))
	for _, a := range o.Args {
		out = append(out, string(appendElement(nil, a)))
	}
	return out
}

func appendElement(dst []byte, o *Operand) []byte {
	if o.Op == OperandArray {
		dst = append(dst, '[')
		for i, a := range o.Args {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendElement(dst, a)
		}
		return append(dst, ']')
	}
	l := o.Literal
	switch l.Kind {
	case LitNumber:
		return strconv.AppendFloat(dst, l.Num, 'g', -1, 64)
	case LitBoolean:
		return strconv.AppendBool(dst, l.Bool)
	}
	return appendJSONValue(dst, l.Str)
}

// ArrayOf reads a property's value as an array: its elements in canonical
// form (ArrayElements'); false when the value is not a JSON array.
func ArrayOf(v []byte) ([]string, bool) {
	v = bytes.TrimLeftFunc(v, unicode.IsSpace)
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var elems []any
	if err := d.Decode(&elems); err != nil {
		return nil, false
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		out = append(out, string(appendJSONValue(nil, e)))
	}
	return out, true
}

// appendJSONValue appends a decoded JSON value in canonical form: numbers
// by value, arrays element by element, objects and strings as encoding/json
// writes them (object members in the order of their names).
func appendJSONValue(dst []byte, v any) []byte {
	switch x := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return strconv.AppendFloat(dst, f, 'g', -1, 64)
		}
		return append(dst, x...)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONValue(dst, e)
		}
		return append(dst, ']')
	case string: // a timestamp in UTC, as a TIMESTAMP literal is
		if len(x) > len(time.DateOnly) {
			if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
				x = t.UTC().Format(time.RFC3339Nano)
			}
		}
		v = x
	}
	b, _ := json.Marshal(v)
	return append(dst, b...)
}

// ArrayRelation is the array function op of arrays a and b (canonical
// elements).
func ArrayRelation(op string, a, b []string) bool {
	switch op {
	case ExprAEquals:
		return slices.Equal(a, b)
	case ExprAContains:
		return containsAll(a, b)
	case ExprAContainedBy:
		return containsAll(b, a)
	case ExprAOverlaps:
		if len(a) > len(b) {
			a, b = b, a
		}
		if len(b) > 8 {
			set := make(map[string]struct{}, len(b))
			for _, x := range b {
				set[x] = struct{}{}
			}
			for _, x := range a {
				if _, ok := set[x]; ok {
					return true
				}
			}
			return false
		}
		for _, x := range a {
			if slices.Contains(b, x) {
				return true
			}
		}
	}
	return false
}

// containsAll reports whether every element of b is in a.
func containsAll(a, b []string) bool {
	if len(a) > 8 {
		set := make(map[string]struct{}, len(a))
		for _, x := range a {
			set[x] = struct{}{}
		}
		for _, x := range b {
			if _, ok := set[x]; !ok {
				return false
			}
		}
		return true
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}
