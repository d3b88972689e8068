// Package mvt encodes Mapbox Vector Tiles 2.1 for the WebMercatorQuad
// tile matrix set: the format MapLibre GL JS, OpenLayers, QGIS and GDAL
// read for the OGC API – Tiles route
// /ogc/collections/{id}/tiles/WebMercatorQuad/{z}/{y}/{x}.
//
// The caller asks Tile.Bounds (or TileBounds) for the lon/lat box to
// query, then feeds the features it finds one at a time:
//
//	t, err := mvt.NewTile(z, x, y, mvt.DefaultOptions())
//	l, err := t.AddLayer("places", ds.Attributes, props) // props nil: all
//	err = l.Add(id, geometryWKB, values)                   // or AddRow
//	body := t.Encode()
//
// Geometries (2-D WKB in lon/lat) are projected to the tile's pixel grid,
// clipped to the tile square grown by Options.Buffer (lines split into
// parts; polygons cut into separate valid pieces whose rings run along the
// square's edges, so pieces of neighbouring tiles meet: clip.go),
// simplified with Douglas–Peucker at
// Options.Tolerance pixels, rounded, and wound as MVT 2.1 wants (exterior
// rings positive area in tile coordinates, holes negative). Rings that
// vanish at the zoom are dropped, an exterior with its holes; a polygon
// feature that rounding would leave invalid for GEOS (rings crossing or
// touching, a hole out of its shell) is rebuilt by snap rounding
// (snap.go). A
// MultiPolygon stays one feature with several exteriors; a
// GeometryCollection becomes up to three features with the same id and
// properties, one per kind (points, lines, polygons), since an MVT feature
// has one geometry type.
//
// At zooms up to Options.ClusterMaxZoom, Point features are thinned on a
// grid of Options.ClusterCell pixels: each occupied cell gives one point,
// at the position and with the id of its first point (the first added, or
// with AddFeature the least Feature.Position: a layer of points alone
// comes out the same whatever the order they are added in), and a
// point_count property with the number of points of the cell. A
// point alone in its cell keeps its properties (point_count 1); a cluster
// has point_count only, since the values of one of its points would
// misrepresent the others and would fill the tile with values no one
// sees (this bounds a thinned tile's size by its grid, whatever the
// attributes). MultiPoints are never thinned.
//
// The protobuf encoding is written by hand: the MVT schema is four
// messages, and writing the bytes directly lets a layer encode each
// feature as it arrives (no message tree of a million features, no
// reflection, no dependency).
package mvt

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Options tune a tile. Start from DefaultOptions.
type Options struct {
	// Extent is the size of the tile's pixel grid (MVT layer extent).
	// Zero or less means 4096; at most MaxExtent.
	Extent int
	// Buffer is the margin, in pixels of the grid, kept around the tile
	// so that lines and polygon edges do not show seams and point symbols
	// are not cut at tile edges. Negative means 0; at most Extent.
	Buffer int
	// Tolerance is the Douglas–Peucker tolerance in pixels of the grid;
	// zero or less disables simplification.
	Tolerance float64
	// ClusterCell is the side in pixels of the grid Point features are
	// thinned on (raised so the grid has at most 2048 cells a side); zero
	// or less disables thinning.
	ClusterCell int
	// ClusterMaxZoom is the deepest zoom at which points are thinned.
	ClusterMaxZoom int
}

// DefaultOptions returns the package's defaults: extent 4096, a 64-pixel
// buffer, a 1-pixel simplification tolerance, and points thinned on
// 32-pixel cells (4 screen pixels on a 512-pixel tile) up to zoom 8. The
// server's tiles route thins on coarser cells (package api, tileOptions).
func DefaultOptions() Options {
	return Options{Extent: 4096, Buffer: 64, Tolerance: 1, ClusterCell: 32, ClusterMaxZoom: 8}
}

// MaxExtent is the largest Extent: coordinates stay far from the limits
// of the int32 arithmetic of the geometry encoding.
const MaxExtent = 1 << 16

// PointCount is the property a thinned point carries: how many points it
// stands for.
const PointCount = "point_count"

