package formattest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/wkb"
)

// Rules are what CheckSource requires of the features of a source, beyond
// what it requires of every source.
type Rules struct {
	MaxFeatures   int64 // more features fail the test (0: no bound)
	Booleans      bool  // a boolean attribute may hold bool values (else only NULLs)
	EmptyStrings  bool  // a string value may be "" (else a missing value is NULL)
	NeedGeometry  bool  // every feature has a geometry, none empty
	EmptyGeometry bool  // a geometry may be empty

	// Geometry, when not nil, checks each decoded geometry further.
	Geometry func(t testing.TB, g wkb.Geom)
}

// CheckSource reads src to the end and checks the invariants of every
// mapcommons.FeatureSource: no more attributes than mapcommons allows; no
// error but io.EOF (a reader checks its input in a first pass, in Open, so
// the features never fail once it opened); positions 0, 1, … in order; one
// value per attribute, NULL or of the attribute's type (integer int64,
// float float64, boolean bool when r.Booleans, string valid UTF-8, not
// empty unless r.EmptyStrings, date always NULL); geometries valid WKB in
// lon/lat range, nil or not empty as r says. It returns the number of
// features read.
func CheckSource(t testing.TB, src mapcommons.FeatureSource, r Rules) int64 {
	t.Helper()
	attrs := src.Attributes()
	if len(attrs) > mapcommons.MaxAttributes {
		t.Fatalf("%d attributes", len(attrs))
	}
	for n := int64(0); ; n++ {
		feat, err := src.Next()
		if err == io.EOF {
			return n
		} else if err != nil {
			CheckInvalid(t, err)
			t.Fatalf("pass 2 failed after pass 1 passed: %v", err)
		}
		if feat.Position != n || r.MaxFeatures > 0 && n >= r.MaxFeatures {
			t.Fatalf("feature %d at position %d (at most %d features)", n, feat.Position, r.MaxFeatures)
		}
		if len(feat.Values) != len(attrs) {
			t.Fatalf("feature %d: %d values for %d attributes", n, len(feat.Values), len(attrs))
		}
		for i, v := range feat.Values {
			ok := v == nil
			switch attrs[i].Type {
			case mapcommons.AttrInteger:
				_, ok2 := v.(int64)
				ok = ok || ok2
			case mapcommons.AttrFloat:
				_, ok2 := v.(float64)
				ok = ok || ok2
			case mapcommons.AttrBoolean:
				_, ok2 := v.(bool)
				ok = ok || ok2 && r.Booleans
			case mapcommons.AttrString:
				s, ok2 := v.(string)
				ok = ok || ok2 && (s != "" || r.EmptyStrings) && utf8.ValidString(s)
			}
			if !ok {
				t.Fatalf("value %#v in a %s column", v, attrs[i].Type)
			}
		}
		if feat.Geometry == nil && !r.NeedGeometry {
			continue
		}
		g, err := wkb.Decode(feat.Geometry)
		if err != nil {
			t.Fatalf("geometry %x: %v", feat.Geometry, err)
		}
		b, ok := g.Bounds()
		if !ok && !r.EmptyGeometry || ok && (b.MinX < -180 || b.MaxX > 180 || b.MinY < -90 || b.MaxY > 90) {
			t.Fatalf("geometry %x: bounds %v %v", feat.Geometry, b, ok)
		}
		if r.Geometry != nil {
			r.Geometry(t, g)
		}
	}
}

// CheckRead opens data with open, as a fuzz test does with any input
// (under Watchdog): open must fail with EINVALID (the input is in memory,
// so there are no I/O errors), or give a source that CheckSource passes
// with the rules r. It returns the source and its number of features (the
// zero S and 0 after an error).
func CheckRead[S mapcommons.FeatureSource](t testing.TB, data []byte, open func(io.ReadSeeker) (S, error), r Rules) (S, int64) {
	t.Helper()
	defer Watchdog(string(data))()
	src, err := open(bytes.NewReader(data))
	if err != nil {
		CheckInvalid(t, err)
		var zero S
		return zero, 0
	}
	return src, CheckSource(t, src, r)
}

