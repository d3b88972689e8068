package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons/internal/pgtest"
)

// TestDatabaseReplicaFlag: --database-replica-url is repeatable and
// replaces MAPCOMMONS_DATABASE_REPLICA_URL (a list, comma or space
// separated), never shows a password, takes postgres:// URLs only, beside
// a PostgreSQL --database-url, and reaches the store: the server's
// connections are on the standby.
func TestDatabaseReplicaFlag(t *testing.T) {
	envOf := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	env := envOf(map[string]string{
		"MAPCOMMONS_DATABASE_URL":         "postgres://p/db",
		"MAPCOMMONS_DATABASE_REPLICA_URL": "postgres://u:secret1@r1/db, postgres://r2/db\tpostgres://r3/db",
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "postgres://u:secret1@r1/db postgres://r2/db postgres://r3/db"},
		{[]string{"--database-replica-url", "postgres://a/db", "--database-replica-url", "postgres://u:secret2@b/db,postgres://c/db"},
			"postgres://a/db postgres://u:secret2@b/db postgres://c/db"},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		var usage strings.Builder
		fs.SetOutput(&usage)
		st, err := serverFlags(fs, env)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		got, err := st.replicas()
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%v: replicas %q, %v; want %s", tc.args, got, err, tc.want)
		}
		fs.PrintDefaults()
		if f := fs.Lookup("database-replica-url"); strings.Contains(usage.String()+f.Value.String(), "secret") {
			t.Errorf("the usage shows a replica's password: %s / %s", usage.String(), f.Value)
		}
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"MAPCOMMONS_DATABASE_URL": "postgres://p/db", "MAPCOMMONS_DATABASE_REPLICA_URL": "postgres://r1/db,host=r2 password=secret3"},
			"the 2nd is not a postgres:// URL"},
		{map[string]string{"MAPCOMMONS_DATABASE_REPLICA_URL": "postgres://r1/db"}, "needs a PostgreSQL --database-url"},
	} {
		st, err := serverFlags(flag.NewFlagSet("serve", flag.ContinueOnError), envOf(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.replicas(); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: %v, want an error saying %q (and no password)", tc.env, err, tc.want)
		}
	}
	err := run(context.Background(), []string{"serve", "--data", t.TempDir(), "--database-replica-url", "postgres://r/db"},
		func(string) string { return "" }, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--database-replica-url") {
		t.Fatalf("a replica without --database-url: %v", err)
	}

	// A server with a standby as its replica has its connections there.
	sb := pgtest.NewStandby(t)
	url := pgtest.URL(t)
	sb.CatchUp(t)
	startServer(t, map[string]string{"MAPCOMMONS_DATABASE_URL": url, "MAPCOMMONS_DATABASE_REPLICA_URL": sb.URL(url)})
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, sb.URL(url))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'mapcommons' AND datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("the server has no connection on its replica")
	}
}

// TestMigrateCommand: mapcommons migrate brings either store up to date,
// says what it applied, and the second time that nothing was left.
func TestMigrateCommand(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		args  []string
		first string
	}{
		{"embedded", []string{"migrate", "--data", t.TempDir()}, "0001_init.sql"},
		{"postgres", []string{"migrate", "--database-url", pgtest.EmptyURL(t)}, "0001_catalogue.sql"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(ctx, c.args, noEnv, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "applied "+c.first+", ") {
				t.Fatalf("first migrate said %q", out.String())
			}
			out.Reset()
			if err := run(ctx, c.args, noEnv, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(out.String(), " is up to date\n") {
				t.Fatalf("second migrate said %q", out.String())
			}
		})
	}
}

func noEnv(string) string { return "" }

