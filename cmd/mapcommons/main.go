// Command mapcommons runs the mapcommons server and its administrative
// commands. main only calls run, which tests call too.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/crypto/bcrypt"

	"golang.org/x/term"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/basemap"
	"mapcommons/segment"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // asked for the flags, which are printed
		}
		fmt.Fprintln(os.Stderr, "mapcommons:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  mapcommons serve [flags]                 run the server
  mapcommons user create [--admin] LOGIN   create a user (or reset their password),
                                           an administrator with --admin; the
                                           password is read from stdin
  mapcommons user link LOGIN               print a one-time sign-in link for LOGIN
                                           (24 hours; for a user locked out while
                                           their login is being guessed)
  mapcommons bench [-n N] [-csv FILE]      measure ingest, queries and exports
                                           of N points over HTTP
  mapcommons import [--title T] [--owner LOGIN] FILE…
                                           files straight into the store (server
                                           stopped), or with --url URL --user LOGIN
                                           sent to a running server
  mapcommons migrate [--database-url URL]  bring the store's schema up to date (the
                                           server does too when it starts)
  mapcommons version                       the module version and VCS revision
  mapcommons health [--addr ADDR]          exit 0 when the server at ADDR answers
                                           /healthz (container health checks)
  mapcommons bench-slow [-c N]             measure the server's memory under N
                                           slow anonymous connections
