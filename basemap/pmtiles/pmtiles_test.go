package pmtiles_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"mapcommons/basemap/pmtiles"
	"mapcommons/basemap/pmtiles/pmtilestest"
)

// TestTileID checks the Hilbert ids against the specification's examples
// (zoom 0's one tile, zoom 1's four in curve order, the first of zoom 2).
func TestTileID(t *testing.T) {
	for _, c := range []struct {
		z    uint8
		x, y uint32
		want uint64
	}{{0, 0, 0, 0}, {1, 0, 0, 1}, {1, 0, 1, 2}, {1, 1, 1, 3}, {1, 1, 0, 4}, {2, 0, 0, 5}, {3, 0, 0, 21}, {3, 7, 0, 84}} {
		got, err := pmtiles.TileID(c.z, c.x, c.y)
		if err != nil || got != c.want {
			t.Errorf("TileID(%d, %d, %d) = %d, %v; want %d", c.z, c.x, c.y, got, err, c.want)
		}
	}
	if _, err := pmtiles.TileID(2, 4, 0); err == nil {
		t.Error("TileID(2, 4, 0): no error for a tile outside its zoom")
	}
	if _, err := pmtiles.TileID(32, 0, 0); err == nil {
		t.Error("TileID(32, 0, 0): no error")
	}
}

