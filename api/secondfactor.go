package api

// Two-factor sign-in (issue 23). A guesser who rotates addresses cannot be
// told apart from the user on a new network by anything but a secret only
// the user has: a user may add one, a TOTP secret in an authenticator app.
// A login of such a user is checked whatever its limit (the guesser's
// failures cannot lock the user out), code first: the password is checked
// (bcrypt) only with a right code never used before, so a guesser without
// the code gets no password checked, and the answer to a wrong password or
// a wrong code is the same. Routes, all under /users/{user}/second_factor:
// POST starts (the user themself, with the password: the secret, shown
// once, as text, otpauth:// URI and QR code), PUT confirms with a first
// code (and answers the recovery codes, shown once), DELETE removes (the
// user with password and code, or an administrator).

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	qrcode "github.com/skip2/go-qrcode"

	"mapcommons"
)

// secondFactor returns u's confirmed second factor, or nil.
func (s *Server) secondFactor(ctx context.Context, u *mapcommons.User) (*mapcommons.SecondFactor, error) {
	if s.svc.SecondFactors == nil {
		return nil, nil
	}
	f, err := s.svc.SecondFactors.FindSecondFactor(ctx, u.ID)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND || (err == nil && !f.Confirmed) {
		return nil, nil
	}
	return f, err
}

// errNeedCode is the 401 of a login of a user with a second factor that
// came without a code: second_factor in its body tells a sign-in page to
// ask for one. It is answered without checking the password.
func errNeedCode() error {
	return &mapcommons.Error{Code: mapcommons.EUNAUTHORIZED,
		Message: "this login needs a code from its authenticator app (or a recovery code) with the password; over HTTP Basic, the 6-digit code follows the password",
		Fields:  map[string][]string{"second_factor": {"required"}}}
}

// checkSecondFactor checks a login of u, who has the second factor f
// (checkLogin): from Basic credentials, the code is the last 6
// characters of password when they are digits, and the whole is then
// remembered as other Basic credentials are (authCache), so that a client
// may send it again until authTTL is over.
func (s *Server) checkSecondFactor(w http.ResponseWriter, r *http.Request, u *mapcommons.User, f *mapcommons.SecondFactor,
	login, password, code string, basic bool, c loginClient) (*mapcommons.User, error) {
	whole := password
	if basic {
		if s.auth.ok(u, whole, true) {
			s.trustClient(w, r, u, login, c)
			return u, nil
		}
		if n := len(password); n > mapcommons.TOTPDigits && strings.Trim(password[n-mapcommons.TOTPDigits:], "0123456789") == "" {
			password, code = password[:n-mapcommons.TOTPDigits], password[n-mapcommons.TOTPDigits:]
		}
	}
	if err := s.verifySecondFactor(r.Context(), u, f, login, password, code, c); err != nil {
		return nil, err
	}
	if basic {
		s.auth.remember(u, whole, true)
	}
	s.trustClient(w, r, u, login, c)
	return u, nil
}

// verifySecondFactor checks password and code of u, code first: a right
// code (or recovery code) is used up whether the password is then right
// or not, so that each code buys one password check at most. Failures
// take tokens from the address's bucket (and, for a password checked, the
// login's overall one), but no limit of the login holds them.
func (s *Server) verifySecondFactor(ctx context.Context, u *mapcommons.User, f *mapcommons.SecondFactor, login, password, code string, c loginClient) error {
	bad := mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "invalid login, password or code")
	fail := func(checked bool, answer error) error {
		if err := s.limiter.failCode(context.WithoutCancel(ctx), login, c, checked); err != nil {
			return err
		}
		return answer
	}
	code = strings.TrimSpace(code)
	if code == "" {
		return fail(false, errNeedCode())
	}
	var (
		ok  bool
		err error
	)
	if mapcommons.IsRecoveryCode(code) {
		ok, err = s.svc.SecondFactors.UseRecoveryCode(ctx, u.ID, mapcommons.HashRecoveryCode(code))
	} else if step, match := mapcommons.MatchTOTP(f.Secret, code, s.limiter.now(), f.LastStep); match {
		// Of two logins with one code (a replay, or two servers at once),
		// the store lets one have it.
		ok, err = s.svc.SecondFactors.UseTOTPStep(ctx, u.ID, step)
	}
	if err != nil {
		return err
	}
	if !ok {
		return fail(false, bad)
	}
	if len(password) > mapcommons.MaxPasswordLen || !mapcommons.CheckPassword(u.PasswordHash, password) {
		return fail(true, bad)
	}
	return nil
}

