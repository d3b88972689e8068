// Package pgtest gives tests PostgreSQL databases of their own: one
// private server per test binary (a fresh cluster in a temporary
// directory, in /dev/shm when it has room; trust authentication; no TCP,
// a Unix socket in that directory), a migrated template database made
// once, and per test a database cloned from it (CREATE DATABASE …
// TEMPLATE: a file copy, ~50 ms) dropped at the end. The fresh cluster is
// initdb's work once per user and PostgreSQL version, then a copy of it
// kept in the user's cache directory.
//
// The binaries are found through $MAPCOMMONS_PG_BIN, else the newest
// /usr/lib/postgresql/*/bin. Without them, or without PostGIS, the tests
// skip, unless MAPCOMMONS_REQUIRE_POSTGIS=1, which makes that a failure
// (CI sets it).
//
// PostgreSQL refuses to run as root: as root, initdb and the server run as
// the user "postgres" (else "nobody"), owning the temporary directory.
//
// A test of read replicas may also have a hot standby of the server
// (NewStandby: pg_basebackup -R, a server of its own that the test can
// kill and start again, whose replay it can pause); only the tests that
// ask for one pay for it.
//
// The server is the test process's child (postgres in the foreground, not
// pg_ctl's daemon), which the kernel stops when the process ends however
// it ends (PR_SET_PDEATHSIG). A package whose tests use it calls Main from
// TestMain, so that the server also stops and its directory goes when the
// tests are over; the directories of killed test binaries are removed by
// the next one.
package pgtest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons/postgres"
)

// server is the test binary's PostgreSQL, started by the first test that
// asks for a database.
var server struct {
	once    sync.Once
	err     error  // why there is no server
	skip    bool   // err means: PostgreSQL or PostGIS is not installed here
	dir     string // the temporary directory: data/ and the socket
	cmd     *exec.Cmd
	exited  chan struct{}
	bin     string              // the binaries' directory
	cred    *syscall.Credential // whom the server runs as (nil: us)
	counter atomic.Int64        // names the databases of tests (and standbys)
	main    bool                // Main runs the tests (and stops the server after)
}

// templateDB is the migrated database every test's database is cloned from.
const templateDB = "tmpl"

// Main runs the tests of m and then stops the server, if one was started,
// and removes its directory. Call it from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
func Main(m *testing.M) {
	server.main = true
	code := m.Run()
	stop()
	os.Exit(code)
}

// URL returns the connection string of a new database for tb, a copy of the
// migrated template, dropped at the end of tb (after the cleanups tb
// registers later, such as closing a pool on it). tb is skipped when
// PostgreSQL is not installed, unless MAPCOMMONS_REQUIRE_POSTGIS=1.
func URL(tb testing.TB) string {
	tb.Helper()
	ready(tb)
	return newDatabase(tb, `TEMPLATE `+templateDB+` STRATEGY FILE_COPY`)
}

// EmptyURL is URL for a database that is not migrated (for tests of
// migrating).
func EmptyURL(tb testing.TB) string {
	tb.Helper()
	ready(tb)
	return newDatabase(tb, `TEMPLATE template0`)
}

// ready starts the server once, or skips or fails tb when it cannot.
func ready(tb testing.TB) {
	tb.Helper()
	if !server.main {
		tb.Fatal("pgtest: the package's TestMain must call pgtest.Main(m), which stops the server after the tests")
	}
	server.once.Do(start)
	if server.err != nil {
		if server.skip && os.Getenv("MAPCOMMONS_REQUIRE_POSTGIS") != "1" {
			tb.Skipf("no PostgreSQL here (set MAPCOMMONS_PG_BIN, or MAPCOMMONS_REQUIRE_POSTGIS=1 to fail): %v", server.err)
		}
		tb.Fatalf("test PostgreSQL: %v", server.err)
	}
}

// newDatabase creates a database with the options given (after CREATE
// DATABASE name), dropped at the end of tb, and returns its URL.
func newDatabase(tb testing.TB, options string) string {
	tb.Helper()
	name := fmt.Sprintf("t%d", server.counter.Add(1))
	ctx := context.Background()
	if err := adminExec(ctx, `CREATE DATABASE `+name+` `+options); err != nil {
		tb.Fatalf("create database: %v", err)
	}
	tb.Cleanup(func() {
		if err := adminExec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			tb.Errorf("drop database %s: %v", name, err)
		}
	})
	return dbURL(name)
}

// Open opens the store on a new database for tb (see URL), closed at the
// end of tb.
func Open(tb testing.TB) *postgres.DB {
	tb.Helper()
	return OpenURL(tb, URL(tb))
}

