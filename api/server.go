// Package api is the HTTP face of mapcommons: the GeoCommons REST interface
// (spec/api.md) as real clients use it (spec/wire-contract.md).
package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"mapcommons"
	"mapcommons/basemap"
	"mapcommons/fetch"
	"mapcommons/format"
	"mapcommons/ingest"
	"mapcommons/params"
	"mapcommons/style"
	"mapcommons/web"
)

// Config is what the server needs to know about its instance.
type Config struct {
	BaseURL   string          // absolute root for links; "" means from the request's Host
	Mode      mapcommons.Mode // hosted or appliance
	Signup    bool            // whether anyone may create an account
	MaxUpload int64           // bytes of request body accepted; also what a zip or a gzip-encoded URL body may expand to
	TempDir   string          // where uploads are spooled ("" = the system's)
	// AccessLog takes the line of each request, in the form slog's
	// TextHandler gives a record (its time, level and message, then the
	// request's attributes), written straight to it (accesslog.go); nil:
	// no lines.
	AccessLog  io.Writer
	BcryptCost int // cost of new password hashes; 0 means bcrypt's default
	// ResponseCache is the bytes of feature-query answers kept for repeated
	// queries (0: 32 MiB; negative: none).
	ResponseCache int64
	// TileCache is the bytes of vector tiles kept (0: 64 MiB; negative:
	// none), apart from ResponseCache so that tiles and queries do not
	// push each other out.
	TileCache int64
	// MaxTileFeatures is the most features one vector tile may hold, thinned
	// points counted once a cell (0: DefaultMaxTileFeatures; negative: no
	// limit); past it the tile is a 413 and its making stops.
	MaxTileFeatures int
	// AllowPrivateFetch lets URL registrations fetch from loopback, private
	// and reserved addresses (tests, closed networks).
	AllowPrivateFetch bool
	// FetchTimeout bounds one fetch of a URL (0: 5 minutes).
	FetchTimeout time.Duration
	// MaxFeatures is the most features one dataset may hold, by upload,
	// appended features or a fetched URL (--max-features; 0: 50,000,000;
	// negative: no limit but the segment's own).
	MaxFeatures int64
	// QueryTimeout bounds the work of one feature query, download,
	// classification or search (0: 30 seconds; negative: no bound). Past
	// it the answer is a 503 (ETIMEOUT) and the work stops.
	QueryTimeout time.Duration
	// DefaultShare is the sharing list of new datasets and maps on an
	// appliance (--default-share; nil: private to their owner). Ignored on
	// a hosted instance, where new objects are shared with everyone.
	DefaultShare []mapcommons.Permission
	// TrustedProxies are the reverse proxies whose Forwarded or
	// X-Forwarded-For headers say who the client is (--trusted-proxies);
	// the login limiter and the request log use that address.
	TrustedProxies []netip.Prefix
	// SessionTTL is how long a browser's session lasts after its sign-in
	// (0: DefaultSessionTTL).
	SessionTTL time.Duration
	// Now is the clock of the login limiter and of sessions (nil: time.Now).
	Now func() time.Time
	// MaxForm is the largest urlencoded, JSON or multipart-text body
	// parsed into parameters (--max-form; 0: DefaultMaxForm). Uploads are
	// bounded by MaxUpload instead.
	MaxForm int64
	// BodyTimeout is how long a request body may make no progress before
	// it is cut (0: DefaultBodyTimeout; negative: never).
	BodyTimeout time.Duration
	// BodyMinRate is the average rate in bytes a second a body must keep
	// once its first BodyTimeout has passed (0: DefaultBodyMinRate;
	// negative: none).
	BodyMinRate int64
	// CORSOrigins are the origins (scheme://host[:port]) of pages allowed
	// to call the API from a browser with the user's credentials
	// (--cors-origins). The entry "*" opens anonymous GETs (answers any
	// anonymous caller gets) to pages of any origin, without credentials.
	CORSOrigins []string
	// FormMemory bounds the bytes of form and JSON bodies being read at
	// once, over all requests (parsing one takes about three times its
	// size while it lasts); a body that finds it spent is a 429 (0: 16 MiB
	// or 4 × MaxForm, whichever is more; negative: no bound).
	FormMemory int64
	// Basemaps are the raster basemaps a map may name (--basemap), offered
	// beside the built-in one (package basemap).
	Basemaps []basemap.Raster
	// PMTiles are the Protomaps basemaps of local PMTiles archives
	// (--basemap-pmtiles, opened by basemap.OpenPMTiles), offered beside
	// the others and drawn by the map pages before the built-in one.
	PMTiles []*basemap.PMTiles
	// EagerThumbnails draws the thumbnails of a dataset or map (the
	// images the lists and feeds show) into the tile cache in the
	// background when a request changes it (--eager-thumbnails).
	EagerThumbnails bool
	// SetupToken is the token of the server's set-up link (setup.go),
	// with which the first administrator is made; "" for none (the store
	// had an administrator when the server started). Held in memory only.
	SetupToken string
}

