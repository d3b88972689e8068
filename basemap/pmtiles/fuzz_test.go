package pmtiles_test

import (
	"bytes"
	"testing"

	"mapcommons/basemap/pmtiles"
	"mapcommons/basemap/pmtiles/pmtilestest"
)

// FuzzOpen opens any bytes as an archive and reads tiles of it: an error
// or a tile, never a panic, nor more memory than the bounds allow. Its
// seeds are archives pmtilestest writes (root only, leaves, a missing
// tile) and the corpus in testdata/fuzz/FuzzOpen; it runs on them in the
// normal suite (go test -fuzz FuzzOpen to search).
func FuzzOpen(f *testing.F) {
	tiles := []pmtilestest.Tile{{Z: 0, Data: []byte("zero")}, {Z: 1, X: 0, Y: 0, Data: []byte("a")},
		{Z: 1, X: 0, Y: 1, Data: []byte("a")}, {Z: 1, X: 1, Y: 1, Data: []byte("b")}, {Z: 2, X: 3, Y: 3, Data: []byte("c")}}
	f.Add(pmtilestest.Write(tiles, pmtilestest.Options{}))
	f.Add(pmtilestest.Write(tiles, pmtilestest.Options{LeafSize: 2}))
	f.Add(pmtilestest.Write(tiles[:1], pmtilestest.Options{TileCompression: pmtiles.NoCompression}))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := pmtiles.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for z := uint8(0); z < 4; z++ {
			for x := uint32(0); x < 1<<z; x++ {
				for y := uint32(0); y < 1<<z; y++ {
					r.Tile(z, x, y)
				}
			}
		}
		r.Metadata()
	})
}

// FuzzDirectory decodes any bytes as a directory: an error or entries,
// never a panic; entries encoded again decode to the same.
func FuzzDirectory(f *testing.F) {
	f.Add(pmtilestest.Directory([]pmtiles.Entry{{TileID: 0, Offset: 0, Length: 10, RunLength: 1},
		{TileID: 1, Offset: 10, Length: 5, RunLength: 3}, {TileID: 9, Offset: 0, Length: 10, RunLength: 0}}))
	f.Add([]byte{0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := pmtiles.ParseDirectory(b)
		if err != nil {
			return
		}
		again, err := pmtiles.ParseDirectory(pmtilestest.Directory(es))
		if err != nil || len(again) != len(es) {
			t.Fatalf("%d entries encoded again: %d, %v", len(es), len(again), err)
		}
		for i := range es {
			if es[i] != again[i] {
				t.Fatalf("entry %d: %+v, again %+v", i, es[i], again[i])
			}
		}
	})
}

// FuzzHeader parses any bytes as a header: an error or a header, never a
// panic.
func FuzzHeader(f *testing.F) {
	f.Add(pmtilestest.Write(nil, pmtilestest.Options{})[:pmtiles.HeaderLen])
	f.Fuzz(func(t *testing.T, b []byte) {
		pmtiles.ParseHeader(b)
	})
}
