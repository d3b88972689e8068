package main

import (
	"context"
	"flag"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"mapcommons/format/geojson"
)

// servePGFloor is the hidden "bench-pgfloor" command: the floor of a
// feature read from PostgreSQL over HTTP on this machine, which the
// comparison with pg_featureserv measures beside both. It is net/http, a
// pgx pool and, for GET /items/{fid}, one statement by the primary key
// of the rivals' table, the row written as a GeoJSON feature by hand: no
// authorization, catalogue, links, validators, limits or log. What any
// server that reads the row from the database per request pays at
// least, so that the ratio a server may reach over pg_featureserv on
// this machine is known.
func servePGFloor(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-pgfloor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := fs.String("database-url", "", "the database of the rivals' table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	sql := `SELECT ST_X(geom), ST_Y(geom), id, n, x, cat, label, ts FROM ` + pgx.Identifier{pgfsTable}.Sanitize() + ` WHERE fid = $1`
	return serveBench(ctx, stderr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fid, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/items/"), 10, 64)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var lon, lat, x float64
		var id, n int64
		var cat, label, ts string
		if err := pool.QueryRow(r.Context(), sql, fid).Scan(&lon, &lat, &id, &n, &x, &cat, &label, &ts); err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		b := make([]byte, 0, 512)
		b = append(b, `{"type":"Feature","id":`...)
		b = strconv.AppendInt(b, fid, 10)
		b = append(b, `,"geometry":{"type":"Point","coordinates":[`...)
		b = strconv.AppendFloat(b, lon, 'g', -1, 64)
		b = append(b, ',')
		b = strconv.AppendFloat(b, lat, 'g', -1, 64)
		b = append(b, `]},"properties":{"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, n, 10)
		b = append(b, `,"x":`...)
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
		b = append(b, `,"cat":`...)
		b = geojson.AppendString(b, cat)
		b = append(b, `,"label":`...)
		b = geojson.AppendString(b, label)
		b = append(b, `,"ts":`...)
		b = geojson.AppendString(b, ts)
		b = append(b, "}}"...)
		w.Header().Set("Content-Type", "application/geo+json")
		w.Write(b)
	}))
}
