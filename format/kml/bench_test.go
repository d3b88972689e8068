package kml

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"mapcommons/internal/formattest"
)

// synthetic returns a KML document of n point Placemarks with attributes.
func synthetic(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<kml xmlns="http://www.opengis.net/kml/2.2"><Document>` + "\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `<Placemark><name>p%d</name><ExtendedData><Data name="i"><value>%d</value></Data><Data name="f"><value>%d.5</value></Data><Data name="s"><value>text %d</value></Data></ExtendedData><Point><coordinates>%.6f,%.6f,0</coordinates></Point></Placemark>`+"\n",
			i, i, i, i, float64(i%360)-180, float64(i%180)-90)
	}
	b.WriteString("</Document></kml>\n")
	return b.Bytes()
}

func BenchmarkRead(b *testing.B) {
	formattest.BenchmarkRead(b, synthetic(10000), func(rs io.ReadSeeker) (*Reader, error) { return Open(rs, Options{}) })
}

func BenchmarkReadLongLine(b *testing.B) {
	var doc bytes.Buffer
	doc.WriteString(`<kml><Placemark><LineString><coordinates>`)
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&doc, "%.6f,%.6f,0 ", float64(i%360)-180, float64(i%180)-90)
	}
	doc.WriteString(`</coordinates></LineString></Placemark></kml>`)
	b.SetBytes(int64(doc.Len()))
	for b.Loop() {
		r, err := Open(bytes.NewReader(doc.Bytes()), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
