package api

// Sessions for browsers (issue 14). Clients authenticate with HTTP Basic
// on every request; a browser signs in once (POST /session) and carries
// the cookie mc_session, which the API accepts wherever it accepts Basic
// (Basic wins when both come). Every state-changing request authenticated
// by the cookie must carry the session's CSRF token (header X-CSRF-Token,
// or the form field csrf_token of a plain urlencoded form), else 403
// before the body is read (a plain form's own fields aside). Sign-in is
// exempt from the token but not from the Origin checks of browser.go.

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/params"
)

// Names of the session cookie, the CSRF header and the CSRF form field.
const (
	sessionCookie = "mc_session"
	csrfHeader    = "X-CSRF-Token"
	csrfField     = "csrf_token"
)

// DefaultSessionTTL is Config.SessionTTL when it is not given.
const DefaultSessionTTL = 14 * 24 * time.Hour

// sessionSweep is how often, at most, a sign-in also removes the expired
// sessions from the store (expired sessions are refused anyway, and
// deleted when presented).
const sessionSweep = time.Hour

// sessionDoc is the JSON of a session: who it is, and the token its
// state-changing requests must carry.
type sessionDoc struct {
	Login     string `json:"login"`
	Admin     bool   `json:"admin"`
	CSRFToken string `json:"csrf_token,omitempty"` // none for a Basic caller
	ExpiresAt string `json:"expires_at,omitempty"`
	// Mode is the server's kind (hosted or appliance), which decides who
	// may read what is uploaded: the pages say so where one shares.
	Mode mapcommons.Mode `json:"mode"`
}

// sessionFormat refuses a suffix other than .json on /session.
func sessionFormat(r *http.Request) error {
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "sessions have no %s form", f)
	}
	return nil
}

// sessionCookieToken returns the well-formed token of the session cookie,
// or "".
func sessionCookieToken(r *http.Request) string {
	c, err := r.Cookie(sessionCookie)
	if err != nil || !mapcommons.ValidSessionToken(c.Value) {
		return ""
	}
	return c.Value
}

// sessionUser authenticates a request by its session cookie (no
// Authorization header came). A cookie that names no live session (signed
// out, expired, its user deleted) counts as none: the request is
// anonymous; an expired session is deleted and the answer clears its
// cookie, as it does a deleted user's (a cookie of no session is left as
// it is: see below).
func (s *Server) sessionUser(w http.ResponseWriter, r *http.Request) (*mapcommons.User, error) {
	if _, err := r.Cookie(sessionCookie); err != nil || s.svc.Sessions == nil {
		return nil, nil
	}
	// A cookie of no session (ended by a sign-out elsewhere, or by this
	// browser signing in again) is anonymous, and left as it is: telling
	// the browser to forget it could reach the browser after the answer
	// to its new sign-in, which set the cookie anew, and sign it out (a
	// request sent with the old cookie answered after the sign-in). The
	// next sign-in replaces it; an expired session's cookie, below, is
	// cleared by the first request that finds it expired.
	token := sessionCookieToken(r)
	if token == "" {
		return nil, nil
	}
	sess, err := s.svc.Sessions.FindSessionByToken(r.Context(), mapcommons.HashSessionToken(token))
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if sess.Expired(s.cfg.Now()) {
		if err := s.svc.Sessions.DeleteSession(r.Context(), sess.TokenHash); err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
			return nil, err
		}
		s.clearSessionCookie(w, r)
		return nil, nil
	}
	u, err := s.svc.Users.FindUserByID(r.Context(), sess.UserID)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		s.clearSessionCookie(w, r)
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	ri := info(r)
	ri.session, ri.sessionToken = sess, token
	return u, nil
}

// secureCookies reports whether cookies must be Secure: the request came
// over TLS, or the server's --base-url is https.
func (s *Server) secureCookies(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(s.cfg.BaseURL, "https:")
}

// setSessionCookie gives the browser the session's cookie.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", MaxAge: int(s.cfg.SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies(r)})
}

// clearSessionCookie tells the browser to forget its session cookie.
func (s *Server) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.secureCookies(r)})
}

