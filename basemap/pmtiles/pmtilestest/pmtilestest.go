// Package pmtilestest writes small PMTiles version 3 archives for tests
// (package pmtiles only reads them): the tiles given, deduplicated and run
// together as the specification's writers do, the directories
// gzip-compressed, optionally split into leaf directories. Basemap makes
// the tiles of a small Protomaps-like basemap from the built-in basemap's
// countries.
package pmtilestest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"sort"

	"mapcommons"
	"mapcommons/basemap"
	"mapcommons/basemap/pmtiles"
	"mapcommons/format/wkb"
	"mapcommons/mvt"
)

// Tile is one tile of an archive: its address (y from the north) and its
// bytes as stored.
type Tile struct {
	Z    uint8
	X, Y uint32
	Data []byte
}

// Options are the archive's header fields and form.
type Options struct {
	TileCompression pmtiles.Compression // default gzip
	TileType        pmtiles.TileType    // default MVT
	// LeafSize > 0 puts the entries into leaf directories of that many
	// entries each, the root pointing to them.
	LeafSize int
	Metadata string // JSON; default {}
	// Bounds (west, south, east, north), default the world.
	Bounds *[4]float64
}

// Write returns the archive of tiles.
func Write(tiles []Tile, opt Options) []byte {
	if opt.TileCompression == 0 {
		opt.TileCompression = pmtiles.Gzip
	}
	if opt.TileType == 0 {
		opt.TileType = pmtiles.MVT
	}
	if opt.Metadata == "" {
		opt.Metadata = "{}"
	}
	type idTile struct {
		id uint64
		t  Tile
	}
	ts := make([]idTile, 0, len(tiles))
	minZ, maxZ := uint8(31), uint8(0)
	for _, t := range tiles {
		id, err := pmtiles.TileID(t.Z, t.X, t.Y)
		if err != nil {
			panic(err)
		}
		ts = append(ts, idTile{id, t})
		minZ, maxZ = min(minZ, t.Z), max(maxZ, t.Z)
	}
	if len(ts) == 0 {
		minZ = 0
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].id < ts[j].id })
	// The tile data, each content once; a run of the same content in
	// consecutive ids is one entry.
	var data []byte
	at := map[string]uint64{}
	var es []pmtiles.Entry
	contents := 0
	for _, t := range ts {
		off, ok := at[string(t.t.Data)]
		if !ok {
			off = uint64(len(data))
			at[string(t.t.Data)] = off
			data = append(data, t.t.Data...)
			contents++
		}
		if n := len(es); n > 0 && es[n-1].Offset == off && es[n-1].TileID+uint64(es[n-1].RunLength) == t.id {
			es[n-1].RunLength++
			continue
		}
		es = append(es, pmtiles.Entry{TileID: t.id, Offset: off, Length: uint32(len(t.t.Data)), RunLength: 1})
	}
	root, leaves := es, []byte(nil)
	if opt.LeafSize > 0 {
		root = nil
		for i := 0; i < len(es); i += opt.LeafSize {
			leaf := gz(Directory(es[i:min(i+opt.LeafSize, len(es))]))
			root = append(root, pmtiles.Entry{TileID: es[i].TileID, Offset: uint64(len(leaves)), Length: uint32(len(leaf))})
			leaves = append(leaves, leaf...)
		}
	}
	rootB, meta := gz(Directory(root)), gz([]byte(opt.Metadata))
	h := make([]byte, pmtiles.HeaderLen)
	copy(h, "PMTiles")
	h[7] = 3
	off := uint64(pmtiles.HeaderLen)
	put := func(o int, v uint64) { binary.LittleEndian.PutUint64(h[o:], v) }
	put(8, off)
	put(16, uint64(len(rootB)))
	off += uint64(len(rootB))
	put(24, off)
	put(32, uint64(len(meta)))
	off += uint64(len(meta))
	put(40, off)
	put(48, uint64(len(leaves)))
	off += uint64(len(leaves))
	put(56, off)
	put(64, uint64(len(data)))
	put(72, uint64(len(ts)))
	put(80, uint64(len(es)))
	put(88, uint64(contents))
	h[96] = 1
	h[97] = byte(pmtiles.Gzip)
	h[98] = byte(opt.TileCompression)
	h[99] = byte(opt.TileType)
	h[100], h[101] = minZ, maxZ
	b := [4]float64{-180, -85.051129, 180, 85.051129}
	if opt.Bounds != nil {
		b = *opt.Bounds
	}
	deg := func(o int, v float64) { binary.LittleEndian.PutUint32(h[o:], uint32(int32(v*1e7))) }
	deg(102, b[0])
	deg(106, b[1])
	deg(110, b[2])
	deg(114, b[3])
	h[118] = minZ
	deg(119, (b[0]+b[2])/2)
	deg(123, (b[1]+b[3])/2)
	out := append(h, rootB...)
	out = append(out, meta...)
	out = append(out, leaves...)
	return append(out, data...)
}

// Directory encodes entries as a directory (uncompressed).
func Directory(es []pmtiles.Entry) []byte {
	b := binary.AppendUvarint(nil, uint64(len(es)))
	var last uint64
	for _, e := range es {
		b = binary.AppendUvarint(b, e.TileID-last)
		last = e.TileID
	}
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.RunLength))
	}
	for _, e := range es {
		b = binary.AppendUvarint(b, uint64(e.Length))
	}
	for i, e := range es {
		if i > 0 && e.Offset == es[i-1].Offset+uint64(es[i-1].Length) {
			b = binary.AppendUvarint(b, 0)
		} else {
			b = binary.AppendUvarint(b, e.Offset+1)
		}
	}
	return b
}

// gz is b gzip-compressed.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(b)
	z.Close()
	return buf.Bytes()
}

// Basemap makes the tiles of zooms 0 to maxZoom of a basemap with
// Protomaps' layer names, gzip-compressed: "earth", the built-in
// basemap's countries (land) in each tile that has land, and "water", a
// polygon over the whole tile, in each tile that has none (the same bytes
// in every such tile of a zoom, so the archive has runs).
func Basemap(maxZoom int) ([]Tile, error) {
	var out []Tile
	for z := 0; z <= maxZoom; z++ {
		n := 1 << z
		for x := 0; x < n; x++ {
			for y := 0; y < n; y++ {
				t, err := mvt.NewTile(z, x, y, mvt.DefaultOptions())
				if err != nil {
					return nil, err
				}
				b := t.Bounds()
				earth, err := t.AddLayer("earth", nil, nil)
				if err != nil {
					return nil, err
				}
				q := &mapcommons.FeatureQuery{BBox: &mapcommons.BBox{W: b.MinX, S: b.MinY, E: b.MaxX, N: b.MaxY}}
				land := 0
				err = basemap.ScanCountries(context.Background(), q, func(f *mapcommons.Feature) error {
					land++
					return earth.Add(uint64(f.ID), f.Geometry, nil)
				})
				if err != nil {
					return nil, err
				}
				if land == 0 {
					water, err := t.AddLayer("water", nil, nil)
					if err != nil {
						return nil, err
					}
					ring := []float64{b.MinX, b.MinY, b.MaxX, b.MinY, b.MaxX, b.MaxY, b.MinX, b.MaxY, b.MinX, b.MinY}
					if err := water.Add(1, wkb.AppendPolygon(nil, [][]float64{ring}), nil); err != nil {
						return nil, err
					}
				}
				out = append(out, Tile{Z: uint8(z), X: uint32(x), Y: uint32(y), Data: gz(t.Encode())})
			}
		}
	}
	return out, nil
}
