package postgres

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/wkb"
	"mapcommons/spatial"
)

// The features of a dataset live in a table of their own, one generation
// after another: features_<dataset id>_<generation>. Its columns:
//
//	pos   bigint   the feature's position (0-based; the order of features)
//	fid   bigint   its stable id
//	geom  bytea    its geometry as WKB, as mapcommons.Feature carries it
//	minx … maxy    the box spatial.IndexBounds gives it (NULL without one)
//	box   geometry that box as a PostGIS envelope, or a point when it is one
//	               (generated; a third of the size), GiST-indexed
//	a0 …           one typed column per attribute, by index: bigint,
//	               double precision, boolean, or bytea for strings and
//	               dates (compared byte by byte as the segment engine
//	               does, whatever the bytes); B-tree indexed on (a<i>,
//	               pos) once the table is committed (attrindex.go)
//
// Column and table names are made of numbers only and quoted with
// pgx.Identifier; values always go as parameters.
//
// A write of the features (create, delete by position, replace) fills a
// new table in the transaction that points the dataset's row at it and
// drops the old one, under the dataset's advisory lock (lockFeatures):
// readers see the old features or the new, a failure leaves the old ones,
// and the DROP waits for the old table's readers to finish. An append,
// and an edit (edits.go), change the current table in place, in the
// transaction that updates the row: readers, whose snapshot holds the row
// and the table together, see the features before it or after. An edit's
// deletes leave holes in pos (holes.go).

// featuresLock namespaces the advisory locks of datasets' features (the
// first key of pg_advisory_xact_lock(int, int)): "mc" in ASCII.
const featuresLock int32 = 0x6d63

// lockFeatures takes dataset id's write lock until the end of tx: the
// writes of one dataset's features, from any server, come one at a time.
func lockFeatures(ctx context.Context, tx pgx.Tx, id int64) error {
	return later(ctx, tx, nil, `SELECT pg_advisory_xact_lock($1, $2)`, featuresLock, int32(id))
}

// ident quotes a table or column name.
func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// attrColumn is the column of attribute i.
func attrColumn(i int) string { return ident("a" + strconv.Itoa(i)) }

// attrColumns is the select list of the columns lead, then of the n
// attribute columns of a features table.
func attrColumns(lead string, n int) string {
	sel := lead
	for i := range n {
		sel += ", " + attrColumn(i)
	}
	return sel
}

// eachFeature calls fn with each row of rows, of lead columns and then
// the attribute columns (attrColumns): the lead columns as rowReader
// decodes them, the rest as a feature's values (featureValues). Both
// slices are reused, valid until the next row. It returns fn's error, or
// the rows' in the end.
func eachFeature(rows pgx.Rows, lead int, fn func(lead, values []any) error) error {
	rr := newRowReader(rows)
	var values []any
	for rows.Next() {
		vals, err := rr.values()
		if err != nil {
			return err
		}
		values = featureValues(vals[lead:], values)
		if err := fn(vals[:lead], values); err != nil {
			return err
		}
	}
	return formatError(rows.Err())
}

// sqlType is the column type of an attribute type.
func sqlType(t mapcommons.AttrType) string {
	switch t {
	case mapcommons.AttrInteger:
		return "bigint"
	case mapcommons.AttrFloat:
		return "double precision"
	case mapcommons.AttrBoolean:
		return "boolean"
	}
	return "bytea"
}

// dropTable drops a features table ("" is none).
func dropTable(ctx context.Context, tx pgx.Tx, table string) error {
	if table == "" {
		return nil
	}
	// The DROP waits for the table's readers, and every new reader of it
	// waits behind the DROP: a reader that does not end (a client that
	// stops reading a download) must not hold them all, so the wait is
	// bounded and the write fails (ETIMEOUT) past it.
	if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, strconv.FormatInt(dropLockTimeout.Milliseconds(), 10)); err != nil {
		return formatError(err)
	}
	// An index build on it would hold the DROP: it is cancelled, and no
	// other starts (attrindex.go).
	if err := cancelBuild(ctx, tx, table); err != nil {
		return err
	}
	// CASCADE: the dataset's view over it (views.go) goes with it.
	if _, err := tx.Exec(ctx, `DROP TABLE IF EXISTS `+ident(table)+` CASCADE`); err != nil {
		return formatError(err)
	}
	_, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', '0', true)`)
	return formatError(err)
}

