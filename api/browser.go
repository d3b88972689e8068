package api

// Browsers send the Basic credentials they have cached for the server with
// every request to it, whichever page asks. So that a page of another site
// cannot act as the user:
//
//   - state-changing requests (every method but GET, HEAD and OPTIONS, and
//     the GET that refetches a feed) from another origin are refused with
//     403: an Origin header naming neither the server's own origin nor one
//     of --cors-origins, or Sec-Fetch-Site cross-site or same-site without
//     such an Origin. Same-site counts as foreign: a sibling host under the
//     same registrable domain is often somebody else's (user pages, other
//     services). The real clients send neither header and are not
//     concerned;
//   - JSONP (callback=) is served as anonymous: a <script> tag of any page
//     can read it, so it never shows what only the user may see;
//   - CORS: the origins of --cors-origins get preflights and
//     Access-Control-Allow-* with credentials; the entry "*" lets any page
//     read what anonymous GETs answer, without credentials.

import (
	"net/http"
	"net/url"
	"strings"

	"mapcommons"
	"mapcommons/params"
)

// corsPolicy is what --cors-origins allows.
type corsPolicy struct {
	origins map[string]bool // normalized origins trusted with credentials
	any     bool            // "*": anonymous GETs open to every origin
}

func newCORS(list []string) corsPolicy {
	p := corsPolicy{origins: map[string]bool{}}
	for _, o := range list {
		o = strings.TrimSpace(o)
		switch {
		case o == "":
		case o == "*":
			p.any = true
		default:
			if n, ok := normalizeOrigin(o); ok {
				p.origins[n] = true
			}
		}
	}
	return p
}

// normalizeOrigin writes an origin (or a URL) as scheme://host[:port] in
// lower case without the scheme's default port; false when it is none
// ("null", a bare word).
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	return u.Scheme + "://" + stripDefaultPort(u.Scheme, strings.ToLower(u.Host)), true
}

// stripDefaultPort drops :80 from an http host and :443 from an https one.
func stripDefaultPort(scheme, host string) string {
	switch {
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		return strings.TrimSuffix(host, ":80")
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		return strings.TrimSuffix(host, ":443")
	}
	return host
}

// ownOrigin reports whether origin (normalized) is the server's own: the
// origin of --base-url when set, else the request's Host under either
// scheme (behind a TLS proxy the server sees http while the page is
// https; the host is what matters).
func (s *Server) ownOrigin(r *http.Request, origin string) bool {
	if s.cfg.BaseURL != "" {
		own, ok := normalizeOrigin(s.cfg.BaseURL)
		return ok && origin == own
	}
	scheme, host, _ := strings.Cut(origin, "://")
	host = stripDefaultPort(scheme, host)
	req := strings.ToLower(r.Host)
	return host == stripDefaultPort("http", req) || host == stripDefaultPort("https", req)
}

// safeMethod reports whether a method only reads.
func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// checkOrigin refuses a state-changing request that a page of another
// origin made (see the top of this file).
func (s *Server) checkOrigin(r *http.Request) error {
	site := strings.ToLower(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site")))
	raw := r.Header.Get("Origin")
	if raw == "" {
		if site == "" || site == "same-origin" || site == "none" {
			return nil
		}
		return mapcommons.Errorf(mapcommons.EFORBIDDEN, "cross-site request refused (Sec-Fetch-Site: %s)", site)
	}
	origin, ok := normalizeOrigin(raw)
	switch {
	case ok && s.cors.origins[origin]:
		return nil
	case ok && s.ownOrigin(r, origin) && site != "cross-site" && site != "same-site":
		return nil
	}
	return mapcommons.Errorf(mapcommons.EFORBIDDEN, "cross-origin request refused: origin %q is neither this server's nor one of cors-origins", params.ClipKey(raw))
}

// Headers of CORS answers.
const (
	corsMethods = "GET, HEAD, POST, PUT, PATCH, DELETE"
	corsHeaders = "Authorization, Content-Type, Accept, X-Requested-With, X-CSRF-Token, If-Match, If-None-Match"
	corsExpose  = "Location, Status, Retry-After, WWW-Authenticate, ETag"
	corsMaxAge  = "600"
)

// setCORS adds the Access-Control-Allow-* headers an answer to a request
// with an Origin gets: with credentials for an origin of --cors-origins;
// "*" for an anonymous GET when --cors-origins holds "*".
func (s *Server) setCORS(w http.ResponseWriter, r *http.Request, anonymous bool) {
	h := w.Header()
	if len(s.cors.origins) > 0 || s.cors.any {
		// The answer depends on Origin wherever CORS is configured: a
		// cache must not give one page's answer to another.
		h.Add("Vary", "Origin")
	}
	raw := r.Header.Get("Origin")
	if raw == "" {
		return
	}
	if origin, ok := normalizeOrigin(raw); ok && s.cors.origins[origin] {
		h.Set("Access-Control-Allow-Origin", raw)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Expose-Headers", corsExpose)
		return
	}
	if s.cors.any && anonymous && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Expose-Headers", corsExpose)
	}
}

// isPreflight reports whether r is a CORS preflight.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Origin") != "" && r.Header.Get("Access-Control-Request-Method") != ""
}

// preflight answers a CORS preflight: 204 with what the origin may send,
// or 403 when it may send nothing of the kind.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Add("Vary", "Access-Control-Request-Method")
	h.Add("Vary", "Access-Control-Request-Headers")
	raw := r.Header.Get("Origin")
	method := strings.ToUpper(strings.TrimSpace(r.Header.Get("Access-Control-Request-Method")))
	if origin, ok := normalizeOrigin(raw); ok && s.cors.origins[origin] {
		h.Set("Access-Control-Allow-Origin", raw)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Allow-Methods", corsMethods)
		h.Set("Access-Control-Allow-Headers", corsHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	asked := strings.ToLower(r.Header.Get("Access-Control-Request-Headers"))
	if s.cors.any && (method == http.MethodGet || method == http.MethodHead) && !strings.Contains(asked, "authorization") {
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, HEAD")
		h.Set("Access-Control-Allow-Headers", "Accept, Content-Type, X-Requested-With")
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.Error(w, r, mapcommons.Errorf(mapcommons.EFORBIDDEN, "origin %q may not call this server (cors-origins)", params.ClipKey(raw)))
}