// OpenURL opens one more store on the database at url (as a second server
// would), closed at the end of tb.
func OpenURL(tb testing.TB, url string) *postgres.DB {
	tb.Helper()
	// The pools stay small: a test binary holds many at once.
	db, err := postgres.Open(context.Background(), url+"&pool_max_conns=4")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// OpenReplicas is OpenURL with read replicas (Standby.URL): a server of
// the store with --database-replica-url.
func OpenReplicas(tb testing.TB, url string, replicas ...string) *postgres.DB {
	tb.Helper()
	small := make([]string, len(replicas))
	for i, r := range replicas {
		small[i] = r + "&pool_max_conns=4"
	}
	db, err := postgres.OpenWithReplicas(context.Background(), url+"&pool_max_conns=4", small)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// dbURL is the connection string of the database name on the server.
func dbURL(name string) string { return socketURL(server.dir, name) }

// socketURL is the connection string of the database name on the server
// whose socket is in dir.
func socketURL(dir, name string) string {
	// A URL, as users give --database-url; the socket's directory is the host.
	return "postgres:///" + name + "?host=" + url.QueryEscape(dir) + "&user=postgres&sslmode=disable"
}

// adminExec runs one statement on the database "postgres" (CREATE and DROP
// DATABASE cannot run in the database they name).
func adminExec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, dbURL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// binDir finds the PostgreSQL binaries.
func binDir() (string, error) {
	if dir := os.Getenv("MAPCOMMONS_PG_BIN"); dir != "" {
		// Named on purpose: not finding it there is an error, not a skip.
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err != nil {
			return "", fmt.Errorf("MAPCOMMONS_PG_BIN=%s: %w", dir, errBadBin)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// The newest version: sort by major version number.
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) < pgVersion(dirs[j]) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "postgres")); err == nil {
			return dirs[i], nil
		}
	}
	return "", errors.New("no /usr/lib/postgresql/*/bin/postgres")
}

