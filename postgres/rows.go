package postgres

import (
	"encoding/binary"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// rowReader decodes the rows of a features table (int8, float8, boolean
// and bytea columns, in binary) straight from their wire form: pgx's
// generic Values allocates several times a value, which made streaming a
// million rows (a low-zoom tile, a group_by over everything, an export)
// spend most of its time in the allocator. Columns of another type or in
// text go through Values.
type rowReader struct {
	rows  pgx.Rows
	kinds []byte // by column: 'i' int8, 'f' float8, 'b' boolean, 'y' bytea, 0 other
	vals  []any
}

func newRowReader(rows pgx.Rows) *rowReader {
	r := &rowReader{rows: rows}
	for _, fd := range rows.FieldDescriptions() {
		var k byte
		if fd.Format == pgx.BinaryFormatCode {
			switch fd.DataTypeOID {
			case pgtype.Int8OID:
				k = 'i'
			case pgtype.Float8OID:
				k = 'f'
			case pgtype.BoolOID:
				k = 'b'
			case pgtype.ByteaOID:
				k = 'y'
			}
		}
		r.kinds = append(r.kinds, k)
	}
	return r
}

// values decodes the current row: int64, float64, bool, []byte (valid
// until the next row) or nil by column.
func (r *rowReader) values() ([]any, error) {
	raw := r.rows.RawValues()
	r.vals = r.vals[:0]
	for i, b := range raw {
		if b == nil {
			r.vals = append(r.vals, nil)
			continue
		}
		switch r.kinds[i] {
		case 'i':
			if len(b) == 8 {
				r.vals = append(r.vals, int64(binary.BigEndian.Uint64(b)))
				continue
			}
		case 'f':
			if len(b) == 8 {
				r.vals = append(r.vals, math.Float64frombits(binary.BigEndian.Uint64(b)))
				continue
			}
		case 'b':
			if len(b) == 1 {
				r.vals = append(r.vals, b[0] != 0)
				continue
			}
		case 'y':
			r.vals = append(r.vals, b)
			continue
		}
		return r.rows.Values() // not a form decoded here: pgx's way
	}
	return r.vals, nil
}

// lazy reports whether every column is of a form rawRow reads.
func (r *rowReader) lazy() bool {
	for _, k := range r.kinds {
		if k == 0 {
			return false
		}
	}
	return true
}

// rawRow is mapcommons.Row over the wire form of the current row's
// attribute columns (from column base on), decoded as asked: nothing is
// boxed or converted for the values no one reads (a low-zoom tile reads
// those of one point a cell). Valid until the next row.
type rawRow struct {
	raw  [][]byte
	base int
}

func (r *rawRow) IsNull(col int) bool { return r.raw[r.base+col] == nil }
func (r *rawRow) Int(col int) int64   { return int64(binary.BigEndian.Uint64(r.raw[r.base+col])) }
func (r *rawRow) Float(col int) float64 {
	return math.Float64frombits(binary.BigEndian.Uint64(r.raw[r.base+col]))
}
func (r *rawRow) Bytes(col int) []byte { return r.raw[r.base+col] }
func (r *rawRow) Bool(col int) bool    { return r.raw[r.base+col][0] != 0 }

// rawInt is an int8 column's value in its wire form.
func rawInt(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

// arena hands out copies of byte slices from large blocks: one allocation
// for many geometries.
type arena struct{ block []byte }

func (a *arena) copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) > 4096 {
		return append([]byte(nil), b...)
	}
	if cap(a.block)-len(a.block) < len(b) {
		// Blocks grow from 1 KiB to 64 KiB: a read of one feature (an
		// item, an id) does not clear 64 KiB, a scan of many soon
		// allocates few blocks.
		a.block = make([]byte, 0, min(64<<10, max(1<<10, 2*cap(a.block), 2*len(b))))
	}
	n := len(a.block)
	a.block = append(a.block, b...)
	return a.block[n:len(a.block):len(a.block)]
}
