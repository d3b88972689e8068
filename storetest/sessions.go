package storetest

import (
	"context"
	"testing"
	"time"

	"mapcommons"
)

// testSessions checks the session store: by the hash of the token only,
// ended one at a time, per user (keeping one), when expired, and with the
// user.
func testSessions(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	ann := MustCreateUser(t, s, "ann", false)
	bob := MustCreateUser(t, s, "bob", false)
	now := time.Now().UTC().Truncate(time.Second)
	create := func(u *mapcommons.User, expires time.Time) string {
		t.Helper()
		token, hash := mapcommons.NewSessionToken()
		if hash == token || hash != mapcommons.HashSessionToken(token) {
			t.Fatal("the hash of a token is not its SHA-256")
		}
		if err := s.Sessions.CreateSession(ctx, &mapcommons.Session{TokenHash: hash, UserID: u.ID, ExpiresAt: expires}); err != nil {
			t.Fatal(err)
		}
		return hash
	}
	exists := func(hash string) bool {
		t.Helper()
		_, err := s.Sessions.FindSessionByToken(ctx, hash)
		if err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
			t.Fatal(err)
		}
		return err == nil
	}
	a1 := create(ann, now.Add(time.Hour))
	got, err := s.Sessions.FindSessionByToken(ctx, a1)
	if err != nil || got.UserID != ann.ID || !got.ExpiresAt.Equal(now.Add(time.Hour)) || got.CreatedAt.IsZero() || got.TokenHash != a1 {
		t.Fatalf("FindSessionByToken = %+v, %v", got, err)
	}
	if got.Expired(now) || !got.Expired(now.Add(time.Hour)) {
		t.Fatal("Expired is wrong at the edges")
	}
	t.Run("ErrConflict", func(t *testing.T) {
		err := s.Sessions.CreateSession(ctx, &mapcommons.Session{TokenHash: a1, UserID: bob.ID, ExpiresAt: now.Add(time.Hour)})
		code(t, err, mapcommons.ECONFLICT)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.Sessions.FindSessionByToken(ctx, mapcommons.HashSessionToken("nothing"))
		code(t, err, mapcommons.ENOTFOUND)
		code(t, s.Sessions.DeleteSession(ctx, mapcommons.HashSessionToken("nothing")), mapcommons.ENOTFOUND)
		_, hash := mapcommons.NewSessionToken()
		err = s.Sessions.CreateSession(ctx, &mapcommons.Session{TokenHash: hash, UserID: 999999, ExpiresAt: now.Add(time.Hour)})
		code(t, err, mapcommons.ENOTFOUND)
	})
	t.Run("DeleteSession", func(t *testing.T) {
		x := create(ann, now.Add(time.Hour))
		if err := s.Sessions.DeleteSession(ctx, x); err != nil {
			t.Fatal(err)
		}
		if exists(x) || !exists(a1) {
			t.Fatal("DeleteSession ended the wrong session")
		}
	})
	t.Run("DeleteUserSessions", func(t *testing.T) {
		a2, a3 := create(ann, now.Add(time.Hour)), create(ann, now.Add(time.Hour))
		b1 := create(bob, now.Add(time.Hour))
		n, err := s.Sessions.DeleteUserSessions(ctx, ann.ID, a2)
		if err != nil || n != 2 {
			t.Fatalf("DeleteUserSessions = %d, %v; want 2", n, err)
		}
		if exists(a1) || exists(a3) || !exists(a2) || !exists(b1) {
			t.Fatal("DeleteUserSessions ended the wrong sessions")
		}
		if n, err := s.Sessions.DeleteUserSessions(ctx, ann.ID, ""); err != nil || n != 1 || exists(a2) {
			t.Fatalf("DeleteUserSessions without keep = %d, %v", n, err)
		}
	})
	t.Run("DeleteExpiredSessions", func(t *testing.T) {
		old, edge, live := create(ann, now.Add(-time.Minute)), create(ann, now), create(ann, now.Add(time.Second))
		n, err := s.Sessions.DeleteExpiredSessions(ctx, now)
		if err != nil || n != 2 {
			t.Fatalf("DeleteExpiredSessions = %d, %v; want 2", n, err)
		}
		if exists(old) || exists(edge) || !exists(live) {
			t.Fatal("DeleteExpiredSessions removed the wrong sessions")
		}
	})
	t.Run("DeleteUser", func(t *testing.T) {
		b := create(bob, now.Add(time.Hour))
		if err := s.Users.DeleteUser(ctx, bob.ID); err != nil {
			t.Fatal(err)
		}
		if exists(b) {
			t.Fatal("a deleted user's session lives on")
		}
	})
}
