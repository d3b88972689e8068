package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/params"
)

// userDoc is the JSON of a user, inside {"User": ...} (wire contract 6).
type userDoc struct {
	ID        int64   `json:"id"`
	Login     string  `json:"login"`
	Email     *string `json:"email,omitempty"`
	Fullname  *string `json:"fullname,omitempty"`
	Admin     *bool   `json:"admin,omitempty"`
	CreatedAt string  `json:"created_at"`
	// SecondFactor ("on", "pending", "off") and RecoveryCodes (left) are
	// shown to the user themself only.
	SecondFactor  string `json:"second_factor,omitempty"`
	RecoveryCodes *int   `json:"recovery_codes_left,omitempty"`
}

// userJSON wraps a user the way the original service did; email, name and
// the admin flag only when full.
func userJSON(u *mapcommons.User, full bool) map[string]userDoc {
	d := userDoc{ID: u.ID, Login: u.Login, CreatedAt: u.CreatedAt.UTC().Format(time.RFC3339)}
	if full {
		d.Email, d.Fullname, d.Admin = &u.Email, &u.Fullname, &u.Admin
	}
	return map[string]userDoc{"User": d}
}

// userParams returns the user's fields wherever the client put them:
// user[...], User[...], JSON {"user": {...}} or {"User": {...}}, or plain.
func userParams(p params.Params) params.Params {
	for _, k := range []string{"user", "User"} {
		if m, ok := p.Map(k); ok {
			return m
		}
	}
	return p
}

func fullnameParam(p params.Params) (string, bool) {
	if v, ok := p.String("fullname"); ok {
		return v, true
	}
	return p.String("full_name")
}

// fieldErrors gathers per-field validation messages into one EINVALID error.
type fieldErrors struct{ e *mapcommons.Error }

func (f *fieldErrors) add(err error) {
	if err == nil {
		return
	}
	e, ok := err.(*mapcommons.Error)
	if !ok || e.Code != mapcommons.EINVALID {
		e = &mapcommons.Error{Code: mapcommons.EINVALID, Message: mapcommons.ErrorMessage(err)}
	}
	if f.e == nil {
		f.e = &mapcommons.Error{Code: mapcommons.EINVALID, Message: e.Message, Fields: map[string][]string{}}
	}
	for k, v := range e.Fields {
		f.e.Fields[k] = append(f.e.Fields[k], v...)
	}
}

func (f *fieldErrors) blank(field string) {
	f.add(&mapcommons.Error{Code: mapcommons.EINVALID, Message: field + ": can't be blank",
		Fields: map[string][]string{field: {"can't be blank"}}})
}

func (f *fieldErrors) err() error {
	if f.e == nil {
		return nil
	}
	return f.e
}

// findUser resolves the {user} path segment: a login, or a numeric id (a
// real client addresses users by id).
func (s *Server) findUser(r *http.Request) (*mapcommons.User, error) {
	if f := info(r).format; f != "json" && f != "xml" {
		return nil, mapcommons.Errorf(mapcommons.ENOTFOUND, "users have no %s form", f)
	}
	key := r.PathValue("user")
	if id, err := strconv.ParseInt(key, 10, 64); err == nil {
		return s.svc.Users.FindUserByID(r.Context(), id)
	}
	return s.svc.Users.FindUserByLogin(r.Context(), key)
}

// userToChange gives the finder of a request's {user} user for a change
// the rule allows: 401 without credentials, 404 when there is no such user.
func (s *Server) userToChange(rule func(caller, target *mapcommons.User) error) func(*http.Request) (*mapcommons.User, error) {
	return func(r *http.Request) (*mapcommons.User, error) {
		if caller(r) == nil {
			return nil, mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "authentication required")
		}
		u, err := s.findUser(r)
		if err != nil {
			return nil, err
		}
		return u, rule(caller(r), u)
	}
}

// newUserFields reads and checks, into fe, the fields of a new user: its
// login, password (and confirmation), e-mail (required or not) and full
// name, trimmed.
func newUserFields(p params.Params, fe *fieldErrors, emailRequired bool) (login, password, email, fullname string) {
	login, _ = p.String("login")
	login = strings.TrimSpace(login)
	password, _ = p.String("password")
	confirmation, _ := p.String("password_confirmation")
	email, _ = p.String("email")
	email = strings.TrimSpace(email)
	fullname, _ = fullnameParam(p)
	fullname = strings.TrimSpace(fullname)
	if login == "" {
		fe.blank("login")
	} else {
		fe.add(mapcommons.ValidateLogin(login))
	}
	if password == "" {
		fe.blank("password")
	} else {
		fe.add(mapcommons.ValidatePassword(login, password, confirmation))
	}
	if email == "" {
		if emailRequired {
			fe.blank("email")
		}
	} else {
		fe.add(mapcommons.ValidateEmail(email))
	}
	if len(fullname) > 200 {
		fe.add(&mapcommons.Error{Code: mapcommons.EINVALID, Message: "fullname: is too long (maximum is 200 characters)",
			Fields: map[string][]string{"fullname": {"is too long"}}})
	}
	return login, password, email, fullname
}

