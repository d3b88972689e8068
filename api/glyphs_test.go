package api_test

// Tests of the glyphs route: the SDF glyph ranges of the Go fonts in
// MapLibre's glyphs protobuf, their caching and their errors.

import (
	"fmt"
	"strings"
	"testing"
)

// pbfGlyph is one glyph of a glyphs range.
type pbfGlyph struct {
	id, width, height, advance uint64
	left, top                  int64
	bitmap                     []byte
}

// decodeGlyphs decodes a glyphs message: its one stack's name and range
// and its glyphs, every field where glyphs.proto has it.
func decodeGlyphs(t *testing.T, b []byte) (name, rng string, glyphs []pbfGlyph) {
	t.Helper()
	stacks := 0
	zig := func(v uint64) int64 { return int64(v>>1) ^ -int64(v&1) }
	err := pbField(b, func(f int, _ uint64, sb []byte) error {
		if f != 1 {
			return fmt.Errorf("glyphs field %d", f)
		}
		stacks++
		return pbField(sb, func(f int, _ uint64, data []byte) error {
			switch f {
			case 1:
				name = string(data)
			case 2:
				rng = string(data)
			case 3:
				var g pbfGlyph
				err := pbField(data, func(f int, v uint64, d []byte) error {
					switch f {
					case 1:
						g.id = v
					case 2:
						g.bitmap = d
					case 3:
						g.width = v
					case 4:
						g.height = v
					case 5:
						g.left = zig(v)
					case 6:
						g.top = zig(v)
					case 7:
						g.advance = v
					default:
						return fmt.Errorf("glyph field %d", f)
					}
					return nil
				})
				glyphs = append(glyphs, g)
				return err
			default:
				return fmt.Errorf("fontstack field %d", f)
			}
			return nil
		})
	})
	if err != nil || stacks != 1 {
		t.Fatalf("glyphs: %v, %d stacks", err, stacks)
	}
	return name, rng, glyphs
}

