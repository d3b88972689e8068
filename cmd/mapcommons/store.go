package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"

	"mapcommons"
	"mapcommons/postgres"
	"mapcommons/sqlite"
)

// store is an open store: the embedded one in the data directory, or
// PostgreSQL at --database-url.
type store struct {
	svc     mapcommons.Services
	closer  io.Closer
	applied []string // the migrations opening it applied
	where   string   // for messages and the log: never a password
	shared  bool     // several servers may share it (PostgreSQL)
	// embedded is the embedded store; nil on PostgreSQL.
	embedded *sqlite.DB
	// pg is the PostgreSQL store; nil on the embedded one.
	pg *postgres.DB
	// unlock releases the data directory's lock after Close, when the
	// opener took it (openUserStore).
	unlock io.Closer
}

func (s *store) Close() error {
	err := s.closer.Close()
	if s.unlock != nil {
		s.unlock.Close()
	}
	return err
}

// databaseURLFlag adds --database-url (MAPCOMMONS_DATABASE_URL) to fs.
// Its value holds a password: the usage text shows it redacted.
func databaseURLFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	v := &secretURL{s: envDefault(getenv, "database-url", "")}
	fs.Var(v, "database-url",
		"postgres://user:password@host/dbname runs on PostgreSQL with PostGIS instead of the embedded store in --data (MAPCOMMONS_DATABASE_URL)")
	return &v.s
}

// secretURL is a flag value that never prints its password.
type secretURL struct{ s string }

func (u *secretURL) String() string {
	if u == nil || u.s == "" {
		return ""
	}
	return redactURL(u.s)
}

func (u *secretURL) Set(v string) error { u.s = v; return nil }

// secretList is a repeatable flag of database URLs (listFlag) that never
// prints their passwords.
type secretList struct{ listFlag }

func (l *secretList) String() string {
	if l == nil {
		return ""
	}
	out := make([]string, len(l.items))
	for i, u := range l.items {
		out[i] = redactURL(u)
	}
	return strings.Join(out, ",")
}

// replicas are the URLs of --database-replica-url, each a postgres://
// URL, and only beside a PostgreSQL --database-url.
func (st *settings) replicas() ([]string, error) {
	var out []string
	for _, item := range st.replicaURLs.items {
		out = append(out, strings.FieldsFunc(item, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })...)
	}
	for i, u := range out {
		if !isPostgresURL(u) {
			// Not echoed: it may hold a password where no URL parser finds one.
			return nil, fmt.Errorf("--database-replica-url: the %s is not a postgres:// URL", ordinal(i+1))
		}
	}
	if len(out) > 0 && !isPostgresURL(*st.databaseURL) {
		return nil, fmt.Errorf("--database-replica-url needs a PostgreSQL --database-url (the primary, which takes the writes)")
	}
	return out, nil
}

// ordinal is 1st, 2nd, 3rd, 4th….
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// isPostgresURL reports whether a --database-url names PostgreSQL.
func isPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// openStore opens the store: PostgreSQL when databaseURL is a postgres://
// URL (with read replicas at replicas, if any), else the embedded store
// in dataDir. Any other databaseURL is an error, so that a mistyped URL
// never runs a server on an empty embedded store.
func openStore(ctx context.Context, dataDir, databaseURL string, replicas ...string) (*store, error) {
	switch {
	case databaseURL == "":
		db, err := sqlite.Open(filepath.Join(dataDir, "mapcommons.db"))
		if err != nil {
			return nil, err
		}
		return &store{svc: db.Services(), closer: db, applied: db.Applied, where: "the embedded store in " + dataDir, embedded: db}, nil
	case isPostgresURL(databaseURL):
		db, err := postgres.OpenWithReplicas(ctx, databaseURL, replicas)
		if err != nil {
			// pgx's errors name the host, user and database, never the password.
			msg := err.Error()
			if mapcommons.ErrorCode(err) != mapcommons.EINTERNAL {
				msg = mapcommons.ErrorMessage(err)
			}
			return nil, fmt.Errorf("--database-url %s: %s", redactURL(databaseURL), msg)
		}
		where := "PostgreSQL at " + redactURL(databaseURL)
		if len(replicas) > 0 {
			where += fmt.Sprintf(", %d read replica", len(replicas))
			if len(replicas) > 1 {
				where += "s"
			}
		}
		return &store{svc: db.Services(), closer: db, applied: db.Applied, where: where, shared: true, pg: db}, nil
	}
	// Not echoed: it may hold a password where no URL parser finds one.
	return nil, fmt.Errorf("--database-url is not a postgres:// URL (leave it empty for the embedded store in --data)")
}

// redactURL is a database URL without its password and parameters (but
// for the socket directory of a URL without a host).
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a database URL that cannot be read)"
	}
	if !isPostgresURL(raw) {
		return "(a database URL that is not postgres://)"
	}
	if u.Host == "" {
		if dir := u.Query().Get("host"); dir != "" {
			return u.Scheme + "://" + u.Path + " (socket in " + dir + ")"
		}
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// missingServices names the services the store does not give (a store
// still being built); the server needs all of them.
func missingServices(svc mapcommons.Services) []string {
	var out []string
	v := reflect.ValueOf(svc)
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			out = append(out, v.Type().Field(i).Name)
		}
	}
	return out
}

// migrate opens the store, which brings its schema up to date (under an
// advisory lock on PostgreSQL, so that servers starting at once migrate
// once), and says what it applied.
func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envDefault(getenv, "data", "./data"), "directory of the embedded store (MAPCOMMONS_DATA)")
	dbURL := databaseURLFlag(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("migrate takes no arguments: %q", fs.Args())
	}
	if !isPostgresURL(*dbURL) {
		lock, err := lockData(*data, "mapcommons migrate")
		if err != nil {
			return fmt.Errorf("%w: a running server has migrated its store already", err)
		}
		defer lock.Close()
	}
	st, err := openStore(ctx, *data, *dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if len(st.applied) == 0 {
		fmt.Fprintf(stdout, "%s is up to date\n", st.where)
	} else {
		fmt.Fprintf(stdout, "%s: applied %s\n", st.where, strings.Join(st.applied, ", "))
	}
	return nil
}