Run "mapcommons serve -h" for the flags (import -h for import's).
`

// run is the whole program: args without the program name.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], getenv, stderr)
	case "user":
		if len(args) >= 2 && args[1] == "link" {
			return userLink(ctx, args[2:], getenv, stdout, stderr)
		}
		if len(args) < 2 || args[1] != "create" {
			fmt.Fprint(stderr, usage)
			return errors.New("unknown user command")
		}
		return userCreate(ctx, args[2:], getenv, stdin, stdout, stderr)
	case "bench":
		return bench(ctx, args[1:], stdout, stderr)
	case "bench-slow":
		return benchSlow(ctx, args[1:], stdout, stderr)
	case "bench-static":
		return serveStatic(ctx, args[1:], stderr)
	case "bench-pgfloor":
		return servePGFloor(ctx, args[1:], stderr)
	case "migrate":
		return migrate(ctx, args[1:], getenv, stdout, stderr)
	case "import":
		return importFiles(ctx, args[1:], getenv, stdin, stdout, stderr)
	case "health":
		return health(ctx, args[1:], getenv, stdout)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, version())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// settings are the server's flags, each also MAPCOMMONS_<NAME>.
type settings struct {
	addr, data, baseURL, mode string
	databaseURL               *string
	defaultShare              string
	signup                    bool
	maxUpload                 int64
	maxFeatures               int64
	bcryptCost                int
	responseCache             int64
	localCopies               int64
	tileCache                 int64
	allowPrivateFetch         bool
	eagerThumbnails           bool
	refreshInterval           time.Duration
	compactAfter              time.Duration
	fetchTimeout              time.Duration
	trustedProxies            []netip.Prefix
	queryTimeout              time.Duration
	maxForm                   int64
	bodyTimeout               time.Duration
	sessionTTL                time.Duration
	corsOrigins               string
	basemaps                  listFlag
	basemapPMTiles            string
	replicaURLs               secretList
}

// listFlag is a repeatable flag: each use adds its value. Its environment
// value is the default, which the first use on the command line replaces.
type listFlag struct {
	items   []string
	fromEnv bool
}

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.items, ",")
}

// Set adds v, dropping the environment's values on the first use.
func (l *listFlag) Set(v string) error {
	if l.fromEnv {
		l.items, l.fromEnv = nil, false
	}
	l.items = append(l.items, v)
	return nil
}

// envDefault returns the environment's value of a flag, or def.
func envDefault(getenv func(string) string, name, def string) string {
	if v := getenv("MAPCOMMONS_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); v != "" {
		return v
	}
	return def
}

// byteSize is a flag value of bytes with an optional K/M/G (or KiB/MiB/GiB) suffix.
type byteSize struct{ n *int64 }

func (b byteSize) String() string {
	if b.n == nil {
		return ""
	}
	return formatSize(*b.n)
}

// formatSize writes n bytes as parseSize reads them, in the largest
// binary unit that divides it: 512MiB, 64KiB, 1000.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// parseInterspersed parses args with fs, allowing flags after the
// positional arguments (user create alice --admin), and returns the
// positional ones. "--" ends the flags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (b byteSize) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*b.n = n
	return nil
}

func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	return n * mult, nil
}

// parseSizeOrZero is parseSize, or 0 for "0".
func parseSizeOrZero(s string) (int64, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	return parseSize(s)
}

// parseCIDRs reads a list of addresses and CIDR prefixes separated by
// commas or spaces.
func parseCIDRs(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == ';' }) {
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR prefix", f)
		}
	}
	return out, nil
}

// parseCount reads a count that may not be negative.
func parseCount(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(s), "_", ""), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid count %q", s)
	}
	return n, nil
}

func serverFlags(fs *flag.FlagSet, getenv func(string) string) (*settings, error) {
	st := &settings{}
	fs.StringVar(&st.addr, "addr", envDefault(getenv, "addr", "127.0.0.1:8080"), "address to listen on (MAPCOMMONS_ADDR)")
	fs.StringVar(&st.data, "data", envDefault(getenv, "data", "./data"), "directory of the embedded store, and of the server's temporary files (MAPCOMMONS_DATA)")
	st.databaseURL = databaseURLFlag(fs, getenv)
	if v := envDefault(getenv, "database-replica-url", ""); v != "" {
		st.replicaURLs = secretList{listFlag{items: []string{v}, fromEnv: true}}
	}
	fs.Var(&st.replicaURLs, "database-replica-url",
		"a hot standby of --database-url's PostgreSQL (streaming replication), postgres://…, to which the reads of features go; repeatable (MAPCOMMONS_DATABASE_REPLICA_URL: comma or space separated)")
	fs.StringVar(&st.baseURL, "base-url", envDefault(getenv, "base-url", ""), "absolute root URL for links; default: from the request's Host (MAPCOMMONS_BASE_URL)")
	if err := datasetFlags(fs, getenv, st); err != nil {
		return nil, err
	}
	signup, err := strconv.ParseBool(envDefault(getenv, "signup", "true"))
	if err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_SIGNUP: %w", err)
	}
	fs.BoolVar(&st.signup, "signup", signup, "whether anyone may create an account (MAPCOMMONS_SIGNUP)")
	if st.bcryptCost, err = bcryptCost(getenv); err != nil {
		return nil, err
	}
	fs.IntVar(&st.bcryptCost, "bcrypt-cost", st.bcryptCost, "bcrypt cost of new password hashes, 4 to 31 (MAPCOMMONS_BCRYPT_COST)")
	if st.maxForm, err = parseSize(envDefault(getenv, "max-form", "1MiB")); err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_MAX_FORM: %w", err)
	}
	fs.Var(byteSize{&st.maxForm}, "max-form", "largest urlencoded or JSON body (not an upload) read into parameters, e.g. 1MiB (MAPCOMMONS_MAX_FORM)")
	fs.StringVar(&st.corsOrigins, "cors-origins", envDefault(getenv, "cors-origins", ""),
		"origins (https://app.example.org) whose pages may call the API with the user's credentials, comma or space separated; * lets any page read anonymous GETs (MAPCOMMONS_CORS_ORIGINS)")
	if v := envDefault(getenv, "basemap", ""); v != "" {
		st.basemaps = listFlag{items: []string{v}, fromEnv: true}
	}
	fs.Var(&st.basemaps, "basemap",
		"a raster basemap maps may use instead of the built-in one, NAME=URLTEMPLATE (osm=https://tile.openstreetmap.org/{z}/{x}/{y}.png); repeatable (MAPCOMMONS_BASEMAP: comma or space separated)")
	fs.StringVar(&st.basemapPMTiles, "basemap-pmtiles", envDefault(getenv, "basemap-pmtiles", ""),
		"a Protomaps basemap of a local PMTiles v3 file of vector tiles, or a directory whose *.pmtiles files are each one, named by the file's stem (MAPCOMMONS_BASEMAP_PMTILES)")
	if v := envDefault(getenv, "response-cache", "32MiB"); v == "0" {
		st.responseCache = -1
	} else if st.responseCache, err = parseSize(v); err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_RESPONSE_CACHE: %w", err)
	}
	fs.Func("response-cache", "memory for repeated feature-query answers, e.g. 32MiB; 0 turns it off (MAPCOMMONS_RESPONSE_CACHE)", func(v string) error {
		if v == "0" {
			st.responseCache = -1
			return nil
		}
		n, err := parseSize(v)
		st.responseCache = n
		return err
	})
	if st.localCopies, err = parseSizeOrZero(envDefault(getenv, "local-copies", "2GiB")); err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_LOCAL_COPIES: %w", err)
	}
	fs.Func("local-copies", "on PostgreSQL, disk in --data for this server's copies of the datasets it serves, which answer reads without a query, e.g. 2GiB; 0 keeps none (default 2GiB; MAPCOMMONS_LOCAL_COPIES)",
		func(v string) (err error) {
			st.localCopies, err = parseSizeOrZero(v)
			return err
		})
	if v := envDefault(getenv, "tile-cache", "64MiB"); v == "0" {
		st.tileCache = -1
	} else if st.tileCache, err = parseSize(v); err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_TILE_CACHE: %w", err)
	}
	fs.Func("tile-cache", "memory for vector tiles made, e.g. 64MiB; 0 turns it off (MAPCOMMONS_TILE_CACHE)", func(v string) error {
		if v == "0" {
			st.tileCache = -1
			return nil
		}
		n, err := parseSize(v)
		st.tileCache = n
		return err
	})
	allow, err := strconv.ParseBool(envDefault(getenv, "allow-private-fetch", "false"))
	if err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_ALLOW_PRIVATE_FETCH: %w", err)
	}
	if st.trustedProxies, err = parseCIDRs(envDefault(getenv, "trusted-proxies", "")); err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_TRUSTED_PROXIES: %w", err)
	}
	fs.Func("trusted-proxies", "reverse proxies (addresses or CIDRs, comma-separated) whose X-Forwarded-For or Forwarded header names the client (MAPCOMMONS_TRUSTED_PROXIES)", func(v string) error {
		p, err := parseCIDRs(v)
		st.trustedProxies = p
		return err
	})
	eager, err := strconv.ParseBool(envDefault(getenv, "eager-thumbnails", "true"))
	if err != nil {
		return nil, fmt.Errorf("MAPCOMMONS_EAGER_THUMBNAILS: %w", err)
	}
	fs.BoolVar(&st.eagerThumbnails, "eager-thumbnails", eager, "draw the thumbnails of a dataset or map into the tile cache when it changes (MAPCOMMONS_EAGER_THUMBNAILS)")
	fs.BoolVar(&st.allowPrivateFetch, "allow-private-fetch", allow, "let URL registrations fetch from loopback, private and reserved addresses (MAPCOMMONS_ALLOW_PRIVATE_FETCH)")
	for _, d := range []struct {
		name, def, usage string
		dst              *time.Duration
	}{
		{"refresh-interval", "0", "refetch URL-registered datasets this often, e.g. 1h; 0 never (MAPCOMMONS_REFRESH_INTERVAL)", &st.refreshInterval},
		{"fetch-timeout", "5m", "the longest one fetch of a URL may take (MAPCOMMONS_FETCH_TIMEOUT)", &st.fetchTimeout},
		{"query-timeout", "30s", "the longest a feature query, download, classification or search may work before a 503; 0 no limit (MAPCOMMONS_QUERY_TIMEOUT)", &st.queryTimeout},
		{"body-timeout", "30s", "cut a request body that makes no progress this long, or averages under 1 KiB/s after it (MAPCOMMONS_BODY_TIMEOUT)", &st.bodyTimeout},
		{"session-ttl", "336h", "how long a browser's sign-in lasts (MAPCOMMONS_SESSION_TTL)", &st.sessionTTL},
		{"compact-after", "10s", "embedded store: merge an edited dataset's pending changes into its base when its last edit is this old (bigger changes at once) (MAPCOMMONS_COMPACT_AFTER)", &st.compactAfter},
	} {
		v, err := time.ParseDuration(envDefault(getenv, d.name, d.def))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("MAPCOMMONS_%s: not a duration: %q", strings.ToUpper(strings.ReplaceAll(d.name, "-", "_")), envDefault(getenv, d.name, d.def))
		}
		fs.DurationVar(d.dst, d.name, v, d.usage)
	}
	return st, nil
}

// datasetFlags defines the flags that decide what an upload makes, which
// the server and import share: the instance kind and the sharing list of
// new datasets (their permissions), and the limits of size.
func datasetFlags(fs *flag.FlagSet, getenv func(string) string, st *settings) error {
	fs.StringVar(&st.mode, "mode", envDefault(getenv, "mode", "hosted"), "instance kind: hosted or appliance (MAPCOMMONS_MODE)")
	fs.StringVar(&st.defaultShare, "default-share", envDefault(getenv, "default-share", ""),
		"on an appliance, the sharing list of new datasets and maps, e.g. everyone:view,download or 12:view;everyone:view (MAPCOMMONS_DEFAULT_SHARE)")
	var err error
	if st.maxUpload, err = parseSize(envDefault(getenv, "max-upload", "512MiB")); err != nil {
		return fmt.Errorf("MAPCOMMONS_MAX_UPLOAD: %w", err)
	}
	fs.Var(byteSize{&st.maxUpload}, "max-upload", "largest request body accepted, and the most a zipped upload (or an imported zip) may expand to, e.g. 512MiB (MAPCOMMONS_MAX_UPLOAD)")
	if st.maxFeatures, err = parseCount(envDefault(getenv, "max-features", strconv.Itoa(api.DefaultMaxFeatures))); err != nil {
		return fmt.Errorf("MAPCOMMONS_MAX_FEATURES: %w", err)
	}
	fs.Func("max-features", fmt.Sprintf("most features one dataset may hold (uploads, appends, fetched URLs); 0 no limit (default %d; MAPCOMMONS_MAX_FEATURES)", api.DefaultMaxFeatures),
		func(v string) error {
			n, err := parseCount(v)
			st.maxFeatures = n
			return err
		})
	return nil
}

// apiConfig is the API's configuration from the flags (the temporary
// directory is the caller's; the default sharing list is still to be
// checked against the store's groups).
// closePMTiles closes the files of the PMTiles basemaps.
func closePMTiles(ps []*basemap.PMTiles) {
	for _, p := range ps {
		p.Close()
	}
}

func (st *settings) apiConfig() (api.Config, error) {
	if st.bcryptCost < bcrypt.MinCost || st.bcryptCost > bcrypt.MaxCost {
		return api.Config{}, fmt.Errorf("--bcrypt-cost: %d is not between %d and %d", st.bcryptCost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	cfg, err := st.datasetConfig()
	if err != nil {
		return api.Config{}, err
	}
	cors, err := corsList(st.corsOrigins)
	if err != nil {
		return api.Config{}, err
	}
	basemaps, err := basemap.ParseRasters(st.basemaps.String())
	if err != nil {
		return api.Config{}, fmt.Errorf("--basemap: %w", err)
	}
	// A flag's 0 means no limit; the Config's means its default.
	noLimit := func(v time.Duration) time.Duration {
		if v == 0 {
			return -1
		}
		return v
	}
	cfg.BaseURL, cfg.Signup = st.baseURL, st.signup
	cfg.ResponseCache, cfg.TileCache = st.responseCache, st.tileCache
	cfg.EagerThumbnails = st.eagerThumbnails
	cfg.AllowPrivateFetch, cfg.FetchTimeout = st.allowPrivateFetch, st.fetchTimeout
	cfg.TrustedProxies, cfg.QueryTimeout = st.trustedProxies, noLimit(st.queryTimeout)
	cfg.MaxForm, cfg.BodyTimeout, cfg.CORSOrigins, cfg.BcryptCost = st.maxForm, noLimit(st.bodyTimeout), cors, st.bcryptCost
	cfg.Basemaps = basemaps
	cfg.SessionTTL = st.sessionTTL
	if st.basemapPMTiles != "" {
		// Opened and checked now: a bad file stops the start.
		if cfg.PMTiles, err = basemap.OpenPMTiles(st.basemapPMTiles); err != nil {
			return api.Config{}, fmt.Errorf("--basemap-pmtiles: %w", err)
		}
		for _, p := range cfg.PMTiles {
			if basemap.Find(basemaps, p.Name) != nil {
				closePMTiles(cfg.PMTiles)
				return api.Config{}, fmt.Errorf("--basemap-pmtiles: %s: the name %s is a --basemap's too", p.Path, p.Name)
			}
		}
	}
	return cfg, nil
}

// datasetConfig is the part of the API's configuration that datasetFlags
// sets, all that import needs: the instance kind, the sharing list of new
// datasets and the limits of size.
func (st *settings) datasetConfig() (api.Config, error) {
	mode := mapcommons.Mode(st.mode)
	if !mode.Valid() {
		return api.Config{}, fmt.Errorf("--mode: %q is neither hosted nor appliance", st.mode)
	}
	share, err := mapcommons.ParseShare(st.defaultShare)
	if err != nil {
		return api.Config{}, fmt.Errorf("--default-share: %s", mapcommons.ErrorMessage(err))
	}
	maxFeatures := st.maxFeatures
	if maxFeatures == 0 { // a flag's 0 means no limit; the Config's its default
		maxFeatures = -1
	}
	return api.Config{Mode: mode, DefaultShare: share, MaxUpload: st.maxUpload, MaxFeatures: maxFeatures}, nil
}

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	st, err := serverFlags(fs, getenv)
	if err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := st.apiConfig()
	if err != nil {
		return err
	}
	defer closePMTiles(cfg.PMTiles)
	replicas, err := st.replicas()
	if err != nil {
		return err
	}
	mode := cfg.Mode
	logs := newLogWriter(stderr, 100*time.Millisecond)
	defer logs.Close()
	logger := slog.New(slog.NewTextHandler(logs, nil))
	// The lines of requests as the logger writes them, without it.
	cfg.AccessLog = logs
	if path := getenv("MAPCOMMONS_CPUPROFILE"); path != "" { // for performance work
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}

	keepGCBallast()

	lock, err := lockData(st.data, "mapcommons serve")
	if err != nil {
		return fmt.Errorf("%w: stop that server first, or give this one another --data", err)
	}
	defer lock.Close()
	db, err := openStore(ctx, st.data, *st.databaseURL, replicas...)
	if err != nil {
		return err
	}
	defer db.Close()
	if db.embedded != nil {
		db.embedded.SetCompactAfter(st.compactAfter)
		db.embedded.SetLogger(logger)
	}
	if db.pg != nil {
		db.pg.SetLogger(logger) // the background index builds' failures
		if err := db.pg.SetMirror(filepath.Join(st.data, "local-copies"), st.localCopies, segment.Copies{}); err != nil {
			return fmt.Errorf("--local-copies: %w", err)
		}
	}
	if missing := missingServices(db.svc); len(missing) > 0 {
		return fmt.Errorf("%s cannot serve yet: this version's store gives no %s", db.where, strings.Join(missing, ", "))
	}
	svc := db.svc
	if pw := getenv("MAPCOMMONS_ADMIN_PASSWORD"); pw != "" {
		if err := ensureAdmin(ctx, svc.Users, "admin", "", pw, cfg.BcryptCost); err != nil {
			return fmt.Errorf("MAPCOMMONS_ADMIN_PASSWORD: %w", err)
		}
		logger.Info("administrator ready", "login", "admin")
	} else if has, err := svc.Users.HasAdmin(ctx); err != nil {
		return err
	} else if !has {
		// A fresh store: the first administrator is made by the set-up
		// link, which only who reads this log has (api/setup.go).
		cfg.SetupToken = api.NewSetupToken()
	}
	if cfg.DefaultShare, err = checkShare(ctx, logger, mode, cfg.DefaultShare, svc.Groups); err != nil {
		return err
	}
	tmp := filepath.Join(st.data, "tmp")
	os.RemoveAll(tmp) // uploads of a previous run that did not finish
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	cfg.TempDir = tmp
	handler := api.NewServer(logger, cfg, svc)
	defer handler.Close() // its background drawing ends before the store closes
	ln, err := net.Listen("tcp", st.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	lock.say("mapcommons serve on " + ln.Addr().String())
	logger.Info("listening", "addr", ln.Addr().String(), "data", st.data, "store", db.where, "mode", mode)
	if cfg.SetupToken != "" {
		logger.Warn("this server has no administrator yet: open the set-up link to make one (it works once, until an administrator exists; restarting makes a new one)",
			"url", setupURL(cfg.BaseURL, ln.Addr(), cfg.SetupToken))
	}
	logs.flush() // tests and scripts wait for this line
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if every := st.refreshInterval; every > 0 {
		rctx, stop := context.WithCancel(ctx)
		refreshing := make(chan struct{})
		defer func() { stop(); <-refreshing }() // a refresh in hand ends before the store closes
		go func() {
			defer close(refreshing)
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-rctx.Done():
					return
				case <-t.C:
					handler.RefreshFeeds(rctx, every)
				}
			}
		}()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	return nil
}

// setupURL is the set-up link of token: under --base-url when given, else
// at the address listened on (its host localhost when it is every
// interface's: from another machine, put the server's name instead).
func setupURL(baseURL string, addr net.Addr, token string) string {
	if baseURL != "" {
		return strings.TrimRight(baseURL, "/") + api.SetupPath(token)
	}
	host := addr.String()
	if ta, ok := addr.(*net.TCPAddr); ok {
		h := ta.IP.String()
		if ta.IP.IsUnspecified() {
			h = "localhost"
		}
		host = net.JoinHostPort(h, strconv.Itoa(ta.Port))
	}
	return "http://" + host + api.SetupPath(token)
}

// corsList splits --cors-origins at commas and spaces and checks that each
// entry is "*" or an origin: http or https, a host, no path.
func corsList(s string) ([]string, error) {
	list := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' })
	for _, o := range list {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("--cors-origins: %q is not an origin like https://app.example.org", o)
		}
	}
	return list, nil
}

// checkShare vets the --default-share list against the instance: it only
// applies on an appliance, and entries naming a group that does not exist
// (any more) are dropped with a warning rather than keeping the server
// from starting.
func checkShare(ctx context.Context, logger *slog.Logger, mode mapcommons.Mode, share []mapcommons.Permission, groups mapcommons.GroupService) ([]mapcommons.Permission, error) {
	if len(share) == 0 {
		return nil, nil
	}
	if mode != mapcommons.ModeAppliance {
		logger.Warn("--default-share is ignored on a hosted instance: new datasets and maps are shared with everyone there")
		return nil, nil
	}
	out := share[:0:0]
	for _, e := range share {
		if id, ok := e.GroupID(); ok {
			if _, err := groups.FindGroupByID(ctx, id); mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
				logger.Warn("--default-share names a group that does not exist: entry dropped", "group", id)
				continue
			} else if err != nil {
				return nil, err
			}
		}
		out = append(out, e)
	}
	logger.Info("new datasets and maps are shared by default", "default_share", shareString(out))
	return out, nil
}

// shareString writes a sharing list as --default-share takes it.
func shareString(perms []mapcommons.Permission) string {
	var parts []string
	for _, e := range perms {
		var rights []string
		for _, r := range []struct {
			on   bool
			name string
		}{{e.View, "view"}, {e.Download, "download"}, {e.Edit, "edit"}} {
			if r.on {
				rights = append(rights, r.name)
			}
		}
		parts = append(parts, e.Group+":"+strings.Join(rights, ","))
	}
	return strings.Join(parts, ";")
}

// ensureAdmin makes sure login exists, is an administrator and has password.
func ensureAdmin(ctx context.Context, users mapcommons.UserService, login, email, password string, cost int) error {
	return ensureUser(ctx, users, login, email, password, true, cost)
}

// ensureUser makes sure login exists and has password, and is an
// administrator when admin is set (an existing user's rank is otherwise
// left as it is).
func ensureUser(ctx context.Context, users mapcommons.UserService, login, email, password string, admin bool, cost int) error {
	if err := mapcommons.ValidateLogin(login); err != nil {
		return err
	}
	if err := mapcommons.ValidatePassword(login, password, password); err != nil {
		return err
	}
	hash, err := mapcommons.HashPassword(password, cost)
	if err != nil {
		return err
	}
	// Servers starting at once on one store all make sure of the user: a
	// create that another beat to it finds the user there the next time.
	for attempt := 0; ; attempt++ {
		u, err := users.FindUserByLogin(ctx, login)
		switch {
		case err == nil:
			upd := mapcommons.UserUpdate{PasswordHash: &hash}
			if admin {
				upd.Admin = &admin
			}
			if email != "" {
				upd.Email = &email
			}
			_, err = users.UpdateUser(ctx, u.ID, upd)
			if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND && attempt < 3 {
				continue // deleted since: create it
			}
			return err
		case mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND:
			create := &mapcommons.User{Login: login, Email: email, Admin: admin, PasswordHash: hash}
			if create.Email == "" {
				create.Email = login + "@localhost"
			}
			if admin {
				create.Fullname = "Administrator"
			}
			err = users.CreateUser(ctx, create)
			if mapcommons.ErrorCode(err) == mapcommons.ECONFLICT && attempt < 3 {
				continue // created since (or its email taken: said the next time)
			}
			return err
		default:
			return err
		}
	}
}

// readPassword reads a password: from a terminal without echo, asked twice;
// otherwise the first line of stdin.
func readPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(stderr, "Password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprint(stderr, "Again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		if err != nil {
			return "", err
		}
		if string(a) != string(b) {
			return "", errors.New("the passwords differ")
		}
		return string(a), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", errors.New("no password on stdin")
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func userCreate(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	admin := fs.Bool("admin", false, "make the user an administrator")
	email := fs.String("email", "", "e-mail address (default LOGIN@localhost)")
	data := fs.String("data", envDefault(getenv, "data", "./data"), "directory of the embedded store (MAPCOMMONS_DATA)")
	dbURL := databaseURLFlag(fs, getenv)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, "usage: mapcommons user create [--admin] [--email E] [--data DIR | --database-url URL] LOGIN\n")
		return errors.New("need one LOGIN")
	}
	login := pos[0]
	password, err := readPassword(stdin, stderr)
	if err != nil {
		return err
	}
	db, err := openUserStore(ctx, *data, *dbURL, "mapcommons user create",
		"create users through its API (POST /users.json as an administrator)")
	if err != nil {
		return err
	}
	defer db.Close()
	cost, err := bcryptCost(getenv)
	if err != nil {
		return err
	}
	if err := ensureUser(ctx, db.svc.Users, login, *email, password, *admin, cost); err != nil {
		var e *mapcommons.Error
		if errors.As(err, &e) {
			return errors.New(e.Message)
		}
		return err
	}
	if *admin {
		fmt.Fprintf(stdout, "administrator %s ready\n", login)
	} else {
		fmt.Fprintf(stdout, "user %s ready\n", login)
	}
	return nil
}

// openUserStore opens the store for a user command (who): the embedded
// one only while no server holds it, since one process at a time opens
// it; while one runs, the error says to do instead what viaServer says,
// through the server. Closing the store releases the lock.
func openUserStore(ctx context.Context, data, dbURL, who, viaServer string) (*store, error) {
	var lock io.Closer
	if !isPostgresURL(dbURL) {
		l, err := lockData(data, who)
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("%w: while the server runs, %s, or stop it first", err, viaServer)
		} else if err != nil {
			return nil, err
		}
		lock = l
	}
	st, err := openStore(ctx, data, dbURL)
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		return nil, err
	}
	st.unlock = lock
	return st, nil
}

// userLink issues a one-time sign-in link (mapcommons.IssueSignInLink)
// and prints its URL: under --base-url, else its path only.
func userLink(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("user link", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", envDefault(getenv, "data", "./data"), "directory of the embedded store (MAPCOMMONS_DATA)")
	baseURL := fs.String("base-url", envDefault(getenv, "base-url", ""), "the server's root URL, to print the whole link (MAPCOMMONS_BASE_URL)")
	dbURL := databaseURLFlag(fs, getenv)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fmt.Fprint(stderr, "usage: mapcommons user link [--base-url URL] [--data DIR | --database-url URL] LOGIN\n")
		return errors.New("need one LOGIN")
	}
	db, err := openUserStore(ctx, *data, *dbURL, "mapcommons user link",
		"an administrator issues links through its API (POST /users/LOGIN/sign_in_link.json)")
	if err != nil {
		return err
	}
	defer db.Close()
	u, err := db.svc.Users.FindUserByLogin(ctx, pos[0])
	if err != nil {
		return fmt.Errorf("user %s: %w", pos[0], err)
	}
	token, expires, err := mapcommons.IssueSignInLink(ctx, db.svc.SignInLinks, u.ID, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s%s\n", strings.TrimRight(*baseURL, "/"), mapcommons.SignInLinkPath(token))
	fmt.Fprintf(stderr, "one-time sign-in link for %s, good until %s\n", u.Login, expires.UTC().Format(time.RFC3339))
	return nil
}

// bcryptCost is the bcrypt cost of new password hashes from
// MAPCOMMONS_BCRYPT_COST: bcrypt's default (10) when unset.
func bcryptCost(getenv func(string) string) (int, error) {
	v := getenv("MAPCOMMONS_BCRYPT_COST")
	if v == "" {
		return bcrypt.DefaultCost, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < bcrypt.MinCost || n > bcrypt.MaxCost {
		return 0, fmt.Errorf("MAPCOMMONS_BCRYPT_COST: %q is not a number between %d and %d", v, bcrypt.MinCost, bcrypt.MaxCost)
	}
	return n, nil
}

// gcBallast raises the heap the collector lets grow before it runs. A
// server's live heap is a few MiB (the datasets are mapped files, not
// heap), so by default the collector ran about every 3 MiB allocated: 90
// times a second under a stream of feature pages, a tenth of the
// server's CPU. The ballast is never written, so the kernel gives it no
// memory; it lets about its size of garbage more accumulate between
// collections. Left out when GOGC or GOMEMLIMIT tune the collector.
var (
	gcBallast     []byte
	gcBallastOnce sync.Once
)

const gcBallastSize = 32 << 20

func keepGCBallast() {
	gcBallastOnce.Do(func() {
		_, gogc := os.LookupEnv("GOGC")
		_, limit := os.LookupEnv("GOMEMLIMIT")
		if !gogc && !limit {
			gcBallast = make([]byte, gcBallastSize)
		}
	})
}