// signInRequest reports whether r is the sign-in, which needs no CSRF token.
func signInRequest(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/session"
}

// checkCSRF refuses a request authenticated by a session that does not
// carry the session's CSRF token: in the X-CSRF-Token header, or, for a
// plain urlencoded form without that header, in its csrf_token field (the
// form is read, within --max-form, and handed on unchanged). Requests not
// authenticated by a session pass. Checked once a request.
func (s *Server) checkCSRF(r *http.Request) error {
	ri := info(r)
	if ri.session == nil || ri.csrfChecked {
		return nil
	}
	given := r.Header.Get(csrfHeader)
	if given == "" && hasBody(r) {
		if mt, _ := params.ParseContentType(r.Header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
			v, err := s.formCSRF(r)
			if err != nil {
				return err
			}
			given = v
		}
	}
	if given == "" || !mapcommons.CheckSessionCSRF(ri.sessionToken, given) {
		return mapcommons.Errorf(mapcommons.EFORBIDDEN,
			"missing or wrong CSRF token: a request signed in by a session must send the session's csrf_token in the %s header", csrfHeader)
	}
	ri.csrfChecked = true
	return nil
}

// formCSRF reads a urlencoded body (bounded as every form is), returns its
// csrf_token field, and puts the body back for the handler.
func (s *Server) formCSRF(r *http.Request) (string, error) {
	if r.ContentLength > s.cfg.MaxForm {
		return "", params.FormTooLarge(s.cfg.MaxForm)
	}
	opt := params.ParseOptions{MaxBody: s.cfg.MaxUpload, MaxForm: s.cfg.MaxForm, Budget: s.forms}
	b, release, err := params.ReadForm(r.Body, opt)
	release()
	if err != nil {
		return "", err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	p := params.Params{}
	if err := p.ParseQuery(string(b)); err != nil {
		return "", err
	}
	v, _ := p.String(csrfField)
	return v, nil
}

// handleSessionCreate signs in: POST /session with login and password (a
// form or JSON). 201 with the session and its cookie; 401 without a
// cookie when the credentials are wrong, limited as failed Basic logins
// are (authLimiter).
func (s *Server) handleSessionCreate(w http.ResponseWriter, r *http.Request) error {
	if err := sessionFormat(r); err != nil {
		return err
	}
	if s.svc.Sessions == nil {
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "this server keeps no sessions")
	}
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	p := userParams(q.Params)
	login, _ := p.String("login")
	password, _ := p.String("password")
	var u *mapcommons.User
	if link, _ := p.String("link"); link != "" && s.svc.SignInLinks != nil {
		u, err = s.linkSignIn(w, r, link)
	} else if login == "" || password == "" {
		return mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "login and password required")
	} else {
		code, _ := p.String("code")
		u, err = s.checkLogin(w, r, login, password, code, false)
	}
	if err != nil {
		return err
	}
	doc, err := s.openSession(w, r, u)
	if err != nil {
		return err
	}
	return s.created(w, r, s.baseURL(r)+"/session.json", doc)
}

// openSession signs u in on the browser of r: a new session in the store
// and its cookie (the browser's previous session ended), answered
// no-store; it returns the session's JSON.
func (s *Server) openSession(w http.ResponseWriter, r *http.Request, u *mapcommons.User) (sessionDoc, error) {
	now := s.cfg.Now()
	s.sweepSessions(r, now)
	token, hash := mapcommons.NewSessionToken()
	sess := &mapcommons.Session{TokenHash: hash, UserID: u.ID, CreatedAt: now, ExpiresAt: now.Add(s.cfg.SessionTTL)}
	if err := s.svc.Sessions.CreateSession(r.Context(), sess); err != nil {
		return sessionDoc{}, err
	}
	ri := info(r)
	if old := ri.session; old != nil {
		// A browser signing in again leaves no session behind.
		if err := s.svc.Sessions.DeleteSession(r.Context(), old.TokenHash); err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
			return sessionDoc{}, err
		}
	}
	ri.user, ri.session, ri.sessionToken = u, sess, token
	// Only the new session cookie: not the clearing of a stale one
	// (sessionUser); the device cookie of a client new to the user stays.
	var keep []string
	for _, c := range w.Header().Values("Set-Cookie") {
		if !strings.HasPrefix(c, sessionCookie+"=") {
			keep = append(keep, c)
		}
	}
	w.Header()["Set-Cookie"] = keep
	s.setSessionCookie(w, r, token)
	w.Header().Set("Cache-Control", "no-store")
	return s.sessionJSON(u, sess, token), nil
}