// Tile is one vector tile being built. It is not safe for concurrent use.
type Tile struct {
	z, x, y int
	opt     Options
	proj    projector
	box     box
	layers  []*Layer
	g       geomScratch
}

// NewTile starts tile z/x/y of WebMercatorQuad (y from the north). It
// returns an EINVALID error when the tile does not exist.
func NewTile(z, x, y int, opt Options) (*Tile, error) {
	if !ValidTile(z, x, y) {
		return nil, &mapcommons.Error{Code: mapcommons.EINVALID, Message: fmt.Sprintf("no tile %d/%d/%d in WebMercatorQuad", z, y, x)}
	}
	if opt.Extent <= 0 {
		opt.Extent = 4096
	}
	opt.Extent = min(opt.Extent, MaxExtent)
	opt.Buffer = min(max(opt.Buffer, 0), opt.Extent)
	if opt.ClusterCell > 0 {
		// At most 2048 cells a side: the count grid stays within 16 MiB.
		opt.ClusterCell = max(opt.ClusterCell, (opt.Extent+2*opt.Buffer)/2048+1)
	}
	t := &Tile{z: z, x: x, y: y, opt: opt, proj: newProjector(z, x, y, opt.Extent)}
	t.box = box{min: -float64(opt.Buffer), max: float64(opt.Extent + opt.Buffer)}
	return t, nil
}

// Bounds returns the lon/lat box, buffer included, whose features can
// appear in the tile: the box the caller's query should cover.
func (t *Tile) Bounds() wkb.Rect { return TileBounds(t.z, t.x, t.y, t.opt.Buffer, t.opt.Extent) }

// Empty reports whether no layer holds a feature (a server may answer 204).
func (t *Tile) Empty() bool {
	for _, l := range t.layers {
		if l.Len() > 0 {
			return false
		}
	}
	return true
}

// Layer collects the features of one MVT layer.
type Layer struct {
	t     *Tile
	name  string
	cols  []int // dataset column of each selected property
	types []mapcommons.AttrType
	names []string
	keyOf []int32 // key index of each selected property, -1 until used

	keys   []string
	keyIdx map[string]uint32
	values []byte // encoded Value messages, each with its field tag
	nvals  uint32
	strs   map[string]uint32
	ints   map[int64]uint32
	dbls   map[uint64]uint32
	bools  [2]int32

	feats []byte // encoded Feature messages, each with its field tag
	n     int

	cluster   bool
	counts    []uint32       // points in each cell of the thinning grid
	clusterAt []int32        // each cell's index in clusters, plus one (0: none)
	alone     map[uint64]int // SetValues's index of clusters
	firsts    int            // clusters with a first point (those written)
	order     int64          // the order of the point being added (addToCluster)
	added     int64          // points added with Add and AddRow
	gridN     int
	cellSide  float64 // 1 / Options.ClusterCell
	ytab      *yTable
	clusters  []cluster
	pending   []pendingValue
	deferring bool

	tags []uint32 // scratch: the current feature's tags
	cmd  commands
	body []byte
}

type cluster struct {
	x, y          int32
	cell          int32 // index in Layer.counts
	id            uint64
	order         int64 // the first point's
	first         bool  // a point of the cell is its first (x, y, id, order)
	pendOff, pend int   // the first point's values in Layer.pending
}

// pendingValue is a value of a thinned point's first point, interned only
// if the point stays alone in its cell (so that values of points a
// cluster stands for do not fill the tile's value table).
type pendingValue struct {
	s    string
	n    uint64
	k    int32
	kind uint8
	b    bool
}

const (
	kindInt = iota
	kindDouble
	kindBool
	kindString
)