// basemapArchive writes the test basemap of zooms 0 to 3 into a file,
// its entries in leaves of leafSize (0: all in the root).
func basemapArchive(t testing.TB, leafSize int) (string, []pmtilestest.Tile) {
	tiles, err := pmtilestest.Basemap(3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("test-%d.pmtiles", leafSize))
	b := [4]float64{-180, -85, 180, 85}
	if err := os.WriteFile(path, pmtilestest.Write(tiles, pmtilestest.Options{LeafSize: leafSize, Bounds: &b, Metadata: `{"name":"test"}`}), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, tiles
}

func open(t testing.TB, path string) *pmtiles.Reader {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	r, err := pmtiles.Open(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReader reads every tile of the test basemap back, with the entries
// in the root and in leaf directories, and the header's fields; the ocean
// tiles (the same bytes) make runs.
func TestReader(t *testing.T) {
	for _, leaf := range []int{0, 7} {
		path, tiles := basemapArchive(t, leaf)
		r := open(t, path)
		h := r.Header()
		if h.MinZoom != 0 || h.MaxZoom != 3 || h.TileType != pmtiles.MVT || h.TileCompression != pmtiles.Gzip ||
			h.InternalCompression != pmtiles.Gzip || h.MinLon != -180 || h.MaxLat != 85 || h.AddressedTiles != uint64(len(tiles)) {
			t.Errorf("leaf %d: header %+v", leaf, h)
		}
		if h.TileEntries >= h.AddressedTiles || h.TileContents >= h.AddressedTiles {
			t.Errorf("leaf %d: %d entries and %d contents for %d tiles: no runs, no shared contents", leaf, h.TileEntries, h.TileContents, h.AddressedTiles)
		}
		if (leaf > 0) != (h.LeafLength > 0) {
			t.Errorf("leaf %d: a leaf section of %d bytes", leaf, h.LeafLength)
		}
		for _, tl := range tiles {
			got, err := r.Tile(tl.Z, tl.X, tl.Y)
			if err != nil || !bytes.Equal(got, tl.Data) {
				t.Fatalf("leaf %d: tile %d/%d/%d: %d bytes, %v; want %d", leaf, tl.Z, tl.X, tl.Y, len(got), err, len(tl.Data))
			}
		}
		// Outside the zooms or the archive: none, no error.
		for _, c := range [][3]uint32{{4, 0, 0}, {1, 2, 0}, {31, 5, 5}} {
			if got, err := r.Tile(uint8(c[0]), c[1], c[2]); got != nil || err != nil {
				t.Errorf("leaf %d: tile %v: %d bytes, %v", leaf, c, len(got), err)
			}
		}
		md, err := r.Metadata()
		if err != nil || string(md) != `{"name":"test"}` {
			t.Errorf("leaf %d: metadata %q, %v", leaf, md, err)
		}
	}
}

// TestReaderMissing: an archive without some tiles answers none for them.
func TestReaderMissing(t *testing.T) {
	tiles := []pmtilestest.Tile{{Z: 2, X: 1, Y: 1, Data: []byte("a")}, {Z: 2, X: 3, Y: 0, Data: []byte("b")}}
	b := pmtilestest.Write(tiles, pmtilestest.Options{})
	r, err := pmtiles.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for x := uint32(0); x < 4; x++ {
		for y := uint32(0); y < 4; y++ {
			got, err := r.Tile(2, x, y)
			want := ""
			if x == 1 && y == 1 {
				want = "a"
			} else if x == 3 && y == 0 {
				want = "b"
			}
			if err != nil || string(got) != want {
				t.Errorf("2/%d/%d: %q, %v; want %q", x, y, got, err, want)
			}
		}
	}
}

// TestOpenErrors: broken files are errors at Open, not panics.
func TestOpenErrors(t *testing.T) {
	good := pmtilestest.Write([]pmtilestest.Tile{{Z: 0, Data: []byte("x")}}, pmtilestest.Options{})
	for name, mutate := range map[string]func(b []byte) []byte{
		"short":          func(b []byte) []byte { return b[:100] },
		"magic":          func(b []byte) []byte { b[0] = 'X'; return b },
		"version 2":      func(b []byte) []byte { b[7] = 2; return b },
		"root past end":  func(b []byte) []byte { b[16] = 0xff; b[17] = 0xff; return b },
		"tile type":      func(b []byte) []byte { b[99] = 9; return b },
		"zooms":          func(b []byte) []byte { b[100], b[101] = 5, 2; return b },
		"brotli inside":  func(b []byte) []byte { b[97] = byte(pmtiles.Brotli); return b },
		"root not gzip":  func(b []byte) []byte { b[pmtiles.HeaderLen] ^= 0xff; return b },
		"truncated file": func(b []byte) []byte { return b[:len(b)-1] },
	} {
		b := mutate(append([]byte(nil), good...))
		if _, err := pmtiles.Open(bytes.NewReader(b), int64(len(b))); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestReferenceReader reads the test archives with the reference reader,
// the npm package pmtiles (testdata/reference.mjs), and compares its
// header and its tiles (ids, lengths, hashes) with ours. It skips without
// node and node_modules unless MAPCOMMONS_REQUIRE_NPM=1.
func TestReferenceReader(t *testing.T) {
	pkg := filepath.Join("..", "..", "node_modules", "pmtiles")
	_, err := os.Stat(pkg)
	_, nerr := exec.LookPath("node")
	if err != nil || nerr != nil {
		if os.Getenv("MAPCOMMONS_REQUIRE_NPM") == "1" {
			t.Fatalf("node or %s is missing (npm ci) and MAPCOMMONS_REQUIRE_NPM=1", pkg)
		}
		t.Skipf("node or %s is missing: run npm ci", pkg)
	}
	for _, leaf := range []int{0, 5} {
		path, tiles := basemapArchive(t, leaf)
		r := open(t, path)
		args := []string{filepath.Join("testdata", "reference.mjs"), path, "4/0/0", "0/0/0"}
		for _, tl := range tiles {
			args = append(args, fmt.Sprintf("%d/%d/%d", tl.Z, tl.X, tl.Y))
		}
		out, err := exec.Command("node", args...).Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		var ref struct {
			Header struct {
				SpecVersion                                                   int
				RootDirectoryOffset, RootDirectoryLength, LeafDirectoryLength uint64
				TileDataOffset, TileDataLength                                uint64
				NumAddressedTiles, NumTileEntries, NumTileContents            uint64
				InternalCompression, TileCompression, TileType                int
				MinZoom, MaxZoom, CenterZoom                                  int
				MinLon, MinLat, MaxLon, MaxLat, CenterLon, CenterLat          float64
			}
			Tiles map[string]struct {
				ID   uint64
				Tile *struct {
					Length int
					SHA256 string
				}
			}
		}
		if err := json.Unmarshal(out, &ref); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		h, rh := r.Header(), ref.Header
		if rh.SpecVersion != 3 || rh.RootDirectoryOffset != h.RootOffset || rh.RootDirectoryLength != h.RootLength ||
			rh.LeafDirectoryLength != h.LeafLength || rh.TileDataOffset != h.TileOffset || rh.TileDataLength != h.TileLength ||
			rh.NumAddressedTiles != h.AddressedTiles || rh.NumTileEntries != h.TileEntries || rh.NumTileContents != h.TileContents ||
			rh.InternalCompression != int(h.InternalCompression) || rh.TileCompression != int(h.TileCompression) ||
			rh.TileType != int(h.TileType) || rh.MinZoom != int(h.MinZoom) || rh.MaxZoom != int(h.MaxZoom) ||
			rh.CenterZoom != int(h.CenterZoom) || rh.MinLon != h.MinLon || rh.MinLat != h.MinLat || rh.MaxLon != h.MaxLon ||
			rh.MaxLat != h.MaxLat || rh.CenterLon != h.CenterLon || rh.CenterLat != h.CenterLat {
			t.Errorf("leaf %d: the reference's header %+v, ours %+v", leaf, rh, h)
		}
		if len(ref.Tiles) != len(tiles)+1 {
			t.Errorf("leaf %d: the reference read %d tiles, want %d", leaf, len(ref.Tiles), len(tiles)+1)
		}
		for k, rt := range ref.Tiles {
			var z uint8
			var x, y uint32
			fmt.Sscanf(k, "%d/%d/%d", &z, &x, &y)
			id, _ := pmtiles.TileID(z, x, y)
			if id != rt.ID {
				t.Errorf("leaf %d: %s: id %d, the reference's %d", leaf, k, id, rt.ID)
			}
			b, err := r.Tile(z, x, y)
			if err != nil {
				t.Fatal(err)
			}
			if (b == nil) != (rt.Tile == nil) {
				t.Errorf("leaf %d: %s: %d bytes, the reference's %v", leaf, k, len(b), rt.Tile)
				continue
			}
			if b == nil {
				continue
			}
			plain := gunzip(t, b)
			sum := sha256.Sum256(plain)
			if len(plain) != rt.Tile.Length || hex.EncodeToString(sum[:]) != rt.Tile.SHA256 {
				t.Errorf("leaf %d: %s: %d bytes %x, the reference's %d %s", leaf, k, len(plain), sum[:4], rt.Tile.Length, rt.Tile.SHA256[:8])
			}
		}
	}
}

func gunzip(t testing.TB, b []byte) []byte {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