// secondFactorDoc is the answer of an enrolment's start: the secret, shown
// this once, as text to type in, as an otpauth:// URI, and as that URI's
// QR code (a PNG data: URI, which the pages' img-src allows).
type secondFactorDoc struct {
	Secret        string   `json:"secret,omitempty"`
	URI           string   `json:"otpauth_uri,omitempty"`
	QRCode        string   `json:"qr_code,omitempty"`
	RecoveryCodes []string `json:"recovery_codes,omitempty"`
	Status        string   `json:"status"`
}

// reauthenticate checks, before u changes their own account, u's password
// and, when u has a second factor, its code (or a recovery code): limited
// as logins are, a wrong one a 403 naming field (the caller is signed in
// already: a 401 would sign the page out). One rule for every change that
// asks for them again: the second factor's, the password's.
func (s *Server) reauthenticate(r *http.Request, u *mapcommons.User, field, password, code string) error {
	c := s.loginClient(r)
	f, err := s.secondFactor(r.Context(), u)
	if err != nil {
		return err
	}
	if f != nil {
		err := s.verifySecondFactor(r.Context(), u, f, u.Login, password, code, c)
		if mapcommons.ErrorCode(err) == mapcommons.EUNAUTHORIZED {
			err = &mapcommons.Error{Code: mapcommons.EFORBIDDEN, Message: field + ": is wrong (or the code of the second factor)",
				Fields: map[string][]string{field: {"is wrong"}}}
		}
		return err
	}
	st, err := s.limiter.state(r.Context(), u.Login, c)
	if err != nil {
		return err
	}
	if wait := max(st.addrWait, st.allWait); wait > 0 {
		return tooManyLogins(wait, false)
	}
	if password == "" || len(password) > mapcommons.MaxPasswordLen || !mapcommons.CheckPassword(u.PasswordHash, password) {
		if err := s.limiter.failCode(context.WithoutCancel(r.Context()), u.Login, c, true); err != nil {
			return err
		}
		return &mapcommons.Error{Code: mapcommons.EFORBIDDEN, Message: field + ": is wrong", Fields: map[string][]string{field: {"is wrong"}}}
	}
	return nil
}

func (s *Server) secondFactors() error {
	if s.svc.SecondFactors == nil {
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "this server keeps no second factors")
	}
	return nil
}

// handleSecondFactorStart answers POST /users/{user}/second_factor: it
// starts an enrolment, given the password.
// A pending secret is replaced; a confirmed one must be removed first.
func (s *Server) handleSecondFactorStart(w http.ResponseWriter, r *http.Request) error {
	if err := s.secondFactors(); err != nil {
		return err
	}
	u, q, err := parseFor(s, r, s.userToChange(s.policy.CanSetUpSecondFactor))
	if err != nil {
		return err
	}
	defer q.Cleanup()
	// A confirmed one must go first (the store refuses it too): said
	// before the password is asked for, since the user's own JSON says it.
	if f, err := s.secondFactor(r.Context(), u); err != nil {
		return err
	} else if f != nil {
		return mapcommons.Errorf(mapcommons.ECONFLICT, "two-factor sign-in is on already: remove it first")
	}
	password, _ := userParams(q.Params).String("password")
	if err := s.reauthenticate(r, u, "password", password, ""); err != nil {
		return err
	}
	secret := mapcommons.NewTOTPSecret()
	if err := s.svc.SecondFactors.StartSecondFactor(r.Context(), u.ID, secret, s.limiter.now()); err != nil {
		return err
	}
	issuer := "mapcommons"
	if b, err := url.Parse(s.baseURL(r)); err == nil && b.Host != "" {
		issuer += " " + b.Host
	}
	uri := mapcommons.TOTPURI(issuer, u.Login, secret)
	png, err := qrcode.Encode(uri, qrcode.Medium, 256)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return s.created(w, r, s.baseURL(r)+"/users/"+u.Login+"/second_factor.json", secondFactorDoc{
		Secret: mapcommons.TOTPSecretText(secret), URI: uri, Status: "pending",
		QRCode: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)})
}

