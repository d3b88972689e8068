package api

// The set-up link (issue 28): the way in for the first administrator of
// a fresh server. A server that starts on a store without an administrator
// (and without MAPCOMMONS_ADMIN_PASSWORD) is given a random token
// (Config.SetupToken) and writes its link, /app/setup#token=…, in its
// log: whoever reads the log runs the server. The set-up page posts the
// token (header X-Setup-Token, checked before the body is read, in
// constant time) with the new administrator's login and password to POST
// /setup, which makes the account only while the store has no
// administrator (UserService.CreateFirstAdmin: the check and the insert
// are one step there, so that two servers on one database cannot both
// make one), once, and signs the browser in. "The first account becomes
// the administrator" would give a fresh server exposed to the internet to
// whoever finds it first; the link gives it to whoever can read its log.

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"

	"mapcommons"
)

// setupHeader is the header that carries the set-up link's token.
const setupHeader = "X-Setup-Token"

// SetupPath is the path of the set-up link of token: the set-up page, the
// token in its fragment (which the browser sends to no server: it stays
// out of request logs and Referer headers; the page's script posts it).
func SetupPath(token string) string { return "/app/setup#token=" + token }

// NewSetupToken returns a new random token for a set-up link: 256 bits
// from crypto/rand, in base64url.
func NewSetupToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (since Go 1.24 it crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// setupState is the server's set-up link: the digest of its token, held
// in memory only, and whether it is spent (an administrator made by it, or
// found in the store). mu makes one set-up at a time in this process (the
// store decides between processes).
type setupState struct {
	mu     sync.Mutex
	digest [sha256.Size]byte
	spent  bool
}

func newSetupState(token string) *setupState {
	if token == "" {
		return nil
	}
	return &setupState{digest: sha256.Sum256([]byte(token))}
}

// matches reports whether given is the token, in time that does not
// depend on where the two differ: the digests, of one length whatever was
// given, are compared by crypto/subtle.
func (st *setupState) matches(given string) bool {
	d := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(d[:], st.digest[:]) == 1
}

// setupDoc is the JSON of GET /setup: whether this server's set-up link
// still works, and the kind of server it is.
type setupDoc struct {
	// Open says that the server has a set-up link and no administrator yet.
	Open bool            `json:"open"`
	Mode mapcommons.Mode `json:"mode"`
}

// setupOpen reports whether the set-up link still works: there is one,
// it is not spent, and the store has no administrator (one found there
// spends it).
func (s *Server) setupOpen(r *http.Request) (bool, error) {
	st := s.setup
	if st == nil {
		return false, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.spent {
		return false, nil
	}
	has, err := s.svc.Users.HasAdmin(r.Context())
	if err != nil {
		return false, err
	}
	if has {
		st.spent = true
	}
	return !has, nil
}

// errNoSetup is the answer of POST /setup on a server with no set-up to
// do.
func errNoSetup() error {
	return mapcommons.Errorf(mapcommons.ENOTFOUND, "this server has no set-up to do: it has an administrator (or was started with MAPCOMMONS_ADMIN_PASSWORD); sign in")
}

// handleSetupGet answers GET /setup: whether the set-up link works, and
// the server's mode (for the set-up page).
func (s *Server) handleSetupGet(w http.ResponseWriter, r *http.Request) error {
	if err := setupFormat(r); err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	open, err := s.setupOpen(r)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return s.writeJSON(w, r, http.StatusOK, setupDoc{Open: open, Mode: s.cfg.Mode})
}

// setupFormat refuses a suffix other than .json on /setup.
func setupFormat(r *http.Request) error {
	if f := info(r).format; f != "json" {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "the set-up has no %s form", f)
	}
	return nil
}

// handleSetupCreate answers POST /setup: the first administrator made
// (login, password and password_confirmation, email optional, fullname
// optional; plain or under user[…]) and signed in. 404 when there is no
// set-up to do; 403, the body unread, without the right token in
// X-Setup-Token (a wrong one counts against the address's limit of
// failed logins); 409 when an administrator came meanwhile (another
// server) or the login is taken. The token is spent by the success only:
// a refused form may be sent again.
func (s *Server) handleSetupCreate(w http.ResponseWriter, r *http.Request) error {
	if err := setupFormat(r); err != nil {
		return err
	}
	open, err := s.setupOpen(r)
	if err != nil {
		return err
	}
	if !open {
		return errNoSetup()
	}
	c := s.loginClient(r)
	lim, err := s.limiter.state(r.Context(), "", c)
	if err != nil {
		return err
	}
	if lim.addrWait > 0 {
		return tooManyLogins(lim.addrWait, false)
	}
	st := s.setup
	if given := r.Header.Get(setupHeader); given == "" || !st.matches(given) {
		if err := s.limiter.failCode(r.Context(), "", c, false); err != nil {
			return err
		}
		return mapcommons.Errorf(mapcommons.EFORBIDDEN, "missing or wrong set-up token: open the set-up link the server wrote in its log when it started (the %s header carries its token)", setupHeader)
	}
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	var fe fieldErrors
	login, password, email, fullname := newUserFields(userParams(q.Params), &fe, false)
	if err := fe.err(); err != nil {
		return err
	}
	if email == "" {
		email = login + "@localhost" // as MAPCOMMONS_ADMIN_PASSWORD's administrator
	}
	if fullname == "" {
		fullname = "Administrator"
	}
	hash, err := mapcommons.HashPassword(password, s.cfg.BcryptCost)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.spent {
		return errNoSetup() // a set-up of this process came first
	}
	u := &mapcommons.User{Login: login, Email: email, Fullname: fullname, Admin: true, PasswordHash: hash}
	switch err := s.svc.Users.CreateFirstAdmin(r.Context(), u); {
	case mapcommons.ErrorCode(err) == mapcommons.ECONFLICT && mapcommons.ErrorMessage(err) == mapcommons.ErrorMessage(mapcommons.ErrAdminExists):
		st.spent = true // another server made one meanwhile
		return err
	case err != nil:
		return err
	}
	st.spent = true
	s.logger.InfoContext(r.Context(), "administrator created by the set-up link", "login", u.Login)
	s.trustClient(w, r, u, u.Login, c)
	w.Header().Set("Cache-Control", "no-store")
	location := s.baseURL(r) + "/users/" + u.Login + ".json"
	if s.svc.Sessions == nil {
		return s.created(w, r, location, sessionDoc{Login: u.Login, Admin: true, Mode: s.cfg.Mode})
	}
	doc, err := s.openSession(w, r, u)
	if err != nil {
		return err
	}
	return s.created(w, r, location, doc)
}
