package atom

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
	"unicode/utf8"

	"mapcommons"
	"mapcommons/format/wkb"
)

// FuzzAtomRead reads any bytes: features or an EINVALID error (the input is
// in memory, so there are no I/O errors), never a panic or a hang; pass 2
// never fails once pass 1 passed; every feature fits the attributes and
// its geometry is valid WKB in range.
func FuzzAtomRead(f *testing.F) {
	for _, s := range []string{atomFeed, rss2Feed, rss1Feed, "", "<rss/>", "<feed><entry/></feed>",
		feedWith(`<georss:where><gml:Envelope><gml:lowerCorner>1 2</gml:lowerCorner><gml:upperCorner>3 4</gml:upperCorner></gml:Envelope></georss:where>`),
		feedWith(`<georss:where><gml:Polygon><gml:outerBoundaryIs><gml:LinearRing><gml:coordinates cs=";" ts="|" decimal=",">0,5;0|1;0|1;1</gml:coordinates></gml:LinearRing></gml:outerBoundaryIs></gml:Polygon></georss:where>`),
		`<?xml version="1.0" encoding="ISO-8859-1"?><rss><channel><item><title>Caf` + "\xe9" + `</title></item></channel></rss>`,
		`<!DOCTYPE x [<!ENTITY a "b">]><feed/>`,
		`<feed xmlns="http://www.w3.org/2005/Atom"><entry><content type="xhtml"><div><p>x<br/></p></div></content></entry></feed>`,
	} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"testdata/write.atom", "testdata/bare.atom"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(data)()
		r, err := Open(bytes.NewReader(data))
		if err != nil {
			checkInvalid(t, err)
			return
		}
		attrs := r.Attributes()
		if len(attrs) > mapcommons.MaxAttributes {
			t.Fatalf("%d attributes", len(attrs))
		}
		for n := int64(0); ; n++ {
			feat, err := r.Next()
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("pass 2 failed after pass 1 passed: %v", err)
			}
			if feat.Position != n || n > int64(len(data)) {
				t.Fatalf("feature %d at position %d", n, feat.Position)
			}
			if len(feat.Values) != len(attrs) {
				t.Fatalf("%d values for %d attributes", len(feat.Values), len(attrs))
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
				case mapcommons.AttrString:
					s, ok2 := v.(string)
					ok = ok || ok2 && s != "" && utf8.ValidString(s)
				}
				if !ok {
					t.Fatalf("value %#v in a %s column", v, attrs[i].Type)
				}
			}
			if feat.Geometry == nil {
				continue
			}
			b, ok, err := wkb.BoundsOf(feat.Geometry)
			if err != nil || !ok || b.MinX < -180 || b.MaxX > 180 || b.MinY < -90 || b.MaxY > 90 {
				t.Fatalf("geometry %x: %v %v %v", feat.Geometry, b, ok, err)
			}
		}
	})
}

func checkInvalid(t *testing.T, err error) {
	t.Helper()
	var e *mapcommons.Error
	if !errors.As(err, &e) || e.Code != mapcommons.EINVALID {
		t.Fatalf("error %v (%T) is not EINVALID", err, err)
	}
}

// watchdog crashes the fuzzing worker, reporting the input, when a call
// takes 10 seconds; the fuzzer itself has no notion of a hang. Use it as
// defer watchdog(input)().
func watchdog(input []byte) (stop func()) {
	if len(input) > 200 {
		input = append(input[:200:200], "..."...)
	}
	t := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %q", input)) })
	return func() { t.Stop() }
}