func TestBasemapGlyphs(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	w := ts.get("/basemap/fonts/Go%20Regular/0-255.pbf", "")
	body := must(t, w, 200)
	if ct := w.Header().Get("Content-Type"); ct != "application/x-protobuf" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=604800" {
		t.Errorf("Cache-Control %q", cc)
	}
	name, rng, glyphs := decodeGlyphs(t, body)
	if name != "Go Regular" || rng != "0-255" {
		t.Fatalf("stack %q range %q", name, rng)
	}
	byID := map[uint64]pbfGlyph{}
	for _, g := range glyphs {
		if g.id > 255 {
			t.Fatalf("glyph %d in range 0-255", g.id)
		}
		if len(g.bitmap) != 0 && len(g.bitmap) != int((g.width+6)*(g.height+6)) {
			t.Fatalf("glyph %d: %d×%d, bitmap of %d bytes", g.id, g.width, g.height, len(g.bitmap))
		}
		byID[g.id] = g
	}
	// The printable ASCII and Latin-1 (less the few the font lacks); no
	// control characters.
	if len(glyphs) < 180 || len(glyphs) > 224 {
		t.Errorf("%d glyphs in 0-255", len(glyphs))
	}
	if _, ok := byID[7]; ok {
		t.Error("a glyph for BEL")
	}
	// 'A' at 24 pixels: some 16 wide and 17-18 high, standing on the
	// baseline (its top 17-18 pixels above it, measured from 26 above).
	a, ok := byID['A']
	if !ok || a.width < 13 || a.width > 18 || a.height < 16 || a.height > 19 || a.advance < 14 || a.advance > 18 ||
		a.left < -1 || a.left > 2 || a.top < -10 || a.top > -7 {
		t.Fatalf("A: %+v", pbfGlyph{id: a.id, width: a.width, height: a.height, left: a.left, top: a.top, advance: a.advance})
	}
	// Its field: inside the ink the middle of the stroke is past the edge
	// (191), the border's corners far outside it (near 0), and values
	// between (a field, not a bitmap).
	inside, outside, between := 0, 0, 0
	for _, v := range a.bitmap {
		switch {
		case v >= 191:
			inside++
		case v < 32:
			outside++
		default:
			between++
		}
	}
	if inside < 20 || outside < 4 || between < 100 {
		t.Errorf("A's field: %d inside, %d outside, %d between", inside, outside, between)
	}
	bw := int(a.width + 6)
	if c := a.bitmap[0]; c > 64 {
		t.Errorf("A's corner %d", c)
	}
	// Down its middle: the apex, the hole, then the crossbar, two runs
	// inside the edge.
	runs, in := 0, false
	for y := range int(a.height + 6) {
		v := a.bitmap[y*bw+bw/2] >= 191
		if v && !in {
			runs++
		}
		in = v
	}
	if runs != 2 {
		t.Errorf("A's middle column: %d runs of ink", runs)
	}
	// A space: advance, no ink.
	if sp, ok := byID[' ']; !ok || sp.width != 0 || len(sp.bitmap) != 0 || sp.advance < 4 {
		t.Errorf("space %+v", sp)
	}
	// Bold is wider.
	_, _, bold := decodeGlyphs(t, must(t, ts.get("/basemap/fonts/Go%20Bold/0-255.pbf", ""), 200))
	for _, g := range bold {
		if g.id == 'A' && g.advance <= a.advance && g.width <= a.width {
			t.Errorf("bold A %d×%d, regular %d×%d", g.width, g.advance, a.width, a.advance)
		}
	}

	// The same again from the cache, and a 304 for its ETag.
	tag := w.Header().Get("ETag")
	if !strings.HasPrefix(tag, `W/"glyphs-`) || string(must(t, ts.get("/basemap/fonts/Go%20Regular/0-255.pbf", ""), 200)) != string(body) {
		t.Fatalf("ETag %q, or another body", tag)
	}
	if w := ts.do(req{method: "GET", path: "/basemap/fonts/Go%20Regular/0-255.pbf", header: map[string]string{"If-None-Match": tag}}); w.Code != 304 {
		t.Errorf("If-None-Match: %d", w.Code)
	}
	// A stack takes its first font served; a higher range holds its own
	// code points (Cyrillic); a range the font has nothing of is empty.
	name, rng, cyr := decodeGlyphs(t, must(t, ts.get("/basemap/fonts/Open%20Sans%20Bold,Go%20Bold,Go%20Regular/1024-1279.pbf", ""), 200))
	if name != "Go Bold" || rng != "1024-1279" || len(cyr) < 64 {
		t.Errorf("stack %q range %q: %d glyphs", name, rng, len(cyr))
	}
	for _, g := range cyr {
		if g.id < 1024 || g.id > 1279 {
			t.Fatalf("glyph %d in 1024-1279", g.id)
		}
	}
	if _, _, none := decodeGlyphs(t, must(t, ts.get("/basemap/fonts/Go%20Regular/65280-65535.pbf", ""), 200)); len(none) > 10 {
		t.Errorf("%d glyphs in 65280-65535", len(none))
	}

	// Unknown stacks and bad ranges: 404 JSON errors.
	for _, p := range []string{"/basemap/fonts/Arial/0-255.pbf", "/basemap/fonts/go%20regular/0-255.pbf",
		"/basemap/fonts/Go%20Regular/0-256.pbf", "/basemap/fonts/Go%20Regular/1-256.pbf", "/basemap/fonts/Go%20Regular/65536-65791.pbf",
		"/basemap/fonts/Go%20Regular/-256--1.pbf", "/basemap/fonts/Go%20Regular/0255.pbf", "/basemap/fonts/Go%20Regular/00-255.pbf",
		"/basemap/fonts/Go%20Regular/a-b.pbf", "/basemap/fonts/Go%20Regular/0-255.png"} {
		errorOf(t, ts.get(p, ""), 404, "not_found", "")
	}
	errorOf(t, ts.do(req{method: "POST", path: "/basemap/fonts/Go%20Regular/0-255.pbf"}), 405, "method_not_allowed", "POST")
}

// TestBasemapStyleGlyphs: the built-in style's glyphs are this server's,
// and its place labels use a font they serve.
func TestBasemapStyleGlyphs(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	st := decode[map[string]any](t, must(t, ts.get("/basemap/style.json", ""), 200))
	g, _ := st["glyphs"].(string)
	if !strings.HasSuffix(g, "/basemap/fonts/{fontstack}/{range}.pbf") || !strings.HasPrefix(g, "http") {
		t.Fatalf("glyphs %q", g)
	}
	var labels map[string]any
	for _, l := range st["layers"].([]any) {
		if l := l.(map[string]any); l["id"] == "place-labels" {
			labels = l
		}
	}
	if labels == nil || labels["type"] != "symbol" || labels["source-layer"] != "places" {
		t.Fatalf("place-labels %v", labels)
	}
	font := labels["layout"].(map[string]any)["text-font"].([]any)[0].(string)
	path := strings.NewReplacer("{fontstack}", strings.ReplaceAll(font, " ", "%20"), "{range}", "0-255").Replace(g[strings.Index(g, "/basemap/"):])
	must(t, ts.get(path, ""), 200)
}