// Each calls fn with each feature of src, in order, and its geometry as
// WKT ("" for none). It checks that the positions are 0, 1, … and that
// there is one value per attribute, and returns the first error of src
// (but io.EOF), of those checks or of fn.
func Each(src mapcommons.FeatureSource, fn func(f *mapcommons.Feature, wkt string) error) error {
	for n := int64(0); ; n++ {
		f, err := src.Next()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if f.Position != n {
			return fmt.Errorf("position %d, want %d", f.Position, n)
		}
		if len(f.Values) != len(src.Attributes()) {
			return fmt.Errorf("%d values for %d attributes", len(f.Values), len(src.Attributes()))
		}
		var w []byte
		if f.Geometry != nil {
			if w, err = wkb.ToWKT(nil, f.Geometry); err != nil {
				return err
			}
		}
		if err := fn(f, string(w)); err != nil {
			return err
		}
	}
}

// Schema renders attributes as "name:type …".
func Schema(attrs []mapcommons.Attribute) string {
	var s []string
	for _, a := range attrs {
		s = append(s, a.Name+":"+string(a.Type))
	}
	return strings.Join(s, " ")
}

// WantInvalid fails the test unless err is an EINVALID error whose text
// contains want.
func WantInvalid(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if mapcommons.ErrorCode(err) != mapcommons.EINVALID {
		t.Fatalf("error %v is not EINVALID", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want %q", err, want)
	}
}

// CheckInvalid fails the test unless err is an EINVALID *mapcommons.Error.
func CheckInvalid(t testing.TB, err error) {
	t.Helper()
	var e *mapcommons.Error
	if !errors.As(err, &e) || e.Code != mapcommons.EINVALID {
		t.Fatalf("error %v (%T) is not EINVALID", err, err)
	}
}

// Watchdog crashes the fuzzing worker, reporting the input, when a call
// takes 10 seconds; the fuzzer itself has no notion of a hang. Use it as
// defer Watchdog(input)().
func Watchdog(input string) (stop func()) {
	if len(input) > 200 {
		input = input[:200] + "..."
	}
	t := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %q", input)) })
	return func() { t.Stop() }
}

// Drain reads src to the end, failing on any error but io.EOF.
func Drain(tb testing.TB, src mapcommons.FeatureSource) {
	tb.Helper()
	for {
		if _, err := src.Next(); err == io.EOF {
			return
		} else if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkRead opens data with open and reads all its features per op.
func BenchmarkRead[S mapcommons.FeatureSource](b *testing.B, data []byte, open func(io.ReadSeeker) (S, error)) {
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		r, err := open(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		Drain(b, r)
	}
}

// ReadExtent reads src to the end and returns the number of features and
// the extent of their geometries (minx, miny, maxx, maxy).
func ReadExtent(t testing.TB, src mapcommons.FeatureSource) (int64, [4]float64) {
	t.Helper()
	var n int64
	ext := wkb.EmptyRect
	for {
		f, err := src.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		if f.Geometry == nil {
			continue
		} else if b, ok, err := wkb.BoundsOf(f.Geometry); err != nil {
			t.Fatal(err)
		} else if ok {
			ext = ext.Extend(b)
		}
	}
	return n, [4]float64{ext.MinX, ext.MinY, ext.MaxX, ext.MaxY}
}

// ScanOf returns a Scan over feats, which passes a copy of each feature.
func ScanOf(feats []mapcommons.Feature) format.Scan {
	return func(fn func(*mapcommons.Feature) error) error {
		for i := range feats {
			f := feats[i] // the scan reuses one feature
			if err := fn(&f); err != nil {
				return err
			}
		}
		return nil
	}
}

// ErrDisk is the error of ErrReader.
var ErrDisk = errors.New("disk on fire")

// ErrReader fails with ErrDisk after its data.
type ErrReader struct{ *strings.Reader }

func (r ErrReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	if err == io.EOF {
		return n, ErrDisk
	}
	return n, err
}

// ChangingReader serves its ReadSeeker for pass 1 and Second after the seek
// back (its second Seek), as a file changed between the passes would.
type ChangingReader struct {
	io.ReadSeeker
	Second []byte
	seeks  int
}

func (c *ChangingReader) Seek(off int64, whence int) (int64, error) {
	c.seeks++
	if c.seeks == 2 {
		c.ReadSeeker = bytes.NewReader(c.Second)
	}
	return c.ReadSeeker.Seek(off, whence)
}
