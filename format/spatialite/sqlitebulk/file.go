// Package sqlitebulk bulk-loads new SQLite files for the download writers
// of SpatiaLite (format/spatialite) and GeoPackage (format/gpkg): a
// scratch connection set up for one big transaction (WriteFile), prepared
// statements run with reused arguments, identifier quoting and column
// naming, a packed R*Tree builder that writes SQLite's rtree shadow tables
// directly, a few times faster than inserting row by row, and the load of
// a table of features with its R*Tree (LoadFeatures), and the skeleton of a
// file of one such table (WriteLayer) that both writers share.
package sqlitebulk

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"modernc.org/sqlite"
)

// File is the one connection to a new database file, driven through the
// database/sql/driver interfaces of modernc.org/sqlite directly: a bulk
// load through database/sql pays for its pool, its argument conversion and
// a watcher goroutine per statement (for a cancellable context), none of
// which a single-writer scratch file needs. Callers check their context
// between rows instead. A File is not safe for concurrent use.
type File struct {
	conn driver.Conn
}

// Create creates (or truncates) the file at path and opens it as an SQLite
// database set up for a one-shot bulk load: no rollback journal, no syncs,
// an exclusive lock, a page cache of cacheKiB, temporary tables and sorts
// in temporary files (so that memory stays bounded). A crash leaves a
// broken file, which the caller removes anyway.
func Create(path string, cacheKiB int) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	// A file: URI, so that no character of the path is taken for one of
	// the driver's query parameters; SQLite decodes the escapes.
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	conn, err := (&sqlite.Driver{}).Open(u.String())
	if err != nil {
		return nil, err
	}
	db := &File{conn: conn}
	if err := db.Exec(`PRAGMA journal_mode=OFF;
PRAGMA synchronous=OFF;
PRAGMA locking_mode=EXCLUSIVE;
PRAGMA temp_store=FILE;
PRAGMA cache_size=-` + strconv.Itoa(cacheKiB)); err != nil {
		conn.Close()
		return nil, err
	}
	return db, nil
}

// Exec runs one or more statements; args bind ?NNN parameters by number.
func (db *File) Exec(query string, args ...any) error {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	_, err := db.conn.(driver.ExecerContext).ExecContext(context.Background(), query, nv)
	return err
}

// Query runs a query and calls fn with each row (the values are the
// driver's: int64, float64, string, []byte or nil, valid during the call).
func (db *File) Query(query string, fn func(row []driver.Value) error) error {
	rows, err := db.conn.(driver.QueryerContext).QueryContext(context.Background(), query, nil)
	if err != nil {
		return err
	}
	row := make([]driver.Value, len(rows.Columns()))
	for {
		err := rows.Next(row)
		if err == nil {
			err = fn(row)
		}
		if err != nil {
			cerr := rows.Close() // once: modernc's Close is not idempotent
			if err == io.EOF {
				return cerr
			}
			return err
		}
	}
}

// Close closes the connection.
func (db *File) Close() error { return db.conn.Close() }

// Stmt is a prepared statement executed with reused arguments: set Args[i]
// (the i+1th parameter) and call Exec.
type Stmt struct {
	stmt driver.StmtExecContext
	Args []driver.NamedValue
}

// Prepare prepares a single statement with n parameters.
func (db *File) Prepare(query string, n int) (*Stmt, error) {
	st, err := db.conn.Prepare(query)
	if err != nil {
		return nil, err
	}
	s := &Stmt{stmt: st.(driver.StmtExecContext), Args: make([]driver.NamedValue, n)}
	for i := range s.Args {
		s.Args[i].Ordinal = i + 1
	}
	return s, nil
}

// Exec executes the statement with s.Args.
func (s *Stmt) Exec() error {
	_, err := s.stmt.ExecContext(context.Background(), s.Args)
	return err
}

// Close finalizes the statement; a nil Stmt is fine.
func (s *Stmt) Close() error {
	if s == nil {
		return nil
	}
	return s.stmt.(driver.Stmt).Close()
}