// DefaultMaxFeatures is Config.MaxFeatures when it is not given.
const DefaultMaxFeatures = 50_000_000

// Server serves the API. Create it with NewServer.
type Server struct {
	logger *slog.Logger
	cfg    Config
	policy mapcommons.Policy
	svc    mapcommons.Services
	mux    *http.ServeMux
	auth   *authCache
	// limiter slows down guessing passwords: failed logins per login and
	// per client address.
	limiter *authLimiter
	cache   *responseCache // nil when disabled
	tiles   *responseCache // vector tiles; nil when disabled
	// classes classifies classed map layers and keeps their classes.
	classes *style.Classifier
	// feeds fetches and refetches the datasets registered from a URL.
	feeds *ingest.Feeds
	// cors is what --cors-origins allows.
	cors corsPolicy
	// forms bounds the memory of form bodies being read (nil: unbounded).
	forms *params.FormBudget
	// patterns are the mux patterns routes registered, in order.
	patterns []string
	// lastSweep is when (Unix seconds) expired sessions were last removed.
	lastSweep atomic.Int64
	// assets are the browser application's pages and files.
	assets *web.Assets
	csp    string // the pages' Content-Security-Policy (pageCSP)
	// embedCSP is the policy of a public map's embed, which any site may frame.
	embedCSP string
	// warmer draws thumbnails of what changed (thumbnails.go); draws
	// counts the images drawn (drawPNG).
	warmer warmer
	draws  atomic.Int64
	// setup is the set-up link (nil: none).
	setup *setupState
}

// DefaultMaxUpload is the largest request body when Config.MaxUpload is
// not set.
const DefaultMaxUpload = 512 << 20

// Policy is the permission policy the configuration gives (the one the
// server decides by, and the command line's import too).
func (cfg Config) Policy() mapcommons.Policy {
	return mapcommons.Policy{Mode: cfg.Mode, Signup: cfg.Signup, DefaultShare: cfg.DefaultShare}
}