// AddLayer adds a layer named name whose features have the attributes
// attrs; props names the attributes to encode, in that order (nil means
// all of them). An unknown name in props is an EINVALID error, as is a
// blank or repeated layer name.
func (t *Tile) AddLayer(name string, attrs []mapcommons.Attribute, props []string) (*Layer, error) {
	if name == "" {
		return nil, &mapcommons.Error{Code: mapcommons.EINVALID, Message: "a layer needs a name"}
	}
	for _, l := range t.layers {
		if l.name == name {
			return nil, &mapcommons.Error{Code: mapcommons.EINVALID, Message: fmt.Sprintf("layer %q given twice", name)}
		}
	}
	l := &Layer{t: t, name: name, keyIdx: map[string]uint32{}, strs: map[string]uint32{},
		ints: map[int64]uint32{}, dbls: map[uint64]uint32{}, bools: [2]int32{-1, -1}}
	add := func(i int) {
		l.cols = append(l.cols, i)
		l.types = append(l.types, attrs[i].Type)
		l.names = append(l.names, attrs[i].Name)
		l.keyOf = append(l.keyOf, -1)
	}
	if props == nil {
		for i := range attrs {
			add(i)
		}
	} else {
		seen := map[string]bool{}
		for _, p := range props {
			i := -1
			for j, a := range attrs {
				if a.Name == p {
					i = j
					break
				}
			}
			if i < 0 {
				return nil, &mapcommons.Error{Code: mapcommons.EINVALID, Message: fmt.Sprintf("no attribute %q", p)}
			}
			if !seen[p] {
				seen[p] = true
				add(i)
			}
		}
	}
	o := t.opt
	if o.ClusterCell > 0 && t.z <= o.ClusterMaxZoom {
		l.cluster = true
		l.gridN = (o.Extent+2*o.Buffer)/o.ClusterCell + 1
		l.counts = make([]uint32, l.gridN*l.gridN)
		l.clusterAt = make([]int32, l.gridN*l.gridN)
		l.cellSide = 1 / float64(o.ClusterCell)
		l.ytab = mercatorTable()
	}
	t.layers = append(t.layers, l)
	return l, nil
}

