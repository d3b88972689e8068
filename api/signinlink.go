package api

// One-time sign-in links (issue 23): the way in for a user without a
// second factor and without a trusted client while their login is being
// guessed. An administrator issues one (POST /users/{user}/sign_in_link,
// or `mapcommons user link LOGIN`); the user follows it to the sign-in
// page, which posts its token to /session: a session, once, and the
// client is trusted from then on (a device cookie), so that the user gets
// in again from there during the guessing.

import (
	"context"
	"net/http"
	"time"

	"mapcommons"
)

// signInLinkDoc is an issued link.
type signInLinkDoc struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expires_at"`
}

// handleSignInLinkCreate answers POST /users/{user}/sign_in_link: it issues a
// link for {user}, administrators only.
func (s *Server) handleSignInLinkCreate(w http.ResponseWriter, r *http.Request) error {
	if s.svc.SignInLinks == nil {
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "this server keeps no sign-in links")
	}
	u, err := s.userToChange(s.policy.CanIssueSignInLink)(r)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	token, expires, err := mapcommons.IssueSignInLink(r.Context(), s.svc.SignInLinks, u.ID, s.cfg.Now())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return s.created(w, r, s.baseURL(r)+"/users/"+u.Login+".json", signInLinkDoc{
		URL: s.baseURL(r) + mapcommons.SignInLinkPath(token), ExpiresAt: expires.UTC().Format(time.RFC3339)})
}

// linkSignIn signs in by a link's token: its user, once, while it is
// live; its client is trusted then. A wrong token counts against the
// address's limit (a token is 256 random bits: it is not guessed, but a
// client trying does not try for free).
func (s *Server) linkSignIn(w http.ResponseWriter, r *http.Request, token string) (*mapcommons.User, error) {
	c := s.loginClient(r)
	st, err := s.limiter.state(r.Context(), "", c)
	if err != nil {
		return nil, err
	}
	if st.addrWait > 0 {
		return nil, tooManyLogins(st.addrWait, false)
	}
	bad := mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "this sign-in link is used or over: ask an administrator for a new one")
	if !mapcommons.ValidSessionToken(token) {
		return nil, s.failLink(r, c, bad)
	}
	id, err := s.svc.SignInLinks.UseSignInLink(r.Context(), mapcommons.HashSessionToken(token), s.cfg.Now())
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, s.failLink(r, c, bad)
	} else if err != nil {
		return nil, err
	}
	u, err := s.svc.Users.FindUserByID(r.Context(), id)
	if err != nil {
		return nil, err
	}
	s.trustClient(w, r, u, u.Login, c)
	return u, nil
}

func (s *Server) failLink(r *http.Request, c loginClient, bad error) error {
	if err := s.limiter.failCode(context.WithoutCancel(r.Context()), "", c, false); err != nil {
		return err
	}
	return bad
}