// NewServer returns the API handler.
func NewServer(logger *slog.Logger, cfg Config, svc mapcommons.Services) *Server {
	if cfg.Mode == "" {
		cfg.Mode = mapcommons.ModeHosted
	}
	if cfg.MaxUpload <= 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.MaxFeatures == 0 {
		cfg.MaxFeatures = DefaultMaxFeatures
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.QueryTimeout == 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.ResponseCache == 0 {
		cfg.ResponseCache = 32 << 20
	}
	if cfg.TileCache == 0 {
		cfg.TileCache = 64 << 20
	}
	if cfg.MaxTileFeatures == 0 {
		cfg.MaxTileFeatures = DefaultMaxTileFeatures
	}
	if cfg.MaxForm <= 0 {
		cfg.MaxForm = DefaultMaxForm
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.BodyMinRate == 0 {
		cfg.BodyMinRate = DefaultBodyMinRate
	}
	if cfg.FormMemory == 0 {
		cfg.FormMemory = max(16<<20, 4*cfg.MaxForm)
	}
	limits := svc.LoginLimits
	if limits == nil {
		limits = mapcommons.NewMemoryLoginLimits()
	}
	s := &Server{
		logger:  logger,
		cfg:     cfg,
		policy:  cfg.Policy(),
		svc:     svc,
		mux:     http.NewServeMux(),
		auth:    newAuthCache(cfg.BcryptCost),
		classes: style.NewClassifier(svc.Features),
		limiter: newAuthLimiter(limits, cfg.Now),
		setup:   newSetupState(cfg.SetupToken),
	}
	if cfg.ResponseCache > 0 {
		s.cache = newResponseCache(cfg.ResponseCache)
	}
	if cfg.TileCache > 0 {
		s.tiles = newResponseCache(cfg.TileCache)
		s.tiles.maxBody = maxCachedTile
	}
	s.cors = newCORS(cfg.CORSOrigins)
	if cfg.FormMemory > 0 {
		s.forms = params.NewFormBudget(cfg.FormMemory)
	}
	assets, err := web.Load()
	if err != nil {
		panic("web: the embedded templates do not parse: " + err.Error())
	}
	s.assets = assets
	s.csp = pageCSP(cfg.Basemaps, "'none'")
	s.embedCSP = pageCSP(cfg.Basemaps, "*")
	s.feeds = &ingest.Feeds{
		Fetcher:  fetch.New(fetch.Options{AllowPrivate: cfg.AllowPrivateFetch, MaxBytes: cfg.MaxUpload, Timeout: cfg.FetchTimeout}),
		Opener:   s.opener(),
		Datasets: svc.Datasets, Features: svc.Features, Claims: svc.FeedClaims,
		MaxFeatures: cfg.MaxFeatures, FetchTimeout: cfg.FetchTimeout, Logger: logger,
		// A feed refreshed in the background changed as a request would.
		Refreshed: func(id int64) {
			if s.cfg.EagerThumbnails && s.tiles != nil {
				s.warm(warmJob{id: id})
			}
		},
	}
	s.routes()
	return s
}

// handlerFunc is the shape of every handler: it writes a success itself
// and returns an error for the one adapter to write.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if errors.Is(err, mapcommons.ErrCatalogueMoved) && mapcommons.RecentCatalogue(r.Context()) {
			if sw, ok := w.(*statusWriter); !ok || sw.status == 0 {
				// The dataset's row from memory was older than its
				// features: nothing was answered; again, with the
				// catalogue as it is (mapcommons.WithRecentCatalogue).
				r = r.WithContext(mapcommons.WithoutRecentCatalogue(r.Context()))
				err = h(w, r)
			}
		}
		if err == nil {
			s.warmAfter(w, r)
		}
		if err != nil {
			if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
				// Too late for an error body: the answer has begun. Log and cut.
				s.logger.ErrorContext(r.Context(), "error after the response began", "path", r.URL.Path, "err", err)
				panic(http.ErrAbortHandler)
			}
			s.Error(w, r, err)
		}
	})
}

// request is what the server learns about a request before routing it.
type request struct {
	format   string           // the path suffix without the dot; "json" when none
	callback string           // a validated JSONP callback name, or ""
	user     *mapcommons.User // nil when anonymous
	path     string           // the path as sent
	// session is the session that authenticated the request (nil: none),
	// sessionToken its token, from the cookie.
	session      *mapcommons.Session
	sessionToken string
	csrfChecked  bool // the request carried the session's CSRF token
}

type requestKey struct{}

func info(r *http.Request) *request {
	if v, ok := r.Context().Value(requestKey{}).(*request); ok {
		return v
	}
	return &request{format: "json"}
}

func callbackOf(r *http.Request) string { return info(r).callback }

// caller returns the logged-in user of the request, or nil.
func caller(r *http.Request) *mapcommons.User { return info(r).user }

var callbackRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$.]*$`)

// callbackParam is the request's JSONP callback ("" for none). The query
// is parsed only when it may name one (the key, or a key escaped).
func callbackParam(r *http.Request) string {
	q := r.URL.RawQuery
	if !strings.Contains(q, "callback") && !strings.Contains(q, "%") {
		return ""
	}
	return r.URL.Query().Get("callback")
}

// ServeHTTP normalises the path and format, authenticates, routes, and logs
// one line per request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ew := newEncodeWriter(w, r)
	sw := &statusWriter{ResponseWriter: ew}
	ri := &request{path: r.URL.Path}
	sw.ri = ri
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.ErrorContext(r.Context(), "panic", "path", ri.path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if sw.status == 0 {
				s.Error(sw, r, fmt.Errorf("panic: %v", v))
			}
		}
		// Reached only by answers that were not cut short.
		ew.finish()
		login := ""
		if ri.user != nil {
			login = ri.user.Login
		}
		if s.cfg.AccessLog != nil {
			now := time.Now()
			writeAccessLine(s.cfg.AccessLog, now, r.Method, ri.path, sw.code(), sw.bytes, float64(now.Sub(start).Microseconds())/1000,
				login, s.clientIP(r))
		}
	}()

	r = r.WithContext(context.WithValue(r.Context(), requestKey{}, ri))
	if hasBody(r) && s.cfg.BodyTimeout > 0 {
		// From here on the body is read against the clock, also when the
		// server drains what a handler left unread (up to 256 KiB; a
		// larger rest closes the connection at once). Only the copy of the
		// request carries the clock: the server must still see its own
		// body to make that choice.
		sw.clock = newBodyClock(w, r.Body, s.cfg.BodyTimeout, max(0, s.cfg.BodyMinRate))
		r.Body = sw.clock
	}
	r.URL.Path, ri.format = normalizePath(r.URL.Path)
	r.URL.RawPath = ""
	if isPreflight(r) {
		s.preflight(sw, r)
		return
	}
	if cb := callbackParam(r); cb != "" {
		if !callbackRE.MatchString(cb) || len(cb) > 128 {
			s.Error(sw, r, mapcommons.Errorf(mapcommons.EINVALID, "callback: not a valid JavaScript function name"))
			return
		}
		ri.callback = cb
	}
	s.setCORS(sw, r, ri.callback != "" || !hasCredentials(r))
	if !safeMethod(r.Method) {
		if err := s.checkOrigin(r); err != nil {
			s.Error(sw, r, err)
			return
		}
	}
	// JSONP is readable by a <script> tag of any page: it is served as
	// anonymous whatever credentials the browser adds.
	if ri.callback == "" {
		user, err := s.authenticate(sw, r)
		if err != nil {
			s.Error(sw, r, err)
			return
		}
		ri.user = user
	}
	if ri.user == nil && safeMethod(r.Method) {
		// No writes of its own to read back: the store may answer from
		// a catalogue a moment old (mapcommons.WithRecentCatalogue).
		r = r.WithContext(mapcommons.WithRecentCatalogue(r.Context()))
	}
	if !safeMethod(r.Method) && !signInRequest(r) {
		// A session's state-changing requests carry its CSRF token.
		if err := s.checkCSRF(r); err != nil {
			s.Error(sw, r, err)
			return
		}
	}
	s.mux.ServeHTTP(sw, r)
}

// normalizePath collapses repeated slashes, maps /overlays to /datasets, and
// strips a known format suffix from the last segment, returning it.
func normalizePath(p string) (string, string) {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	if p == "/overlays" || strings.HasPrefix(p, "/overlays/") || strings.HasPrefix(p, "/overlays.") {
		p = "/datasets" + strings.TrimPrefix(p, "/overlays")
	}
	if len(p) > 1 {
		p = strings.TrimSuffix(p, "/")
	}
	last := p[strings.LastIndexByte(p, '/')+1:]
	if i := strings.LastIndexByte(last, '.'); i > 0 {
		ext := strings.ToLower(last[i+1:])
		if _, ok := format.ContentType(ext); ok {
			return p[:len(p)-len(last)+i], ext
		}
	}
	return p, "json"
}

// statusWriter records the status and size of an answer and adds the
// Status header old Rails servers sent (wire contract 0.4), the security
// headers of an HTML answer (secureHTML), and a private Cache-Control to
// an identified caller's answer that set none.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	clock  *bodyClock // the request's body, when it has one
	ri     *request   // the request's caller
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	if c := w.clock; c != nil && c.n > 0 && !c.done {
		// A body read in part and given up (too large, too slow, the
		// budget spent): close rather than drain the rest first, which
		// would hold the answer back for as long as the client dawdles.
		w.Header().Set("Connection", "close")
		c.abandon()
	}
	w.status = code
	secureHTML(w.Header())
	if w.ri != nil && w.ri.user != nil && w.Header().Get("Cache-Control") == "" {
		// An answer to a caller who identified themselves is theirs,
		// unless its handler said otherwise: no shared cache keeps it
		// (a session's cookie, unlike Basic, does not keep it out).
		w.Header().Set("Cache-Control", perCaller)
	}
	w.Header()["Status"] = statusLine(code)
	w.ResponseWriter.WriteHeader(code)
}

// okStatus is the Status header of most answers, made once. Header values
// are only ever replaced or appended to, so answers can share it.
var okStatus = []string{"200 OK"}

// statusLine is the value of the Status header the original service sent
// (wire contract): the code and its text.
func statusLine(code int) []string {
	if code == http.StatusOK {
		return okStatus
	}
	return []string{strconv.Itoa(code) + " " + http.StatusText(code)}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// baseURL is the absolute root of links in answers.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.BaseURL != "" {
		return s.cfg.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
