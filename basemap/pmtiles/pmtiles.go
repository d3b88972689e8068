// Package pmtiles reads PMTiles version 3 archives
// (https://github.com/protomaps/PMTiles/blob/main/spec/v3/spec.md): one
// file holding a tile pyramid, its tiles found through directories of
// Hilbert-ordered tile ids. The server serves a Protomaps basemap from
// such a file (--basemap-pmtiles).
//
// It is our own reader, not github.com/protomaps/go-pmtiles: that module
// imports gocloud.dev with the AWS, GCS and Azure SDKs even for its header
// functions, and a program that calls only its DeserializeHeader builds to
// 49.6 MB against 2.5 MB without it (measured with go build), when the
// whole server is 39 MB. Reading a local file needs a few hundred lines.
//
// A file may be hostile: every length read from it is bounded before
// anything of that size is allocated or read (a directory at most
// MaxDirectory bytes compressed and decompressed, a tile at most MaxTile,
// the leaf depth at most 4), and a malformed header or directory is an
// error, never a panic (FuzzHeader and FuzzDirectory). Directories read
// are kept in a bounded cache.
package pmtiles

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
)

// HeaderLen is the length of a version 3 header.
const HeaderLen = 127

// Bounds of what a file may make the reader hold.
const (
	MaxDirectory = 16 << 20 // a directory's bytes, compressed or not
	MaxEntries   = 1 << 20  // a directory's entries
	MaxTile      = 16 << 20 // a tile's bytes
	maxDepth     = 4        // root and leaves: the spec's writers use at most 3 levels
	cacheEntries = 64       // directories kept
)

// Compression is a compression of the internal directories or of tiles.
type Compression uint8

// The compressions of the specification.
const (
	UnknownCompression Compression = 0
	NoCompression      Compression = 1
	Gzip               Compression = 2
	Brotli             Compression = 3
	Zstd               Compression = 4
)

// TileType is the format of the tiles.
type TileType uint8

// The tile types of the specification.
const (
	UnknownTile TileType = 0
	MVT         TileType = 1
	PNG         TileType = 2
	JPEG        TileType = 3
	WebP        TileType = 4
	AVIF        TileType = 5
)

// Header is a version 3 header.
type Header struct {
	RootOffset, RootLength         uint64
	MetadataOffset, MetadataLength uint64
	LeafOffset, LeafLength         uint64
	TileOffset, TileLength         uint64
	AddressedTiles, TileEntries    uint64
	TileContents                   uint64
	Clustered                      bool
	InternalCompression            Compression
	TileCompression                Compression
	TileType                       TileType
	MinZoom, MaxZoom               uint8
	// Bounds: west, south, east, north in degrees (stored as 1e-7 degree).
	MinLon, MinLat, MaxLon, MaxLat float64
	CenterZoom                     uint8
	CenterLon, CenterLat           float64
}

// ParseHeader reads a version 3 header from the first HeaderLen bytes of
// b, checking its magic, version and enumerations (not its offsets: see
// Open).
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderLen {
		return h, fmt.Errorf("pmtiles: a header of %d bytes, want %d", len(b), HeaderLen)
	}
	if string(b[:7]) != "PMTiles" {
		return h, errors.New("pmtiles: not a PMTiles file (no magic)")
	}
	if b[7] != 3 {
		return h, fmt.Errorf("pmtiles: version %d, want 3", b[7])
	}
	u := func(o int) uint64 { return binary.LittleEndian.Uint64(b[o:]) }
	deg := func(o int) float64 { return float64(int32(binary.LittleEndian.Uint32(b[o:]))) / 1e7 }
	h = Header{
		RootOffset: u(8), RootLength: u(16), MetadataOffset: u(24), MetadataLength: u(32),
		LeafOffset: u(40), LeafLength: u(48), TileOffset: u(56), TileLength: u(64),
		AddressedTiles: u(72), TileEntries: u(80), TileContents: u(88),
		Clustered: b[96] == 1, InternalCompression: Compression(b[97]), TileCompression: Compression(b[98]),
		TileType: TileType(b[99]), MinZoom: b[100], MaxZoom: b[101],
		MinLon: deg(102), MinLat: deg(106), MaxLon: deg(110), MaxLat: deg(114),
		CenterZoom: b[118], CenterLon: deg(119), CenterLat: deg(123),
	}
	if h.InternalCompression > Zstd || h.TileCompression > Zstd {
		return h, fmt.Errorf("pmtiles: unknown compression %d/%d", h.InternalCompression, h.TileCompression)
	}
	if h.TileType > AVIF {
		return h, fmt.Errorf("pmtiles: unknown tile type %d", h.TileType)
	}
	if h.MinZoom > h.MaxZoom || h.MaxZoom > 31 {
		return h, fmt.Errorf("pmtiles: zooms %d to %d", h.MinZoom, h.MaxZoom)
	}
	return h, nil
}

