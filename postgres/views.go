package postgres

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"mapcommons"
)

// viewName is the name of dataset id's view for other tools.
func viewName(id int64) string { return "dataset_" + strconv.FormatInt(id, 10) }

// maxIdentifier is PostgreSQL's longest name, in bytes (longer ones are
// cut, which could make two columns one).
const maxIdentifier = 63

// viewColumns are the names of a dataset's view's attribute columns: the
// attributes' names, cut to maxIdentifier bytes, with a suffix where one
// would repeat a name before it (fid and geom come first).
func viewColumns(attrs []mapcommons.Attribute) []string {
	taken := map[string]bool{"fid": true, "geom": true}
	cut := func(s string, n int) string {
		for len(s) > n {
			_, size := utf8.DecodeLastRuneInString(s)
			s = s[:len(s)-size]
		}
		return s
	}
	out := make([]string, len(attrs))
	for i, a := range attrs {
		name := cut(strings.ReplaceAll(a.Name, "\x00", ""), maxIdentifier)
		for n := 2; taken[name]; n++ {
			suffix := "_" + strconv.Itoa(n)
			name = cut(strings.ReplaceAll(a.Name, "\x00", ""), maxIdentifier-len(suffix)) + suffix
		}
		taken[name] = true
		out[i] = name
	}
	return out
}

// writeView (re)makes dataset id's view over its features table, in tx.
// A replaced table takes its view with it (dropTable cascades), so the view
// is made again with each new generation.
func writeView(ctx context.Context, tx pgx.Tx, id int64, table string, attrs []mapcommons.Attribute) error {
	var b strings.Builder
	b.WriteString(`CREATE OR REPLACE VIEW ` + ident(viewName(id)) + ` AS SELECT fid, ST_SetSRID(ST_GeomFromWKB(geom), 4326)::geometry(Geometry, 4326) AS geom`)
	for i, name := range viewColumns(attrs) {
		col := attrColumn(i)
		switch attrs[i].Type {
		case mapcommons.AttrString, mapcommons.AttrDate:
			col = `mapcommons_text(` + col + `)`
		}
		b.WriteString(", " + col + " AS " + ident(name))
	}
	b.WriteString(` FROM ` + ident(table))
	_, err := tx.Exec(ctx, b.String())
	return formatError(err)
}
