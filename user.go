package mapcommons

import (
	"context"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// User is an account. PasswordHash is a bcrypt hash and never leaves the server.
type User struct {
	ID           int64
	Login        string
	Email        string
	Fullname     string
	Admin        bool
	PasswordHash string
	// GroupIDs are the ids of the groups the user belongs to, ascending,
	// as the store read them with the user (nil: none).
	GroupIDs  []int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// InGroup reports whether u is a member of the group with that id.
func (u *User) InGroup(id int64) bool {
	if u == nil {
		return false
	}
	for _, g := range u.GroupIDs {
		if g == id {
			return true
		}
	}
	return false
}

var loginRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$`)

// Password limits: bcrypt reads at most 72 bytes.
const (
	MinPasswordLen = 6
	MaxPasswordLen = 72
)

// ValidateLogin checks a login: 1 to 40 letters, digits, '_', '.', '-',
// starting with a letter or digit, and not all digits (a path segment of
// digits names a user by id).
func ValidateLogin(login string) error {
	if !loginRE.MatchString(login) {
		return &Error{Code: EINVALID, Message: "login: 1 to 40 letters, digits, '_', '.' or '-', starting with a letter or digit",
			Fields: map[string][]string{"login": {"is invalid"}}}
	}
	if strings.Trim(login, "0123456789") == "" {
		return &Error{Code: EINVALID, Message: "login: may not be all digits", Fields: map[string][]string{"login": {"may not be all digits"}}}
	}
	return nil
}

// ValidateEmail checks an e-mail address.
func ValidateEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		return &Error{Code: EINVALID, Message: "email: is not a valid address", Fields: map[string][]string{"email": {"is invalid"}}}
	}
	return nil
}

// ValidatePassword checks a new password of login and its confirmation:
// 6 to 72 bytes (bcrypt reads 72), not only white space, not the login.
func ValidatePassword(login, password, confirmation string) error {
	fields := map[string][]string{}
	switch {
	case len(password) < MinPasswordLen:
		fields["password"] = []string{"is too short (minimum is 6 bytes)"}
	case len(password) > MaxPasswordLen:
		fields["password"] = []string{"is too long (maximum is 72 bytes)"}
	case strings.TrimSpace(password) == "":
		fields["password"] = []string{"may not be only white space"}
	case login != "" && strings.EqualFold(password, login):
		fields["password"] = []string{"may not be the login"}
	case password != confirmation:
		fields["password"] = []string{"doesn't match confirmation"}
	}
	if len(fields) > 0 {
		return &Error{Code: EINVALID, Message: "password: " + fields["password"][0], Fields: fields}
	}
	return nil
}

// HashPassword returns the bcrypt hash of a password at the given cost
// (0 means bcrypt's default).
func HashPassword(password string, cost int) (string, error) {
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	return string(h), err
}

// CheckPassword reports whether password matches the bcrypt hash.
func CheckPassword(hash, password string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}

// ErrAdminExists is CreateFirstAdmin's refusal: the store has an
// administrator already.
var ErrAdminExists = &Error{Code: ECONFLICT, Message: "this server has an administrator already: sign in, or ask them for an account"}

// UserUpdate names the fields of a user to change; nil means unchanged.
type UserUpdate struct {
	Email        *string
	Fullname     *string
	PasswordHash *string
	Admin        *bool
}

// UserService stores users.
type UserService interface {
	// FindUserByID returns the user with their GroupIDs; ENOTFOUND when
	// there is no such user.
	FindUserByID(ctx context.Context, id int64) (*User, error)
	// FindUserByLogin matches the login case-insensitively and returns the
	// user with their GroupIDs; ENOTFOUND when none.
	FindUserByLogin(ctx context.Context, login string) (*User, error)
	// CreateUser sets u.ID and the times; ECONFLICT when the login is taken.
	CreateUser(ctx context.Context, u *User) error
	// HasAdmin reports whether any user is an administrator.
	HasAdmin(ctx context.Context) (bool, error)
	// CreateFirstAdmin creates u as CreateUser does, an administrator,
	// only while no user is one: the check and the insert are one step of
	// the store, so that of callers racing (two servers on one database,
	// two requests), one makes the first administrator and every other
	// gets ErrAdminExists. ECONFLICT also when the login is taken.
	CreateFirstAdmin(ctx context.Context, u *User) error
	// UpdateUser returns the updated user (with GroupIDs); ENOTFOUND when
	// there is no such user.
	UpdateUser(ctx context.Context, id int64, upd UserUpdate) (*User, error)
	// DeleteUser removes the user, their group memberships and their
	// sessions; their datasets and maps stay, without an owner.
	// ENOTFOUND when there is no such user.
	DeleteUser(ctx context.Context, id int64) error
}

// LoginTrustService remembers where each user has logged in from, so that
// the limit on failed logins, which stops a login from being guessed, does
// not lock its owner out: a client a user logged in from before (an
// address, or a device that keeps a cookie) still gets to try while
// strangers are refused. Keys are opaque strings chosen by the caller
// ("addr:…", "device:<hash>"); they go with the user when the user is
// deleted.
type LoginTrustService interface {
	// TrustLogin records that userID may be trusted from key until then.
	TrustLogin(ctx context.Context, userID int64, key string, until time.Time) error
	// LoginTrusted reports whether any of keys is trusted for userID at now.
	LoginTrusted(ctx context.Context, userID int64, keys []string, now time.Time) (bool, error)
}

// MaxTrustedKeys bounds the clients remembered for one user: the newest
// are kept.
const MaxTrustedKeys = 64
