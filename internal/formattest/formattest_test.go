package formattest

import (
	"errors"
	"io"
	"strings"
	"testing"

	"mapcommons"
	"mapcommons/format/spatialite/sqlitebulk"
	"mapcommons/format/wkb"
)

func TestDatasets(t *testing.T) {
	ds := Datasets(t)
	if len(ds) != len(DeclaredTypes) {
		t.Fatalf("%d datasets, %d declared types", len(ds), len(DeclaredTypes))
	}
	for name, d := range ds {
		if got := sqlitebulk.GeometryCode(d.Meta.GeometryMask); got != DeclaredTypes[name] {
			t.Errorf("%s: mask %b declares %d, DeclaredTypes says %d", name, d.Meta.GeometryMask, got, DeclaredTypes[name])
		}
		if d.Meta.Count != int64(len(d.Feats)) || len(d.WKT) != len(d.Feats) {
			t.Errorf("%s: count %d, %d features, %d WKT", name, d.Meta.Count, len(d.Feats), len(d.WKT))
		}
		n := 0
		err := d.Scan()(func(f *mapcommons.Feature) error {
			if f.Position != int64(n) || len(f.Values) != len(d.Meta.Attributes) || (f.Geometry == nil) != (d.WKT[n] == "") {
				t.Errorf("%s: feature %d: %+v", name, n, f)
			}
			n++
			return nil
		})
		if err != nil || n != len(d.Feats) {
			t.Errorf("%s: scanned %d, %v", name, n, err)
		}
		if e, ok := d.Extent(); ok != (d.Meta.Extent != nil) || ok && e != *d.Meta.Extent {
			t.Errorf("%s: extent %v %v, Meta %v", name, e, ok, d.Meta.Extent)
		}
	}
}

// sliceSource is a FeatureSource of features in memory.
type sliceSource struct {
	attrs []mapcommons.Attribute
	feats []mapcommons.Feature
	err   error
}

func (s *sliceSource) Attributes() []mapcommons.Attribute { return s.attrs }

func (s *sliceSource) Next() (*mapcommons.Feature, error) {
	if len(s.feats) == 0 {
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
	f := &s.feats[0]
	s.feats = s.feats[1:]
	return f, nil
}

func TestCheckSource(t *testing.T) {
	attrs := []mapcommons.Attribute{{Name: "s", Type: mapcommons.AttrString}, {Name: "b", Type: mapcommons.AttrBoolean}}
	src := &sliceSource{attrs: attrs, feats: []mapcommons.Feature{
		{Position: 0, Values: []any{"x", true}, Geometry: wkb.AppendPoint(nil, 1, 2)},
		{Position: 1, Values: []any{"", nil}},
		{Position: 2, Values: []any{nil, false}, Geometry: MustWKT(t, "POINT EMPTY")},
	}}
	if n := CheckSource(t, src, Rules{Booleans: true, EmptyStrings: true, EmptyGeometry: true}); n != 3 {
		t.Errorf("%d features", n)
	}
	n, ext := ReadExtent(t, &sliceSource{feats: []mapcommons.Feature{
		{Geometry: wkb.AppendPoint(nil, 1, 2)}, {}, {Geometry: wkb.AppendPoint(nil, -1, 5)},
	}})
	if n != 3 || ext != [4]float64{-1, 2, 1, 5} {
		t.Errorf("ReadExtent: %d, %v", n, ext)
	}
}

func TestReaders(t *testing.T) {
	b, err := io.ReadAll(ErrReader{strings.NewReader("abc")})
	if string(b) != "abc" || !errors.Is(err, ErrDisk) {
		t.Errorf("ErrReader: %q, %v", b, err)
	}
	c := &ChangingReader{ReadSeeker: strings.NewReader("one"), Second: []byte("two")}
	for _, want := range []string{"one", "two", "two"} { // the second Seek changes the data
		if _, err := c.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(c); string(b) != want {
			t.Errorf("ChangingReader: %q, want %q", b, want)
		}
	}
}