// dropLockTimeout bounds how long dropping a features table waits for its
// readers (tests shorten it).
var dropLockTimeout = 10 * time.Second

// generation is a features table being filled in a transaction: a new
// one, or the current one appended to (existing).
type generation struct {
	tx    pgx.Tx
	id    int64 // the dataset's
	attrs []mapcommons.Attribute
	table string
	n     int64 // rows so far; the next position
	// existing: the dataset's current table, appended to in place
	// (readers of an older snapshot do not see the new rows)
	existing bool
	// holes are the table's holes (holes.go) when existing: added rows
	// take the pos past them
	holes []int64
	// gone are the holes the write makes (an edit in place's deletes)
	gone   []int64
	lastID int64 // the id of the last row (0: none)
	nextID int64 // the id the next new row gets
	sum    *mapcommons.SummaryBuilder
	spool  *medianSpool // the numeric values, for the medians
	// extended says the summary point writes is extended, not exact
	// (resummary.go)
	extended bool
	// row, when not nil, is the dataset's row as the transaction locked
	// it (FOR UPDATE) before it wrote: point writes the search entry from
	// it rather than reading it again.
	row *datasetRow
	// after, once point's write was answered, is the row as it left it
	// (for an edit in place: editfast.go)
	after *datasetRow
}

// newGeneration creates a new, empty features table for dataset id.
func newGeneration(ctx context.Context, tx pgx.Tx, id int64, attrs []mapcommons.Attribute) (*generation, error) {
	var gen int64
	if err := tx.QueryRow(ctx, `SELECT nextval('feature_generations')`).Scan(&gen); err != nil {
		return nil, formatError(err)
	}
	g := &generation{tx: tx, id: id, attrs: attrs, table: fmt.Sprintf("features_%d_%d", id, gen),
		nextID: 1, sum: mapcommons.NewSummaryBuilder(attrs, false), spool: newMedianSpool(attrs)}
	var b strings.Builder
	b.WriteString(`CREATE TABLE ` + ident(g.table) + ` (pos bigint NOT NULL, fid bigint NOT NULL, geom bytea,
		minx double precision, miny double precision, maxx double precision, maxy double precision,
		box geometry GENERATED ALWAYS AS (CASE WHEN minx = maxx AND miny = maxy THEN ST_Point(minx, miny)
			ELSE ST_MakeEnvelope(minx, miny, maxx, maxy) END) STORED`)
	for i, a := range attrs {
		b.WriteString(", " + attrColumn(i) + " " + sqlType(a.Type))
	}
	b.WriteString(")")
	if _, err := tx.Exec(ctx, b.String()); err != nil {
		return nil, formatError(err)
	}
	return g, nil
}

// columns are the columns a generation is filled through, in order.
func (g *generation) columns() []string {
	cols := []string{"pos", "fid", "geom", "minx", "miny", "maxx", "maxy"}
	for i := range g.attrs {
		cols = append(cols, "a"+strconv.Itoa(i))
	}
	return cols
}

// world is the grid of the loads' Hilbert order.
var world = wkb.Rect{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}

// add checks feature f and adds it to the summary as the segment writer
// does (feature.CheckFeature), gives it its position and id (f.ID when
// not zero, else the next id) and appends its row to buf as binary COPY
// data (copy.go); key is its box centre's place on the Hilbert curve.
func (g *generation) add(f *mapcommons.Feature, buf []byte) (_ []byte, key uint64, err error) {
	pos, id, r, ok, err := g.admit(f)
	if err != nil {
		return nil, 0, err
	}
	if buf, key, err = encodeRow(buf, pos, id, f, r, ok); err != nil {
		return nil, 0, err
	}
	g.took(id)
	return buf, key, nil
}