// handleUserCreate answers POST /users: a sign-up, or an administrator's new user.
func (s *Server) handleUserCreate(w http.ResponseWriter, r *http.Request) error {
	me := caller(r)
	q, err := s.parseAllowed(r, s.policy.CanCreateUser(me))
	if err != nil {
		return err
	}
	defer q.Cleanup()
	p := userParams(q.Params)
	var fe fieldErrors
	login, password, email, fullname := newUserFields(p, &fe, true)
	admin, _, err := p.Bool("admin")
	fe.add(err)
	if err := fe.err(); err != nil {
		return err
	}
	if admin {
		if err := s.policy.CanGrantAdmin(me); err != nil {
			return err
		}
	}
	hash, err := mapcommons.HashPassword(password, s.cfg.BcryptCost)
	if err != nil {
		return err
	}
	u := &mapcommons.User{Login: login, Email: email, Fullname: fullname, Admin: admin, PasswordHash: hash}
	if err := s.svc.Users.CreateUser(r.Context(), u); err != nil {
		return err
	}
	return s.created(w, r, s.baseURL(r)+"/users/"+u.Login+".json", userJSON(u, true))
}

// handleUserGet answers GET /users/{user}: the user's profile.
func (s *Server) handleUserGet(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkBody(r); err != nil {
		return err
	}
	u, err := s.findUser(r)
	if err != nil {
		return err
	}
	doc := userJSON(u, s.policy.CanSeeUserDetails(caller(r), u))
	if me := caller(r); me != nil && me.ID == u.ID {
		status, left, err := s.secondFactorStatus(r.Context(), u)
		if err != nil {
			return err
		}
		d := doc["User"]
		d.SecondFactor, d.RecoveryCodes = status, &left
		doc["User"] = d
	}
	return s.writeJSON(w, r, http.StatusOK, doc)
}

// handleUserUpdate answers PUT /users/{user}: the user's profile or password
// changed.
func (s *Server) handleUserUpdate(w http.ResponseWriter, r *http.Request) error {
	me := caller(r)
	u, q, err := parseFor(s, r, s.userToChange(s.policy.CanModifyUser))
	if err != nil {
		return err
	}
	defer q.Cleanup()
	p := userParams(q.Params)
	var upd mapcommons.UserUpdate
	var fe fieldErrors
	if v, ok := p.String("email"); ok {
		v = strings.TrimSpace(v)
		fe.add(mapcommons.ValidateEmail(v))
		upd.Email = &v
	}
	if v, ok := fullnameParam(p); ok {
		v = strings.TrimSpace(v)
		upd.Fullname = &v
	}
	if password, ok := p.String("password"); ok && password != "" {
		confirmation, _ := p.String("password_confirmation")
		if err := mapcommons.ValidatePassword(u.Login, password, confirmation); err != nil {
			fe.add(err)
		} else if err := s.checkCurrentPassword(r, u, p); err != nil {
			return err
		} else {
			hash, err := mapcommons.HashPassword(password, s.cfg.BcryptCost)
			if err != nil {
				return err
			}
			upd.PasswordHash = &hash
		}
	}
	admin, given, err := p.Bool("admin")
	fe.add(err)
	if err := fe.err(); err != nil {
		return err
	}
	if given && admin != u.Admin {
		if err := s.policy.CanGrantAdmin(me); err != nil {
			return err
		}
		upd.Admin = &admin
	}
	u, err = s.svc.Users.UpdateUser(r.Context(), u.ID, upd)
	if err != nil {
		return err
	}
	if upd.PasswordHash != nil {
		// A new password ends the user's other sessions (a stolen
		// cookie dies with the old password).
		if err := s.endOtherSessions(r, u); err != nil {
			return err
		}
	}
	return s.writeJSON(w, r, http.StatusOK, userJSON(u, true))
}

// checkCurrentPassword asks a browser that changes its own user's password
// for the current one (user[current_password]): a session proves only
// that a cookie was at hand (a computer left signed in, a stolen cookie),
// not the password, and the change would sign the real user out
// everywhere. Basic authentication sends the password itself, so the
// GeoCommons clients, which change a password by Basic without a current
// one (wire contract 6), keep working; nor does an administrator need
// another user's. A missing one is a 400, a wrong one a 403, counted as
// a failed login.
func (s *Server) checkCurrentPassword(r *http.Request, u *mapcommons.User, p params.Params) error {
	if info(r).session == nil || caller(r).ID != u.ID {
		return nil
	}
	current, _ := p.String("current_password")
	if current == "" {
		return &mapcommons.Error{Code: mapcommons.EINVALID, Message: "current_password: can't be blank (a signed-in browser changes its password with the current one)",
			Fields: map[string][]string{"current_password": {"can't be blank"}}}
	}
	// A user with a second factor sends its code too (user[code]).
	code, _ := p.String("code")
	return s.reauthenticate(r, u, "current_password", current, code)
}

// handleUserDelete answers DELETE /users/{user}: an administrator deletes a
// user.
func (s *Server) handleUserDelete(w http.ResponseWriter, r *http.Request) error {
	u, err := s.userToChange(s.policy.CanDeleteUser)(r)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	if err := s.svc.Users.DeleteUser(r.Context(), u.ID); err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}