// Quote returns name as an SQL identifier in double quotes.
func Quote(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Literal returns s as an SQL string literal.
func Literal(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}

// TimeLayout is the form of the timestamps GeoPackage and SpatiaLite both
// keep in their metadata tables: that of SQLite's
// strftime('%Y-%m-%dT%H:%M:%fZ'), which their own triggers and column
// defaults write, so that a row a writer inserts has the form of one
// SQLite itself wrote.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// ASCIILower lower-cases ASCII letters only, as SQLite compares identifiers.
func ASCIILower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// ColumnNames returns a column name for each of names: the name itself,
// with NUL bytes (which SQL text cannot hold) replaced by "_",
// "column_<n>" (n from 1) when blank, and with the first free suffix "_2",
// "_3", … when it equals one of reserved or an earlier column, ignoring
// ASCII case as SQLite does.
func ColumnNames(names []string, reserved ...string) []string {
	taken := make(map[string]bool, len(names)+len(reserved))
	for _, r := range reserved {
		taken[ASCIILower(r)] = true
	}
	out := make([]string, len(names))
	for i, n := range names {
		n = strings.ReplaceAll(n, "\x00", "_")
		if strings.TrimSpace(n) == "" {
			n = "column_" + strconv.Itoa(i+1)
		}
		name := n
		for k := 2; taken[ASCIILower(name)]; k++ {
			name = n + "_" + strconv.Itoa(k)
		}
		taken[ASCIILower(name)] = true
		out[i] = name
	}
	return out
}

// Value converts an attribute value (int64, float64, string, bool or nil,
// see mapcommons.Feature) to what the driver binds: booleans become 0 and
// 1, NaN becomes NULL, other kinds of values their text.
func Value(v any) any {
	switch x := v.(type) {
	case nil, int64, string:
		return v // as it is: no new allocation
	case float64:
		if math.IsNaN(x) {
			return nil
		}
		return v
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return Value(float64(x))
	case []byte:
		return string(x)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// Blobs keeps a buffer per row of a Batch and gives each buffer's current
// contents as the value to bind, boxing it anew only when its address or
// length changed (a []byte in an interface costs an allocation).
type Blobs struct {
	bufs  [][]byte
	boxed []any
}

// NewBlobs returns n empty buffers.
func NewBlobs(n int) *Blobs {
	return &Blobs{bufs: make([][]byte, n), boxed: make([]any, n)}
}

// Buf returns buffer i, emptied, to append to.
func (b *Blobs) Buf(i int) []byte { return b.bufs[i][:0] }

// Set makes buf buffer i and returns it as a driver value.
func (b *Blobs) Set(i int, buf []byte) any {
	b.bufs[i] = buf
	if old, ok := b.boxed[i].([]byte); ok && len(old) == len(buf) && unsafe.SliceData(old) == unsafe.SliceData(buf) {
		return b.boxed[i]
	}
	b.boxed[i] = buf
	return b.boxed[i]
}

// Batch inserts rows with multi-row INSERT statements ("INSERT … VALUES
// (…), (…), …"), which spread the cost of a statement's execution over
// many rows. Fill the slots of Row, then call Add; Flush inserts the rows
// left. Values of a row must stay valid until the batch holding it is
// executed: Slot tells which of PerStmt rows the current one is, so that
// callers can keep a buffer per slot.
type Batch struct {
	db      *File
	head    string // "INSERT INTO … VALUES "
	cols    int
	PerStmt int
	full    *Stmt
	n       int // rows in the current batch
	args    []driver.NamedValue
}

// maxParams bounds the parameters of one statement (SQLite's limit is
// 32766 since 3.32).
const maxParams = 16384

// NewBatch prepares a batch of INSERTs: head is the statement up to VALUES
// inclusive, cols the number of values of a row, perStmt the most rows of
// one statement (fewer when they would have too many parameters).
func (db *File) NewBatch(head string, cols, perStmt int) (*Batch, error) {
	if cols < 1 {
		return nil, fmt.Errorf("sqlitebulk: a batch needs a column")
	}
	perStmt = max(1, min(perStmt, maxParams/cols))
	b := &Batch{db: db, head: head, cols: cols, PerStmt: perStmt}
	var err error
	if b.full, err = db.Prepare(b.sql(perStmt), cols*perStmt); err != nil {
		return nil, err
	}
	b.args = b.full.Args
	return b, nil
}

func (b *Batch) sql(rows int) string {
	var s strings.Builder
	s.WriteString(b.head)
	row := "(?" + strings.Repeat(", ?", b.cols-1) + ")"
	for i := 0; i < rows; i++ {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(row)
	}
	return s.String()
}

// Slot returns the index of the current row in its statement.
func (b *Batch) Slot() int { return b.n }

// Row returns the argument slots of the current row.
func (b *Batch) Row() []driver.NamedValue {
	return b.args[b.n*b.cols : (b.n+1)*b.cols]
}

// Add ends the current row, inserting the batch when it is full.
func (b *Batch) Add() error {
	if b.n++; b.n < b.PerStmt {
		return nil
	}
	b.n = 0
	return b.full.Exec()
}

// Flush inserts the rows of an incomplete batch.
func (b *Batch) Flush() error {
	if b.n == 0 {
		return nil
	}
	st, err := b.db.Prepare(b.sql(b.n), b.n*b.cols)
	if err != nil {
		return err
	}
	defer st.Close()
	copy(st.Args, b.args[:b.n*b.cols])
	for i := range st.Args {
		st.Args[i].Ordinal = i + 1
	}
	b.n = 0
	return st.Exec()
}

// Close finalizes the statement (without Flush).
func (b *Batch) Close() error { return b.full.Close() }