// Entry is one entry of a directory: RunLength tiles from TileID with the
// same bytes at Offset, Length of the tile data; a RunLength of 0 is a
// leaf directory at Offset, Length of the leaf section.
type Entry struct {
	TileID, Offset    uint64
	Length, RunLength uint32
}

// ParseDirectory decodes a directory's (decompressed) bytes: the count,
// then the tile ids delta-encoded, the run lengths, the lengths and the
// offsets (0 after the first: just after the entry before), all varints.
func ParseDirectory(b []byte) ([]Entry, error) {
	r := bytes.NewReader(b)
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fmt.Errorf("pmtiles: directory: %w", err)
	}
	// Each entry takes at least four bytes.
	if n > MaxEntries || n > uint64(len(b))/4 {
		return nil, fmt.Errorf("pmtiles: directory of %d entries in %d bytes", n, len(b))
	}
	es := make([]Entry, n)
	var id uint64
	for i := range es {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("pmtiles: directory tile id: %w", err)
		}
		if i > 0 && v == 0 || id+v < id {
			return nil, errors.New("pmtiles: directory tile ids not increasing")
		}
		id += v
		es[i].TileID = id
	}
	for pass := 0; pass < 2; pass++ {
		for i := range es {
			v, err := binary.ReadUvarint(r)
			if err != nil {
				return nil, fmt.Errorf("pmtiles: directory: %w", err)
			}
			if v > 1<<32-1 {
				return nil, fmt.Errorf("pmtiles: directory value %d out of range", v)
			}
			if pass == 0 {
				es[i].RunLength = uint32(v)
			} else {
				es[i].Length = uint32(v)
			}
		}
	}
	for i := range es {
		v, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, fmt.Errorf("pmtiles: directory offset: %w", err)
		}
		switch {
		case v == 0 && i > 0:
			es[i].Offset = es[i-1].Offset + uint64(es[i-1].Length)
		case v == 0:
			return nil, errors.New("pmtiles: directory's first offset is 0")
		default:
			es[i].Offset = v - 1
		}
	}
	return es, nil
}

// TileID is the Hilbert tile id of z/x/y (y from the north): the tiles of
// the zooms before z, then the position of x, y on z's Hilbert curve.
func TileID(z uint8, x, y uint32) (uint64, error) {
	if z > 31 {
		return 0, fmt.Errorf("pmtiles: zoom %d over 31", z)
	}
	n := uint64(1) << z
	if uint64(x) >= n || uint64(y) >= n {
		return 0, fmt.Errorf("pmtiles: tile %d/%d/%d outside its zoom", z, x, y)
	}
	acc := ((uint64(1) << (2 * uint64(z))) - 1) / 3
	tx, ty := uint64(x), uint64(y)
	var d uint64
	for s := n / 2; s > 0; s /= 2 {
		var rx, ry uint64
		if tx&s != 0 {
			rx = 1
		}
		if ty&s != 0 {
			ry = 1
		}
		d += s * s * ((3 * rx) ^ ry)
		if ry == 0 {
			if rx == 1 {
				tx, ty = s-1-tx, s-1-ty
			}
			tx, ty = ty, tx
		}
	}
	return acc + d, nil
}

// find returns the entry of id in es: the last at or before it, if it
// covers id (a tile's run or a leaf).
func find(es []Entry, id uint64) (Entry, bool) {
	i := sort.Search(len(es), func(i int) bool { return es[i].TileID > id }) - 1
	if i < 0 {
		return Entry{}, false
	}
	e := es[i]
	if e.RunLength == 0 || id-e.TileID < uint64(e.RunLength) {
		return e, true
	}
	return Entry{}, false
}

// Reader reads an archive. Safe for concurrent use.
type Reader struct {
	r    io.ReaderAt
	size int64
	h    Header

	mu    sync.Mutex
	cache map[uint64][]Entry // by the directory's offset in the file
	order []uint64           // the cache's keys, oldest first
}

// Open reads and checks the header of the archive r of size bytes and its
// root directory. Only gzip or no internal compression is read.
func Open(r io.ReaderAt, size int64) (*Reader, error) {
	b := make([]byte, HeaderLen)
	if size < HeaderLen {
		return nil, fmt.Errorf("pmtiles: a file of %d bytes is too short for a header", size)
	}
	if _, err := r.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("pmtiles: header: %w", err)
	}
	h, err := ParseHeader(b)
	if err != nil {
		return nil, err
	}
	if h.InternalCompression != NoCompression && h.InternalCompression != Gzip {
		return nil, fmt.Errorf("pmtiles: internal compression %d is not read (only none or gzip)", h.InternalCompression)
	}
	for _, s := range [][2]uint64{{h.RootOffset, h.RootLength}, {h.MetadataOffset, h.MetadataLength},
		{h.LeafOffset, h.LeafLength}, {h.TileOffset, h.TileLength}} {
		if s[0] > uint64(size) || s[1] > uint64(size)-s[0] {
			return nil, fmt.Errorf("pmtiles: a section at %d of %d bytes past the file's %d", s[0], s[1], size)
		}
	}
	p := &Reader{r: r, size: size, h: h, cache: map[uint64][]Entry{}}
	if _, err := p.directory(h.RootOffset, h.RootLength); err != nil {
		return nil, err
	}
	return p, nil
}