// TestDatabaseURL: a --database-url that is not PostgreSQL's is refused
// (a typo never runs a server on an empty embedded store); a database that
// cannot be reached is named without its password; users are created in
// PostgreSQL with no lock on the data directory; and serve runs on it, or
// names the services this version's PostgreSQL store does not give yet.
func TestDatabaseURL(t *testing.T) {
	ctx := context.Background()
	err := run(ctx, []string{"serve", "--data", t.TempDir(), "--database-url", "postgress://u:pw@db/x"}, noEnv, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not a postgres:// URL") || strings.Contains(err.Error(), "pw@") {
		t.Fatalf("a mistyped URL: %v", err)
	}
	// The usage text shows the environment's URL without its password.
	var usage bytes.Buffer
	run(ctx, []string{"serve", "--no-such-flag"}, func(k string) string {
		return map[string]string{"MAPCOMMONS_DATABASE_URL": "postgres://ann:s3cret-pw@db.example.org/maps"}[k]
	}, nil, io.Discard, &usage)
	if !strings.Contains(usage.String(), "-database-url") || strings.Contains(usage.String(), "s3cret-pw") {
		t.Fatalf("usage with MAPCOMMONS_DATABASE_URL set:\n%s", usage.String())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	env := func(k string) string {
		return map[string]string{"MAPCOMMONS_DATABASE_URL": "postgres://ann:s3cret-pw@" + dead + "/nowhere?connect_timeout=2"}[k]
	}
	err = run(ctx, []string{"migrate"}, env, nil, io.Discard, io.Discard)
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") || !strings.Contains(err.Error(), dead) {
		t.Fatalf("an unreachable database: %v", err)
	}

	url := pgtest.URL(t)
	data := t.TempDir()
	lock, err := lockData(data, "another server")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	var out bytes.Buffer
	if err := run(ctx, []string{"user", "create", "--admin", "--data", data, "--database-url", url, "carol"}, func(k string) string {
		return map[string]string{"MAPCOMMONS_BCRYPT_COST": "4"}[k]
	}, strings.NewReader("pw-123456\n"), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	u, err := pgtest.OpenURL(t, url).Services().Users.FindUserByLogin(ctx, "carol")
	if err != nil || !u.Admin {
		t.Fatalf("carol in PostgreSQL: %+v, %v", u, err)
	}

	st, err := openStore(ctx, data, url)
	if err != nil {
		t.Fatal(err)
	}
	missing := missingServices(st.svc)
	st.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- run(sctx, []string{"serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--database-url", url}, noEnv, nil, io.Discard, addrWriter(addrc))
	}()
	if len(missing) > 0 {
		select {
		case err := <-errc:
			if err == nil || !strings.Contains(err.Error(), "gives no "+strings.Join(missing, ", ")) {
				t.Fatalf("serve on an incomplete store: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("serve on an incomplete store neither served nor failed")
		}
		return
	}
	select {
	case addr := <-addrc:
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("healthz on PostgreSQL: %v, %v", res, err)
		}
		res.Body.Close()
	case err := <-errc:
		t.Fatalf("serve on PostgreSQL: %v", err)
	}
}

// addrWriter is a log destination that sends the address the server
// says it listens on to c.
func addrWriter(c chan<- string) io.Writer { return &addrSink{c: c} }

type addrSink struct {
	c    chan<- string
	buf  []byte
	sent bool
}

func (a *addrSink) Write(p []byte) (int, error) {
	a.buf = append(a.buf, p...)
	if i := bytes.Index(a.buf, []byte("msg=listening addr=")); i >= 0 && !a.sent {
		if f := strings.Fields(string(a.buf[i+len("msg=listening addr="):])); len(f) > 0 {
			a.c <- f[0]
			a.sent = true
		}
	}
	return len(p), nil
}

// TestRedactURL: what the log and the errors show of a database URL.
func TestRedactURL(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://ann:s3cret@db.example.org:5433/maps?sslmode=require": "postgres://db.example.org:5433/maps",
		"postgres:///maps?host=/run/postgresql&password=s3cret":          "postgres:///maps (socket in /run/postgresql)",
		"postgresql://ann@db/maps":                                       "postgresql://db/maps",
		"postgres://%zz":                                                 "(a database URL that cannot be read)",
		"host=db user=x password=s3cret dbname=m":                        "(a database URL that is not postgres://)",
		"postgres:/u:s3cret@h/db":                                        "(a database URL that is not postgres://)",
	} {
		if got := redactURL(raw); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