// Alone returns the ids of the thinned points alone in their cells, so
// far: after a first pass that added the points without their values
// (FeatureQuery.NoValues), the points whose values the tile shows, which
// SetValues then gives.
func (l *Layer) Alone() []uint64 {
	var ids []uint64
	for _, c := range l.clusters {
		if c.first && l.counts[c.cell] == 1 {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// SetValues gives the values (Values or Row) of f to the thinned point
// of id alone in its cell (one of Alone's); other ids change nothing.
func (l *Layer) SetValues(id uint64, f *mapcommons.Feature) {
	if l.alone == nil {
		l.alone = map[uint64]int{}
		for i, c := range l.clusters {
			if c.first && l.counts[c.cell] == 1 {
				l.alone[c.id] = i
			}
		}
	}
	i, ok := l.alone[id]
	if !ok {
		return
	}
	tags := l.valueTags(f.Values)
	if f.Values == nil && f.Row != nil {
		tags = l.rowTags(f.Row)
	}
	c := &l.clusters[i]
	start := len(l.pending)
	l.deferring = true
	tags()
	l.deferring = false
	c.pendOff, c.pend = start, len(l.pending)-start
}

// Thinned reports whether the layer thins its points (the tile's zoom
// is at most Options.ClusterMaxZoom).
func (l *Layer) Thinned() bool { return l.cluster }

// Len returns the number of features the layer will hold (thinned points
// count once per cell).
func (l *Layer) Len() int { return l.n + l.firsts }

// Add adds a feature: its id, its geometry (WKB, nil or empty for none)
// and its values aligned with the layer's attributes (int64, float64,
// string, bool or nil; int, int32, float32 and []byte are accepted too).
// Nil values get no tag (MVT has no null). A feature whose geometry falls
// outside the buffered tile, or vanishes at the zoom, adds nothing. An
// undecodable geometry is an EINVALID error.
func (l *Layer) Add(id uint64, geom []byte, values []any) error {
	l.added++
	l.order = l.added
	return l.addValues(id, geom, values)
}

func (l *Layer) addValues(id uint64, geom []byte, values []any) error {
	return l.add(id, geom, l.valueTags(values))
}

// valueTags returns the function that tags the current feature with
// values.
func (l *Layer) valueTags(values []any) func() {
	return func() {
		for k, c := range l.cols {
			if c >= len(values) {
				continue
			}
			switch v := values[c].(type) {
			case int64:
				l.tagInt(k, v)
			case int:
				l.tagInt(k, int64(v))
			case int32:
				l.tagInt(k, int64(v))
			case float64:
				l.tagDouble(k, v)
			case float32:
				l.tagDouble(k, float64(v))
			case string:
				l.tagString(k, v)
			case []byte:
				l.tagBytes(k, v)
			case bool:
				l.tagBool(k, v)
			}
		}
	}
}

// AddRow is Add with the values read in place from row (as
// mapcommons.Feature.Row of a lazy query), typed by the attributes.
func (l *Layer) AddRow(id uint64, geom []byte, row mapcommons.Row) error {
	l.added++
	l.order = l.added
	return l.addRow(id, geom, row)
}

func (l *Layer) addRow(id uint64, geom []byte, row mapcommons.Row) error {
	return l.add(id, geom, l.rowTags(row))
}

// rowTags returns the function that tags the current feature with the
// values of row.
func (l *Layer) rowTags(row mapcommons.Row) func() {
	return func() {
		for k, c := range l.cols {
			if row.IsNull(c) {
				continue
			}
			switch l.types[k] {
			case mapcommons.AttrInteger:
				l.tagInt(k, row.Int(c))
			case mapcommons.AttrFloat:
				l.tagDouble(k, row.Float(c))
			case mapcommons.AttrBoolean:
				l.tagBool(k, row.Bool(c))
			default:
				l.tagBytes(k, row.Bytes(c))
			}
		}
	}
}

// AddFeature adds f with Add or AddRow, whichever its values suit; its
// Position orders it among the points of a thinned layer, which may then
// come in any order.
func (l *Layer) AddFeature(id uint64, f *mapcommons.Feature) error {
	l.order = f.Position
	if f.Values == nil && f.Row != nil {
		return l.addRow(id, f.Geometry, f.Row)
	}
	return l.addValues(id, f.Geometry, f.Values)
}

// add encodes the geometry and, when it survives, the tags props makes.
func (l *Layer) add(id uint64, geom []byte, props func()) error {
	if len(geom) == 0 {
		return nil
	}
	t := l.t
	if lon, lat, ok := wkb.StoredPoint(geom); ok {
		if l.cluster {
			l.addToCluster(id, lon, lat, props)
			return nil
		}
		x, y := t.proj.xy(lon, lat)
		if !t.box.contains(x, y) || math.IsNaN(x) || math.IsNaN(y) {
			return nil
		}
		qx, qy := int32(math.Round(x)), int32(math.Round(y))
		l.tags = l.tags[:0]
		props()
		l.cmd.reset()
		l.cmd.points([]int32{qx, qy})
		l.writeFeature(id, 1, l.tags, l.cmd.cmds)
		return nil
	}
	g, err := wkb.Decode(geom)
	if err != nil {
		return &mapcommons.Error{Code: mapcommons.EINVALID, Message: err.Error()}
	}
	if g.Type == wkb.Point && len(g.Coords) >= 2 && l.cluster {
		l.addToCluster(id, g.Coords[0], g.Coords[1], props)
		return nil
	}
	tagged := false
	for kind := 1; kind <= 3; kind++ {
		l.cmd.reset()
		t.g.encode(&l.cmd, g, kind, t.proj, t.box, t.opt.Tolerance)
		if len(l.cmd.cmds) == 0 {
			continue
		}
		if !tagged {
			l.tags = l.tags[:0]
			props()
			tagged = true
		}
		l.writeFeature(id, kind, l.tags, l.cmd.cmds)
	}
	return nil
}

// addToCluster counts the point lon/lat, of order l.order, in its cell.
// Finding the cell uses the table projection (a point within a hair of a
// cell's side may be counted in the neighbouring cell, which thinning
// does not mind); the cell's first point, of the least order, which
// gives the cluster its position, is projected exactly, and one whose
// exact position is outside the buffered tile is counted but cannot be
// first (a cell with no first point is left out). These rules do not
// depend on the order points come in.
func (l *Layer) addToCluster(id uint64, lon, lat float64, props func()) {
	t := l.t
	x := worldX(lon)*t.proj.scale - t.proj.ox
	y := l.ytab.y(lat)*t.proj.scale - t.proj.oy
	if !t.box.contains(x, y) { // NaN too
		return
	}
	cell := int(l.cellSide*(x-t.box.min)) + l.gridN*int(l.cellSide*(y-t.box.min))
	if cell < 0 || cell >= len(l.counts) {
		return
	}
	if l.clusterAt[cell] == 0 {
		l.clusters = append(l.clusters, cluster{cell: int32(cell)})
		l.clusterAt[cell] = int32(len(l.clusters))
	}
	c := &l.clusters[l.clusterAt[cell]-1]
	l.counts[cell]++
	if c.first && l.order >= c.order {
		return
	}
	ex, ey := t.proj.xy(lon, lat)
	if !t.box.contains(ex, ey) {
		return
	}
	if !c.first {
		l.firsts++
	}
	c.x, c.y, c.id, c.order, c.first = int32(math.Round(ex)), int32(math.Round(ey)), id, l.order, true
	c.pend = 0
	if l.counts[cell] == 1 {
		// Its values matter only while it is alone in its cell.
		start := len(l.pending)
		l.deferring = true
		props()
		l.deferring = false
		c.pendOff, c.pend = start, len(l.pending)-start
	}
}

// key returns the key index of selected property k.
func (l *Layer) key(k int) uint32 {
	if l.keyOf[k] < 0 {
		l.keyOf[k] = int32(l.keyIndex(l.names[k]))
	}
	return uint32(l.keyOf[k])
}

func (l *Layer) keyIndex(name string) uint32 {
	if i, ok := l.keyIdx[name]; ok {
		return i
	}
	i := uint32(len(l.keys))
	l.keys = append(l.keys, name)
	l.keyIdx[name] = i
	return i
}

// newValue appends one Value message (field 4 of Layer) whose encoded
// body is body, and returns its index.
func (l *Layer) newValue(body []byte) uint32 {
	l.values = appendTag(l.values, 4, wireBytes)
	l.values = appendVarint(l.values, uint64(len(body)))
	l.values = append(l.values, body...)
	l.nvals++
	return l.nvals - 1
}

func (l *Layer) tagInt(k int, v int64) {
	if l.deferring {
		l.pending = append(l.pending, pendingValue{k: int32(k), kind: kindInt, n: uint64(v)})
		return
	}
	l.tags = append(l.tags, l.key(k), l.intValue(v))
}

func (l *Layer) intValue(v int64) uint32 {
	i, ok := l.ints[v]
	if !ok {
		var b [12]byte
		var body []byte
		if v >= 0 {
			body = appendVarint(appendTag(b[:0], 4, wireVarint), uint64(v)) // int_value
		} else {
			body = appendVarint(appendTag(b[:0], 6, wireVarint), uint64(v<<1)^uint64(v>>63)) // sint_value
		}
		i = l.newValue(body)
		l.ints[v] = i
	}
	return i
}

func (l *Layer) tagDouble(k int, v float64) {
	if l.deferring {
		l.pending = append(l.pending, pendingValue{k: int32(k), kind: kindDouble, n: math.Float64bits(v)})
		return
	}
	bits := math.Float64bits(v)
	i, ok := l.dbls[bits]
	if !ok {
		var b [12]byte
		body := binary.LittleEndian.AppendUint64(appendTag(b[:0], 3, wireFixed64), bits) // double_value
		i = l.newValue(body)
		l.dbls[bits] = i
	}
	l.tags = append(l.tags, l.key(k), i)
}

func (l *Layer) tagBool(k int, v bool) {
	if l.deferring {
		l.pending = append(l.pending, pendingValue{k: int32(k), kind: kindBool, b: v})
		return
	}
	j := 0
	if v {
		j = 1
	}
	if l.bools[j] < 0 {
		var b [4]byte
		l.bools[j] = int32(l.newValue(appendVarint(appendTag(b[:0], 7, wireVarint), uint64(j)))) // bool_value
	}
	l.tags = append(l.tags, l.key(k), uint32(l.bools[j]))
}

func (l *Layer) tagString(k int, v string) {
	if l.deferring {
		l.pending = append(l.pending, pendingValue{k: int32(k), kind: kindString, s: v})
		return
	}
	i, ok := l.strs[v]
	if !ok {
		i = l.newString(v)
		l.strs[v] = i
	}
	l.tags = append(l.tags, l.key(k), i)
}

func (l *Layer) tagBytes(k int, v []byte) {
	if l.deferring {
		l.pending = append(l.pending, pendingValue{k: int32(k), kind: kindString, s: string(v)})
		return
	}
	i, ok := l.strs[string(v)] // no allocation for the lookup
	if !ok {
		s := string(v)
		i = l.newString(s)
		l.strs[s] = i
	}
	l.tags = append(l.tags, l.key(k), i)
}

func (l *Layer) newString(s string) uint32 {
	body := appendTag(l.body[:0], 1, wireBytes) // string_value
	body = appendVarint(body, uint64(len(s)))
	body = append(body, s...)
	l.body = body
	return l.newValue(body)
}

// writeFeature appends one Feature message (field 2 of Layer).
func (l *Layer) writeFeature(id uint64, typ int, tags, cmds []uint32) {
	b := l.body[:0]
	b = appendVarint(appendTag(b, 1, wireVarint), id)
	b = appendPacked(b, 2, tags)
	b = appendVarint(appendTag(b, 3, wireVarint), uint64(typ))
	b = appendPacked(b, 4, cmds)
	l.body = b
	l.feats = appendTag(l.feats, 2, wireBytes)
	l.feats = appendVarint(l.feats, uint64(len(b)))
	l.feats = append(l.feats, b...)
	l.n++
}

// flushClusters writes the thinned points as features: a point alone in
// its cell with its properties, a cluster with point_count only.
func (l *Layer) flushClusters() {
	if len(l.clusters) == 0 {
		return
	}
	pk := l.keyIndex(PointCount)
	// In the order of their first points: the order of a layer whose
	// points came in order.
	byOrder := func(a, b cluster) int { return cmp.Compare(a.order, b.order) }
	if !slices.IsSortedFunc(l.clusters, byOrder) {
		slices.SortStableFunc(l.clusters, byOrder)
	}
	for _, c := range l.clusters {
		if !c.first {
			continue
		}
		l.tags = l.tags[:0]
		count := l.counts[c.cell]
		if count == 1 {
			for _, v := range l.pending[c.pendOff : c.pendOff+c.pend] {
				if l.names[v.k] == PointCount {
					continue // point_count wins over an attribute of that name
				}
				switch v.kind {
				case kindInt:
					l.tagInt(int(v.k), int64(v.n))
				case kindDouble:
					l.tagDouble(int(v.k), math.Float64frombits(v.n))
				case kindBool:
					l.tagBool(int(v.k), v.b)
				default:
					l.tagString(int(v.k), v.s)
				}
			}
		}
		l.tags = append(l.tags, pk, l.intValue(int64(count)))
		l.cmd.reset()
		l.cmd.points([]int32{c.x, c.y})
		l.writeFeature(c.id, 1, l.tags, l.cmd.cmds)
	}
	l.clusters, l.pending, l.alone, l.firsts = nil, nil, nil, 0
	clear(l.counts)
	clear(l.clusterAt)
}

// Encode returns the tile's protobuf bytes: every layer, empty ones
// included, in the order they were added. Call it once, after the last
// Add: thinned points are counted until then.
func (t *Tile) Encode() []byte {
	var out []byte
	for _, l := range t.layers {
		if l.cluster {
			l.flushClusters()
		}
		var hdr []byte
		hdr = appendVarint(appendTag(hdr, 15, wireVarint), 2) // version
		hdr = appendTag(hdr, 1, wireBytes)
		hdr = appendVarint(hdr, uint64(len(l.name)))
		hdr = append(hdr, l.name...)
		var tail []byte
		for _, k := range l.keys {
			tail = appendTag(tail, 3, wireBytes)
			tail = appendVarint(tail, uint64(len(k)))
			tail = append(tail, k...)
		}
		tail = append(tail, l.values...)
		tail = appendVarint(appendTag(tail, 5, wireVarint), uint64(t.opt.Extent))
		out = appendTag(out, 3, wireBytes)
		out = appendVarint(out, uint64(len(hdr)+len(l.feats)+len(tail)))
		out = append(out, hdr...)
		out = append(out, l.feats...)
		out = append(out, tail...)
	}
	return out
}