func pgVersion(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// runAs is the user PostgreSQL runs as when the tests run as root (nil
// otherwise).
func runAs() (*syscall.Credential, error) {
	if os.Getuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		// No supplementary groups (root's would stay otherwise).
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New("running as root, and no user postgres or nobody to run PostgreSQL as")
}

// start starts the server and makes the template; it sets server.err when
// it cannot.
func start() {
	bin, err := binDir()
	if err != nil {
		server.err, server.skip = err, !errors.Is(err, errBadBin)
		return
	}
	if server.err = startServer(bin); server.err != nil {
		stop()
		return
	}
	if server.err = makeTemplate(); server.err != nil {
		server.skip = errors.Is(server.err, errNoPostGIS)
		stop()
	}
}

func startServer(bin string) error {
	cred, err := runAs()
	if err != nil {
		return err
	}
	sweep()
	// A short path: a Unix socket's path is limited to 107 bytes.
	dir, err := os.MkdirTemp(tempRoot(), dirPrefix)
	if err != nil {
		return err
	}
	server.dir = dir
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(dir, "data")
	if err := initCluster(bin, data, cred); err != nil {
		return err
	}
	server.bin, server.cred = bin, cred
	cmd, exited, err := spawn(bin, data, dir, cred)
	if err != nil {
		return err
	}
	server.cmd, server.exited = cmd, exited
	return nil
}

// spawn starts a server on the cluster in data, its socket in dir, and
// waits until it accepts connections.
func spawn(bin, data, dir string, cred *syscall.Credential, args ...string) (*exec.Cmd, chan struct{}, error) {
	// The server runs in the foreground as our child, not through pg_ctl's
	// daemon, so that the kernel stops it when this process ends however
	// it ends. PR_SET_PDEATHSIG fires when the thread that started the
	// child ends: a goroutine holds its thread for the child's life.
	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer logFile.Close()
	readLog := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	cmd := exec.Command(filepath.Join(bin, "postgres"), append([]string{"-D", data, "-k", dir,
		"-c", "listen_addresses=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=200"}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(exited)
		// The thread ends with the goroutine (it stays locked): harmless,
		// the child is gone.
	}()
	if err := <-started; err != nil {
		return nil, nil, err
	}
	// Wait until it accepts connections.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, socketURL(dir, "postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return cmd, exited, nil
		}
		select {
		case <-exited:
			return nil, nil, fmt.Errorf("postgres exited: %s", readLog())
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			return nil, nil, fmt.Errorf("postgres did not answer in 30 s: %v\n%s", err, readLog())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// errBadBin says that MAPCOMMONS_PG_BIN names no PostgreSQL.
var errBadBin = errors.New("no postgres there")

// errNoPostGIS says that PostgreSQL is here but PostGIS is not.
var errNoPostGIS = errors.New("PostgreSQL is installed but PostGIS is not (Debian: postgresql-15-postgis-3)")

// makeTemplate creates the template database and migrates it.
func makeTemplate() error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL("postgres"))
	if err != nil {
		return err
	}
	var postgis bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'postgis')`).Scan(&postgis)
	conn.Close(ctx)
	if err != nil {
		return err
	} else if !postgis {
		return errNoPostGIS
	}
	if err := adminExec(ctx, `CREATE DATABASE `+templateDB); err != nil {
		return err
	}
	db, err := postgres.Open(ctx, dbURL(templateDB))
	if err != nil {
		return err
	}
	// No connection may stay on a template while it is copied.
	db.Close()
	return nil
}

// initdbArgs are the options of the cluster, after initdb -D <dir>.
var initdbArgs = []string{"-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"}

// initCluster makes the cluster's data directory: a copy of the one an
// earlier test binary made with the same binaries, kept in the user's
// cache directory, or else initdb's work (half of the start-up time),
// then kept there for the next. MAPCOMMONS_PGTEST_CACHE=0 turns the
// cache off; any trouble with it falls back to initdb.
func initCluster(bin, data string, cred *syscall.Credential) error {
	cached := clusterCache(bin)
	if cached != "" {
		if _, err := os.Stat(filepath.Join(cached, "PG_VERSION")); err == nil {
			// cp -a keeps modes and, as root, owners (the cache was made
			// by the same user for the same user).
			if exec.Command("cp", "-a", cached, data).Run() == nil {
				return nil
			}
			os.RemoveAll(data)
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), append([]string{"-D", data}, initdbArgs...)...)
	initdb.Env = append(os.Environ(), "LC_ALL=C")
	initdb.Dir = filepath.Dir(data)
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if cached != "" {
		// Copied beside, then renamed: a test binary running at the same
		// time sees the whole copy or none.
		tmp := fmt.Sprintf("%s.tmp%d", cached, os.Getpid())
		if exec.Command("cp", "-a", data, tmp).Run() != nil || os.Rename(tmp, cached) != nil {
			os.RemoveAll(tmp)
		}
	}
	return nil
}

// clusterCache is where a fresh cluster of the binaries in bin is kept
// ("" for none): named by the binaries' version and initdb's options.
func clusterCache(bin string) string {
	if os.Getenv("MAPCOMMONS_PGTEST_CACHE") == "0" {
		return ""
	}
	root, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	version, err := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%d\n", bin, version, strings.Join(initdbArgs, " "), os.Getuid())
	dir := filepath.Join(root, "mapcommons-pgtest")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("cluster-%x", h.Sum(nil)[:8]))
}

// dirPrefix starts the names of the servers' temporary directories;
// ownerFile in each holds the process id of the test binary it serves.
const (
	dirPrefix = "mcpgtest-"
	ownerFile = "owner.pid"
)

// tempRoot is where the server's directory goes: /dev/shm when it is
// there with room (a cluster in memory starts in half the time and clones
// databases faster), else the usual temporary directory. Docker's default
// /dev/shm (64 MiB) is too small and is passed over.
func tempRoot() string {
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil && st.Bavail*uint64(st.Bsize) >= 1<<30 && syscall.Access("/dev/shm", 2) == nil {
		return "/dev/shm"
	}
	return os.TempDir()
}

// sweep removes the directories of servers whose test binary was killed
// (the kernel stopped their server then, but nothing removed the files).
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	shm, _ := filepath.Glob(filepath.Join("/dev/shm", dirPrefix+"*"))
	for _, dir := range append(dirs, shm...) {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			// Being made right now, or not ours: leave it unless old.
			if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.RemoveAll(dir)
			}
			continue
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}

// stop ends the server (a fast shutdown: sessions are cut) and removes its
// directory.
func stop() {
	if server.cmd != nil && server.cmd.Process != nil {
		server.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-server.exited:
		case <-time.After(10 * time.Second):
			server.cmd.Process.Kill()
			<-server.exited
		}
	}
	if server.dir != "" {
		reportCrashes(os.Stderr, filepath.Join(server.dir, "postgres.log"))
		os.RemoveAll(server.dir)
	}
}

// reportCrashes writes to w, before the server's directory goes, the
// lines of its log about a process of it that ended abnormally (the
// server then restarts, and the tests of the moment fail with "in
// recovery mode"), with the lines before them: the log is gone after.
func reportCrashes(w io.Writer, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.Contains(l, "terminated by signal") || strings.Contains(l, "was terminated by exception") ||
			(strings.Contains(l, "server process") && strings.Contains(l, "exited with exit code")) {
			fmt.Fprintf(w, "pgtest: a PostgreSQL process ended abnormally; its log before:\n%s\n",
				strings.Join(lines[max(0, i-30):min(len(lines), i+3)], "\n"))
		}
	}
}