// handleSecondFactorConfirm answers PUT /users/{user}/second_factor: it
// confirms an enrolment with a first code; answers the recovery codes, this once.
func (s *Server) handleSecondFactorConfirm(w http.ResponseWriter, r *http.Request) error {
	if err := s.secondFactors(); err != nil {
		return err
	}
	u, q, err := parseFor(s, r, s.userToChange(s.policy.CanSetUpSecondFactor))
	if err != nil {
		return err
	}
	defer q.Cleanup()
	code, _ := userParams(q.Params).String("code")
	f, err := s.svc.SecondFactors.FindSecondFactor(r.Context(), u.ID)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND || (err == nil && f.Confirmed) {
		return mapcommons.Errorf(mapcommons.ECONFLICT, "no second factor being set up: start one first")
	} else if err != nil {
		return err
	}
	step, ok := mapcommons.MatchTOTP(f.Secret, code, s.limiter.now(), 0)
	if !ok {
		if err := s.limiter.failCode(context.WithoutCancel(r.Context()), u.Login, s.loginClient(r), false); err != nil {
			return err
		}
		return &mapcommons.Error{Code: mapcommons.EINVALID, Message: "code: is wrong (the app's clock may be off)", Fields: map[string][]string{"code": {"is wrong"}}}
	}
	codes, hashes := mapcommons.NewRecoveryCodes()
	if err := s.svc.SecondFactors.ConfirmSecondFactor(r.Context(), u.ID, f.Secret, step, hashes); err != nil {
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			return mapcommons.Errorf(mapcommons.ECONFLICT, "the second factor being set up changed: start again")
		}
		return err
	}
	s.auth.forget(u)
	w.Header().Set("Cache-Control", "no-store")
	return s.writeJSON(w, r, http.StatusOK, secondFactorDoc{RecoveryCodes: codes, Status: "on"})
}

// handleSecondFactorDelete answers DELETE /users/{user}/second_factor: it
// removes a user's second factor (pending or
// confirmed): an administrator for another user; the user with password
// and code (or recovery code) of a confirmed one, or the password alone
// for a pending one.
func (s *Server) handleSecondFactorDelete(w http.ResponseWriter, r *http.Request) error {
	if err := s.secondFactors(); err != nil {
		return err
	}
	u, q, err := parseFor(s, r, s.userToChange(s.policy.CanModifyUser))
	if err != nil {
		return err
	}
	defer q.Cleanup()
	if me := caller(r); me.ID == u.ID {
		p := userParams(q.Params)
		password, _ := p.String("password")
		code, _ := p.String("code")
		if err := s.reauthenticate(r, u, "password", password, code); err != nil {
			return err
		}
	}
	if err := s.svc.SecondFactors.DeleteSecondFactor(r.Context(), u.ID); err != nil {
		return err
	}
	s.auth.forget(u)
	return empty(w, http.StatusNoContent)
}

// secondFactorStatus is what the user's own JSON says of their second
// factor: "on", "pending" (started, not confirmed) or "off", and how many
// recovery codes are left.
func (s *Server) secondFactorStatus(ctx context.Context, u *mapcommons.User) (string, int, error) {
	if s.svc.SecondFactors == nil {
		return "off", 0, nil
	}
	f, err := s.svc.SecondFactors.FindSecondFactor(ctx, u.ID)
	switch {
	case mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND:
		return "off", 0, nil
	case err != nil:
		return "", 0, err
	case !f.Confirmed:
		return "pending", 0, nil
	}
	return "on", f.RecoveryCodes, nil
}
