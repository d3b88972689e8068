package infer

import (
	"testing"

	"mapcommons"
)

func TestColumn(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   mapcommons.AttrType
	}{
		{nil, mapcommons.AttrString},
		{[]string{"", " "}, mapcommons.AttrString},
		{[]string{"1", " -2 ", ""}, mapcommons.AttrInteger},
		{[]string{"1", "2.5"}, mapcommons.AttrFloat},
		{[]string{"1e3", "4"}, mapcommons.AttrFloat},
		{[]string{"1", "007"}, mapcommons.AttrString},
		{[]string{"9223372036854775808"}, mapcommons.AttrFloat},
		{[]string{"1", "x", "2"}, mapcommons.AttrString},
		{[]string{"1e999"}, mapcommons.AttrString},
	} {
		var col Column
		for _, v := range c.values {
			col.Observe(v)
		}
		if got := col.Type(); got != c.want {
			t.Errorf("%q: %s, want %s", c.values, got, c.want)
		}
	}
	if v := Value(mapcommons.AttrInteger, " 42 "); v != int64(42) {
		t.Errorf("integer: %#v", v)
	}
	if v := Value(mapcommons.AttrFloat, "2.5"); v != 2.5 {
		t.Errorf("float: %#v", v)
	}
	if v := Value(mapcommons.AttrFloat, " "); v != nil {
		t.Errorf("blank: %#v", v)
	}
	if v := Value(mapcommons.AttrString, " a "); v != " a " {
		t.Errorf("string: %#v", v)
	}
}