// admit checks feature f as the next row, and gives its pos and id and
// index box (ok false without one); took then counts it in.
func (g *generation) admit(f *mapcommons.Feature) (pos, id int64, r wkb.Rect, ok bool, err error) {
	if err := g.sum.CheckValues(f.Values); err != nil {
		return 0, 0, r, false, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", g.n, err)
	}
	r, ok, err = feature.CheckFeature(g.sum, int(g.n), f)
	if err != nil {
		return 0, 0, r, false, err
	}
	g.spool.add(f.Values)
	id = f.ID
	if id == 0 {
		id = g.nextID
	} else if id <= g.lastID || id == math.MaxInt64 {
		return 0, 0, r, false, fmt.Errorf("postgres: feature %d has id %d, not above the previous %d", g.n, id, g.lastID)
	}
	return g.n + int64(len(g.holes)), id, r, ok, nil
}

// took counts in the row admit gave id.
func (g *generation) took(id int64) {
	g.lastID, g.nextID = id, max(g.nextID, id+1)
	g.n++
}

// rowArgs appends the arguments that write feature f's geometry, index
// box (r; ok false without one) and values, in the order of the table's
// columns after pos and fid.
func rowArgs(args []any, f *mapcommons.Feature, r wkb.Rect, ok bool) []any {
	var geom []byte
	if len(f.Geometry) > 0 {
		geom = f.Geometry
	}
	args = append(args, geom)
	if ok {
		args = append(args, r.MinX, r.MinY, r.MaxX, r.MaxY)
	} else {
		args = append(args, nil, nil, nil, nil)
	}
	for _, v := range f.Values {
		if str, isStr := v.(string); isStr {
			v = []byte(str) // strings and dates are bytea
		}
		args = append(args, v)
	}
	return args
}

// fewRows is the most added rows an edit in place inserts with its other
// statements rather than copies (COPY is two round trips of its own).
const fewRows = 16

// insertFew adds the features of src to the table as copyFrom does, by
// INSERTs queued with the transaction's next statements (pipeTx).
func (g *generation) insertFew(ctx context.Context, src []mapcommons.Feature) error {
	cols := g.columns()
	marks := make([]string, len(cols))
	for i := range marks {
		marks[i] = "$" + strconv.Itoa(i+1)
	}
	sql := `INSERT INTO ` + ident(g.table) + ` (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`
	for i := range src {
		f := &mapcommons.Feature{Values: src[i].Values, Geometry: src[i].Geometry} // the store gives the ids
		pos, id, r, ok, err := g.admit(f)
		if err != nil {
			return err
		}
		if err := later(ctx, g.tx, nil, sql, rowArgs(append(make([]any, 0, len(cols)), pos, id), f, r, ok)...); err != nil {
			return err
		}
		g.took(id)
	}
	return nil
}

// encodeRow appends the row of feature f, at position pos with id id, to
// buf as binary COPY data (the columns of generation.columns); r is its
// index box (ok false without one). key is the box centre's place on the
// Hilbert curve.
func encodeRow(buf []byte, pos, id int64, f *mapcommons.Feature, r wkb.Rect, ok bool) (_ []byte, key uint64, err error) {
	buf = binary.BigEndian.AppendUint16(buf, uint16(7+len(f.Values)))
	buf = appendInt8(buf, pos)
	buf = appendInt8(buf, id)
	if len(f.Geometry) > 0 {
		buf = appendBytes(buf, f.Geometry)
	} else {
		buf = appendNull(buf)
	}
	if ok {
		for _, v := range [4]float64{r.MinX, r.MinY, r.MaxX, r.MaxY} {
			buf = appendFloat8(buf, v)
		}
		key = spatial.HilbertKey(r, world)
	} else {
		for range 4 {
			buf = appendNull(buf)
		}
		key = math.MaxUint64 // last: no bbox query finds them
	}
	for _, v := range f.Values {
		if buf, err = appendValue(buf, v); err != nil {
			return nil, 0, err
		}
	}
	return buf, key, nil
}

