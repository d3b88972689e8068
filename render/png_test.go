package render

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"mapcommons/style"
)

// TestEncodePNG: the encoder's PNG reads back, through image/png, to the
// pixels image/png's own encoding of the same image reads back to: for
// random premultiplied pixels (any alpha), an opaque image (written as
// RGB), a drawn map, odd sizes and a sub-image.
func TestEncodePNG(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	random := image.NewRGBA(image.Rect(0, 0, 97, 31))
	for i := 0; i < len(random.Pix); i += 4 {
		a := uint8(rng.IntN(256))
		if rng.IntN(4) == 0 {
			a = []uint8{0, 255}[rng.IntN(2)]
		}
		random.Pix[i+3] = a
		for k := range 3 {
			random.Pix[i+k] = uint8(rng.IntN(int(a) + 1)) // premultiplied: at most alpha
		}
	}
	opaque := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for i := 0; i < len(opaque.Pix); i += 4 {
		opaque.Pix[i], opaque.Pix[i+1], opaque.Pix[i+2], opaque.Pix[i+3] = uint8(i), uint8(i/3), uint8(rng.IntN(256)), 255
	}
	s, ds := counties(t)
	e := ds.Extent
	res, err := Draw(context.Background(), s.Features, style.NewClassifier(s.Features),
		Request{Layers: []Layer{{Layer: choropleth("BIR74"), Dataset: ds}}, BBox: [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, Width: 300, Height: 123})
	if err != nil {
		t.Fatal(err)
	}
	for name, img := range map[string]*image.RGBA{
		"random": random, "opaque": opaque, "map": res.Image, "one pixel": image.NewRGBA(image.Rect(0, 0, 1, 1)),
		"sub-image": random.SubImage(image.Rect(10, 5, 60, 30)).(*image.RGBA),
	} {
		var ours, theirs bytes.Buffer
		if err := EncodePNG(&ours, img); err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(&theirs, img); err != nil {
			t.Fatal(err)
		}
		// IHDR's colour type: 2 (RGB) for an opaque image, else 6 (RGBA).
		if ct, want := ours.Bytes()[25], map[bool]byte{true: 2, false: 6}[img.Opaque()]; ct != want {
			t.Errorf("%s: colour type %d, want %d", name, ct, want)
		}
		a, err := png.Decode(&ours)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := png.Decode(&theirs)
		if err != nil {
			t.Fatal(err)
		}
		if a.Bounds().Size() != b.Bounds().Size() {
			t.Fatalf("%s: %v, image/png %v", name, a.Bounds(), b.Bounds())
		}
		ab, bb := a.Bounds(), b.Bounds()
		for y := 0; y < ab.Dy(); y++ {
			for x := 0; x < ab.Dx(); x++ {
				ca := color.NRGBAModel.Convert(a.At(ab.Min.X+x, ab.Min.Y+y)).(color.NRGBA)
				cb := color.NRGBAModel.Convert(b.At(bb.Min.X+x, bb.Min.Y+y)).(color.NRGBA)
				if ca.A == 0 && cb.A == 0 {
					continue // (a transparent pixel's colour is nothing)
				}
				if ca != cb {
					t.Fatalf("%s: (%d, %d) reads %v, image/png's %v", name, x, y, ca, cb)
				}
			}
		}
	}
}

// BenchmarkEncodePNG: this package's encoder and image/png's on the same
// drawn 1024×768 map (the counties choropleth), with the bytes each makes.
//
//	go test -run '^$' -bench EncodePNG -count 5 ./render/
func BenchmarkEncodePNG(b *testing.B) {
	s, ds := counties(b)
	e := ds.Extent
	res, err := Draw(context.Background(), s.Features, style.NewClassifier(s.Features),
		Request{Layers: []Layer{{Layer: choropleth("BIR74"), Dataset: ds}}, BBox: [4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}, Width: 1024, Height: 768})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		enc  func(*bytes.Buffer) error
	}{
		{"render", func(w *bytes.Buffer) error { return EncodePNG(w, res.Image) }},
		{"image-png", func(w *bytes.Buffer) error { return png.Encode(w, res.Image) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := c.enc(&buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes")
		})
	}
}