// sweepSessions removes expired sessions from the store, at most once per
// sessionSweep.
func (s *Server) sweepSessions(r *http.Request, now time.Time) {
	last := s.lastSweep.Load()
	if now.Unix()-last < int64(sessionSweep/time.Second) || !s.lastSweep.CompareAndSwap(last, now.Unix()) {
		return
	}
	if _, err := s.svc.Sessions.DeleteExpiredSessions(r.Context(), now); err != nil {
		s.logger.WarnContext(r.Context(), "removing expired sessions", "err", err)
	}
}

func (s *Server) sessionJSON(u *mapcommons.User, sess *mapcommons.Session, token string) sessionDoc {
	return sessionDoc{Login: u.Login, Admin: u.Admin, CSRFToken: mapcommons.SessionCSRFToken(token),
		ExpiresAt: sess.ExpiresAt.UTC().Format(time.RFC3339), Mode: s.cfg.Mode}
}

// handleSessionGet says who the caller is: GET /session; with the CSRF
// token and end of the session when a session authenticated the request
// (Basic callers need no token). 401 when anonymous, or 204 with
// ?optional=1: the pages ask on every load, and a visitor is no error
// there (nor a red line in the browser's console).
func (s *Server) handleSessionGet(w http.ResponseWriter, r *http.Request) error {
	if err := sessionFormat(r); err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	ri := info(r)
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case ri.user == nil && optionalSession(r):
		return empty(w, http.StatusNoContent)
	case ri.user == nil:
		return mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "not signed in")
	case ri.session == nil:
		return s.writeJSON(w, r, http.StatusOK, sessionDoc{Login: ri.user.Login, Admin: ri.user.Admin, Mode: s.cfg.Mode})
	}
	return s.writeJSON(w, r, http.StatusOK, s.sessionJSON(ri.user, ri.session, ri.sessionToken))
}

// optionalSession reports whether GET /session was asked with optional=1
// (or true): a visitor then gets a 204 rather than a 401.
func optionalSession(r *http.Request) bool {
	v := strings.ToLower(r.URL.Query().Get("optional"))
	return v == "1" || v == "true"
}

// handleSessionDelete signs out: DELETE /session ends the session in the
// store (its CSRF token checked first, as for any state-changing request)
// and clears the cookie. 204 also when there was no live session.
func (s *Server) handleSessionDelete(w http.ResponseWriter, r *http.Request) error {
	if err := sessionFormat(r); err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	if sess := info(r).session; sess != nil {
		if err := s.svc.Sessions.DeleteSession(r.Context(), sess.TokenHash); err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
			return err
		}
	}
	s.clearSessionCookie(w, r)
	return empty(w, http.StatusNoContent)
}

// endOtherSessions ends the sessions of u but the request's own (after a
// password change).
func (s *Server) endOtherSessions(r *http.Request, u *mapcommons.User) error {
	if s.svc.Sessions == nil {
		return nil
	}
	keep := ""
	if ri := info(r); ri.session != nil && ri.session.UserID == u.ID {
		keep = ri.session.TokenHash
	}
	_, err := s.svc.Sessions.DeleteUserSessions(r.Context(), u.ID, keep)
	return err
}

// browserRequest reports whether a 401 answer goes to a browser's script
// rather than a client: it must then not challenge with Basic, which
// would open the browser's own login prompt.
func browserRequest(r *http.Request) bool {
	if r.URL.Path == "/session" || strings.EqualFold(r.Header.Get("X-Requested-With"), "XMLHttpRequest") {
		return true
	}
	_, err := r.Cookie(sessionCookie)
	return err == nil && r.Header.Get("Authorization") == ""
}