// loadNew creates a new generation of dataset id's features (newGeneration),
// its ids from nextID on, and fills it from src (load, finish): for a new
// dataset and for a replacement of its features. match is load's.
func loadNew(ctx context.Context, tx pgx.Tx, id int64, attrs []mapcommons.Attribute, nextID int64, src mapcommons.FeatureSource, match *idMatcher) (*generation, *mapcommons.Summary, error) {
	g, err := newGeneration(ctx, tx, id, attrs)
	if err != nil {
		return nil, nil, err
	}
	g.nextID = nextID
	if err := g.load(ctx, src, match); err != nil {
		return nil, nil, err
	}
	sum, err := g.finish(ctx)
	return g, sum, err
}

// load copies the features of src into the table (binary COPY, streaming).
// match, when not nil, gives new rows identical to old ones their ids.
func (g *generation) load(ctx context.Context, src mapcommons.FeatureSource, match *idMatcher) error {
	return g.copyFrom(ctx, src, match)
}

// appendTo returns the current table of dataset old as a generation to
// append to, in place: its rows, added to the summary, stay.
func appendTo(ctx context.Context, tx pgx.Tx, old *datasetRow) (*generation, error) {
	g := &generation{tx: tx, id: old.ID, attrs: old.Attributes, table: old.table, existing: true, holes: old.holes,
		nextID: old.nextID, sum: mapcommons.NewSummaryBuilder(old.Attributes, false), spool: newMedianSpool(old.Attributes)}
	return g, g.summarize(ctx)
}

// copyRows fills the table with the rows of table old in position order,
// but those at the positions skip, renumbered from 0; then adds them to
// the summary.
func (g *generation) copyRows(ctx context.Context, old string, skip []int64) error {
	if skip == nil {
		skip = []int64{} // not NULL, which <> ALL would make match nothing
	}
	cols := strings.Join(g.columns()[1:], ", ")
	if _, err := g.tx.Exec(ctx, `INSERT INTO `+ident(g.table)+` (pos, `+cols+`)
		SELECT row_number() OVER (ORDER BY pos) - 1, `+cols+` FROM `+ident(old)+` WHERE pos <> ALL($1)`, skip); err != nil {
		return formatError(err)
	}
	return g.summarize(ctx)
}

// summarize adds the rows the table holds to the summary, in position
// order, and counts them.
func (g *generation) summarize(ctx context.Context) error {
	rows, err := g.tx.Query(ctx, `SELECT `+attrColumns("geom, fid", len(g.attrs))+` FROM `+ident(g.table)+` ORDER BY pos`)
	if err != nil {
		return formatError(err)
	}
	defer rows.Close()
	return eachFeature(rows, 2, func(lead, values []any) error {
		geom, _ := lead[0].([]byte)
		var err error
		if x, y, isPoint := wkb.StoredPoint(geom); isPoint {
			err = g.sum.AddPoint(x, y, values)
		} else if len(geom) > 0 {
			dg, derr := wkb.Decode(geom)
			if derr != nil {
				return derr
			}
			err = g.sum.Add(&dg, values)
		} else {
			err = g.sum.Add(nil, values)
		}
		if err != nil {
			return err
		}
		g.spool.add(values)
		g.lastID = lead[1].(int64)
		g.n++
		return nil
	})
}

// featureValues turns the attribute columns of a row into a Feature's
// values (bytea back to strings), reusing out.
func featureValues(cols []any, out []any) []any {
	out = out[:0]
	for _, v := range cols {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		out = append(out, v)
	}
	return out
}

// finish indexes a new table and returns the summary of its features.
func (g *generation) finish(ctx context.Context) (*mapcommons.Summary, error) {
	t := ident(g.table)
	for _, stmt := range []string{
		`ALTER TABLE ` + t + ` ADD PRIMARY KEY (pos)`,
		`CREATE UNIQUE INDEX ON ` + t + ` (fid)`,
		`CREATE INDEX ON ` + t + ` USING gist (box)`,
		// The planner's statistics from a sample of 6,000 rows rather
		// than 30,000: a tenth of the time, and enough to choose between
		// the indexes (autovacuum analyzes again later).
		`SET LOCAL default_statistics_target = 20`,
		`ANALYZE ` + t,
		`RESET default_statistics_target`,
	} {
		if g.existing {
			break // indexed already
		}
		if _, err := g.tx.Exec(ctx, stmt); err != nil {
			return nil, formatError(err)
		}
	}
	defer g.spool.close()
	return g.sum.Summary(g.spool.median)
}

