package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"mapcommons/internal/pgtest"
)

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