// Header is the archive's header.
func (p *Reader) Header() Header { return p.h }

// readSection reads length bytes at off, within the file and bounded by max.
func (p *Reader) readSection(off, length uint64, max uint64) ([]byte, error) {
	if length > max {
		return nil, fmt.Errorf("pmtiles: a section of %d bytes over the bound %d", length, max)
	}
	if off > uint64(p.size) || length > uint64(p.size)-off {
		return nil, fmt.Errorf("pmtiles: a section at %d of %d bytes past the file's end", off, length)
	}
	b := make([]byte, length)
	if _, err := p.r.ReadAt(b, int64(off)); err != nil && !(errors.Is(err, io.EOF) && len(b) == int(length)) {
		return nil, fmt.Errorf("pmtiles: %w", err)
	}
	return b, nil
}

// Decompress undoes the internal compression c of b (none or gzip), at
// most MaxDirectory bytes.
func Decompress(b []byte, c Compression) ([]byte, error) {
	switch c {
	case NoCompression:
		return b, nil
	case Gzip:
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("pmtiles: directory: %w", err)
		}
		out, err := io.ReadAll(io.LimitReader(z, MaxDirectory+1))
		if err != nil {
			return nil, fmt.Errorf("pmtiles: directory: %w", err)
		}
		if len(out) > MaxDirectory {
			return nil, fmt.Errorf("pmtiles: a directory over %d bytes decompressed", MaxDirectory)
		}
		return out, nil
	}
	return nil, fmt.Errorf("pmtiles: compression %d is not read", c)
}

// directory returns the directory at off, length of the file, from the
// cache or read, decompressed and decoded.
func (p *Reader) directory(off, length uint64) ([]Entry, error) {
	p.mu.Lock()
	es, ok := p.cache[off]
	p.mu.Unlock()
	if ok {
		return es, nil
	}
	b, err := p.readSection(off, length, MaxDirectory)
	if err != nil {
		return nil, err
	}
	if b, err = Decompress(b, p.h.InternalCompression); err != nil {
		return nil, err
	}
	if es, err = ParseDirectory(b); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.cache[off]; !ok {
		if len(p.order) >= cacheEntries {
			delete(p.cache, p.order[0])
			p.order = p.order[1:]
		}
		p.cache[off] = es
		p.order = append(p.order, off)
	}
	return es, nil
}

// Tile returns the bytes of tile z/x/y as stored (compressed by the
// header's TileCompression), or nil with no error when the archive has
// no such tile.
func (p *Reader) Tile(z uint8, x, y uint32) ([]byte, error) {
	if z < p.h.MinZoom || z > p.h.MaxZoom {
		return nil, nil
	}
	id, err := TileID(z, x, y)
	if err != nil {
		return nil, nil
	}
	off, length := p.h.RootOffset, p.h.RootLength
	for depth := 0; depth < maxDepth; depth++ {
		es, err := p.directory(off, length)
		if err != nil {
			return nil, err
		}
		e, ok := find(es, id)
		if !ok {
			return nil, nil
		}
		if e.RunLength > 0 {
			if e.Length == 0 {
				return nil, nil
			}
			if e.Offset > p.h.TileLength || uint64(e.Length) > p.h.TileLength-e.Offset {
				return nil, fmt.Errorf("pmtiles: tile %d/%d/%d past the tile data", z, x, y)
			}
			return p.readSection(p.h.TileOffset+e.Offset, uint64(e.Length), MaxTile)
		}
		if e.Offset > p.h.LeafLength || uint64(e.Length) > p.h.LeafLength-e.Offset {
			return nil, fmt.Errorf("pmtiles: a leaf directory past the leaf section")
		}
		off, length = p.h.LeafOffset+e.Offset, uint64(e.Length)
	}
	return nil, fmt.Errorf("pmtiles: leaf directories deeper than %d", maxDepth)
}

// Metadata returns the archive's JSON metadata, decompressed (at most
// MaxDirectory bytes).
func (p *Reader) Metadata() ([]byte, error) {
	b, err := p.readSection(p.h.MetadataOffset, p.h.MetadataLength, MaxDirectory)
	if err != nil {
		return nil, err
	}
	return Decompress(b, p.h.InternalCompression)
}