// point points the dataset's row at the generation with its summary and
// drops the table it pointed to (old, when another; "" at creation, which
// leaves the version alone). The DROP comes first: it waits for the old
// table's readers without holding the row's lock, so that metadata
// updates go on meanwhile.
func (g *generation) point(ctx context.Context, sum *mapcommons.Summary, old string, now time.Time) error {
	statsJSON, err := json.Marshal(sum.Stats)
	if err != nil {
		return err
	}
	if old != g.table {
		if err := dropTable(ctx, g.tx, old); err != nil {
			return err
		}
	}
	var ext [4]any
	if e := sum.Extent; e != nil {
		ext = [4]any{e.MinX, e.MinY, e.MaxX, e.MaxY}
	}
	bump := 0
	if old != "" {
		bump = 1
	}
	// The holes of the table: none in a new one; in place, those of the
	// rows the write deleted are added.
	switch {
	case old != g.table && old != "":
		if err := later(ctx, g.tx, nil, `DELETE FROM dataset_holes WHERE dataset_id = $1`, g.id); err != nil {
			return err
		}
	case len(g.gone) > 0:
		if err := later(ctx, g.tx, nil, `INSERT INTO dataset_holes (dataset_id, pos) SELECT $1, unnest($2::bigint[])`,
			g.id, g.gone); err != nil {
			return err
		}
	}
	// With the row locked since the transaction began (g.row), the
	// version comes back with the COMMIT; else it is checked before.
	queue := laterRow
	if g.row != nil {
		queue = laterRowRead
	}
	err = queue(ctx, g.tx, func(row pgx.Row) error {
		var version int64
		var xmin string
		err := formatError(row.Scan(&version, &xmin))
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			return datasetNotFound(g.id)
		} else if err != nil {
			return err
		}
		noteVersion(g.tx, g.id, version) // the reads after the write see it (replica.go)
		if g.row != nil {
			g.after = afterRow(g.row, g, sum, version, xmin, bump == 1, now)
		}
		return nil
	}, `UPDATE datasets SET features = $1, next_id = $2, feature_count = $3, minx = $4, miny = $5,
		maxx = $6, maxy = $7, geometry_types = $8, geometry_mask = $9, stats = $10, version = version + $11,
		updated_at = CASE WHEN $11 = 1 THEN $12 ELSE updated_at END, summary_extended = $14
		WHERE id = $13 RETURNING version, xmin::text`,
		g.table, g.nextID, sum.Count, ext[0], ext[1], ext[2], ext[3], strings.Join(sum.GeometryTypes, ","),
		sum.GeometryMask, statsJSON, bump, now, g.id, g.extended)
	if err != nil {
		return err
	}
	if old != g.table {
		if err := writeView(ctx, g.tx, g.id, g.table, g.attrs); err != nil {
			return err
		}
	}
	// Its search entry and those of the maps that show it follow.
	if g.row == nil {
		return datasetChanged(ctx, g.tx, g.id)
	}
	// From the row as the transaction locked it, with what this write
	// changes of it.
	ds := *g.row.Dataset
	ds.FeatureCount, ds.Extent = sum.Count, sum.Extent
	if bump == 1 {
		ds.UpdatedAt = now
	}
	if err := upsertDatasetDoc(ctx, g.tx, &ds); err != nil {
		return err
	}
	if g.row.noMaps { // none when the row was read: checked so at the end (edits.go)
		if err := lockMapDocs(ctx, g.tx); err != nil {
			return err
		}
		return later(ctx, g.tx, nil, `SELECT mapcommons_no_map_shows($1)`, g.id)
	}
	return refreshMapDocs(ctx, g.tx, mapsShowingDataset, g.id)
}

// pgUndefinedTable is the error of a statement on a table that is gone.
const pgUndefinedTable = "42P01"
