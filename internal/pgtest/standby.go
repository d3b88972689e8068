package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Standby is a hot standby of the test server (streaming replication,
// made by pg_basebackup -R from a replication slot of its own), a server
// of its own in its own directory: for the tests of read replicas. It
// replicates the whole cluster, so the databases URL makes are on it too,
// once its replay gets there (CatchUp).
type Standby struct {
	dir  string // data/ and the socket
	slot string // its replication slot on the server
	mu   sync.Mutex
	cmd  *exec.Cmd // nil while stopped
	done chan struct{}
}

// catchUpLimit bounds the waits for a standby: an outer limit for a
// broken setup, not a timing any test counts on.
const catchUpLimit = 2 * time.Minute

// NewStandby makes and starts a standby of the test server for tb,
// stopped and removed at the end of tb (after the cleanups tb registers
// later). tb is skipped as URL skips it.
func NewStandby(tb testing.TB) *Standby {
	tb.Helper()
	ready(tb)
	dir, err := os.MkdirTemp(tempRoot(), dirPrefix)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Standby{dir: dir, slot: fmt.Sprintf("standby%d", server.counter.Add(1))}
	tb.Cleanup(func() { s.remove(tb) })
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		tb.Fatal(err)
	}
	if c := server.cred; c != nil {
		if err := os.Chown(dir, int(c.Uid), int(c.Gid)); err != nil {
			tb.Fatal(err)
		}
	}
	// -R writes primary_conninfo (the server's socket) and standby.signal;
	// the slot keeps the WAL the standby has not had, while it is stopped.
	// A fast checkpoint: the default spreads it over minutes.
	backup := exec.Command(filepath.Join(server.bin, "pg_basebackup"), "-D", filepath.Join(dir, "data"),
		"-h", server.dir, "-U", "postgres", "-R", "-X", "stream", "-C", "-S", s.slot, "-c", "fast", "--no-sync")
	backup.Dir = dir
	backup.SysProcAttr = &syscall.SysProcAttr{Credential: server.cred}
	if out, err := backup.CombinedOutput(); err != nil {
		tb.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	s.Start(tb)
	return s
}

// URL is the connection string, on the standby, of the database of the
// server's connection string primaryURL (as URL gives it).
func (s *Standby) URL(primaryURL string) string {
	u, err := url.Parse(primaryURL)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set("host", s.dir)
	u.RawQuery = q.Encode()
	return u.String()
}

// Start starts the standby (again), in hot standby mode, and waits until
// it accepts connections.
func (s *Standby) Start(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	cmd, done, err := spawn(server.bin, filepath.Join(s.dir, "data"), s.dir, server.cred, "-c", "hot_standby=on")
	if err != nil {
		tb.Fatalf("standby: %v", err)
	}
	s.cmd, s.done = cmd, done
}

// Kill stops the standby at once, as a crash would (an immediate
// shutdown, as pg_ctl stop -m immediate: SIGQUIT), and waits until it is
// gone: its sessions are cut.
func (s *Standby) Kill(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(catchUpLimit):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// connect opens a connection to the standby's database "postgres".
func (s *Standby) connect(tb testing.TB) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), socketURL(s.dir, "postgres"))
	if err != nil {
		tb.Fatal(err)
	}
	return conn
}

// Exec runs sql on the standby's database "postgres" (such as SELECT
// pg_wal_replay_pause()).
func (s *Standby) Exec(tb testing.TB, sql string, args ...any) {
	tb.Helper()
	ctx := context.Background()
	conn := s.connect(tb)
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		tb.Fatalf("standby: %s: %v", sql, err)
	}
}

// CatchUp waits until the standby has replayed all the WAL the server
// had written when it was called: every transaction committed before is
// on the standby.
func (s *Standby) CatchUp(tb testing.TB) {
	tb.Helper()
	ctx := context.Background()
	var lsn string
	if err := adminQueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`, &lsn); err != nil {
		tb.Fatal(err)
	}
	conn := s.connect(tb)
	defer conn.Close(ctx)
	deadline := time.Now().Add(catchUpLimit)
	for {
		var done bool
		err := conn.QueryRow(ctx, `SELECT coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`, lsn).Scan(&done)
		if err != nil {
			tb.Fatal(err)
		} else if done {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the standby did not replay the WAL to %s in %v", lsn, catchUpLimit)
		}
		time.Sleep(5 * time.Millisecond) // the poll's period
	}
}

// remove stops the standby, drops its slot on the server (once the
// server has seen it go) and removes its directory.
func (s *Standby) remove(tb testing.TB) {
	s.Kill(tb)
	ctx := context.Background()
	deadline := time.Now().Add(catchUpLimit)
	for {
		var n int
		err := adminQueryRow(ctx, `SELECT count(pg_drop_replication_slot(slot_name)) FROM pg_replication_slots
			WHERE slot_name = $1 AND NOT active`, &n, s.slot)
		var left bool
		if err == nil {
			err = adminQueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, &left, s.slot)
		}
		if err != nil {
			tb.Errorf("drop the standby's slot: %v", err)
			break
		} else if !left {
			break
		}
		if time.Now().After(deadline) {
			tb.Errorf("the standby's slot %s stays active", s.slot)
			break
		}
		time.Sleep(5 * time.Millisecond) // until its walsender is gone
	}
	os.RemoveAll(s.dir)
}

// adminQueryRow scans the one row of sql on the server's database
// "postgres" into dst.
func adminQueryRow(ctx context.Context, sql string, dst any, args ...any) error {
	conn, err := pgx.Connect(ctx, dbURL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return conn.QueryRow(ctx, sql, args...).Scan(dst)
}

// Paused reports whether the standby's replay is paused (a pause asked
// for, pg_wal_replay_pause, takes effect at the next record).
func (s *Standby) Paused(tb testing.TB) bool {
	tb.Helper()
	ctx := context.Background()
	conn := s.connect(tb)
	defer conn.Close(ctx)
	var paused bool
	if err := conn.QueryRow(ctx, `SELECT pg_get_wal_replay_pause_state() = 'paused'`).Scan(&paused); err != nil {
		tb.Fatal(err)
	}
	return paused
}
