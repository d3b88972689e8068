package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"mapcommons"
)

func testLoginTrust(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	ann := MustCreateUser(t, s, "ann", false)
	bob := MustCreateUser(t, s, "bob", false)
	now := time.Now()
	trusted := func(u *mapcommons.User, at time.Time, keys ...string) bool {
		t.Helper()
		ok, err := s.Trust.LoginTrusted(ctx, u.ID, keys, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if trusted(ann, now, "addr:192.0.2.1") {
		t.Fatal("trusted before anything was recorded")
	}
	if err := s.Trust.TrustLogin(ctx, ann.ID, "addr:192.0.2.1", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !trusted(ann, now, "device:x", "addr:192.0.2.1") || trusted(ann, now, "addr:192.0.2.2") || trusted(bob, now, "addr:192.0.2.1") {
		t.Fatal("trust is per user and key")
	}
	if trusted(ann, now.Add(2*time.Hour), "addr:192.0.2.1") {
		t.Fatal("trust outlived its time")
	}
	// An earlier expiry does not shorten a later one.
	if err := s.Trust.TrustLogin(ctx, ann.ID, "addr:192.0.2.1", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !trusted(ann, now.Add(30*time.Minute), "addr:192.0.2.1") {
		t.Fatal("trust shortened")
	}
	// Bounded per user: the newest are kept.
	for i := range mapcommons.MaxTrustedKeys + 5 {
		if err := s.Trust.TrustLogin(ctx, bob.ID, fmt.Sprintf("addr:k%d", i), now.Add(time.Duration(i+10)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if trusted(bob, now, "addr:k0") || !trusted(bob, now, fmt.Sprintf("addr:k%d", mapcommons.MaxTrustedKeys+4)) {
		t.Fatal("the oldest entries are not the ones dropped")
	}
	// A deleted user's trust goes with them; trusting an unknown user does nothing.
	if err := s.Users.DeleteUser(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	if trusted(ann, now, "addr:192.0.2.1") {
		t.Fatal("a deleted user is still trusted")
	}
	if err := s.Trust.TrustLogin(ctx, ann.ID, "addr:192.0.2.1", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if trusted(ann, now, "addr:192.0.2.1") {
		t.Fatal("trust recorded for a user who does not exist")
	}
}
