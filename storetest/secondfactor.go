package storetest

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"mapcommons"
)

// testSecondFactors: a secret is pending until confirmed (and may be
// replaced until then), a step is used once (also by concurrent uses),
// recovery codes once each, and all goes with removal or the user.
func testSecondFactors(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	ann := MustCreateUser(t, s, "ann", false)
	bob := MustCreateUser(t, s, "bob", false)
	sf := s.SecondFactors
	now := time.Now().UTC().Truncate(time.Second)
	_, err := sf.FindSecondFactor(ctx, ann.ID)
	code(t, err, mapcommons.ENOTFOUND)
	code(t, sf.StartSecondFactor(ctx, 1<<40, mapcommons.NewTOTPSecret(), now), mapcommons.ENOTFOUND)
	first := mapcommons.NewTOTPSecret()
	if err := sf.StartSecondFactor(ctx, ann.ID, first, now); err != nil {
		t.Fatal(err)
	}
	secret := mapcommons.NewTOTPSecret()
	if err := sf.StartSecondFactor(ctx, ann.ID, secret, now); err != nil {
		t.Fatalf("a pending secret is not replaced: %v", err)
	}
	f, err := sf.FindSecondFactor(ctx, ann.ID)
	if err != nil || f.Confirmed || !bytes.Equal(f.Secret, secret) || !f.CreatedAt.Equal(now) || f.RecoveryCodes != 0 {
		t.Fatalf("pending: %+v, %v", f, err)
	}
	// A pending secret takes no step.
	if ok, err := sf.UseTOTPStep(ctx, ann.ID, 5); ok || err != nil {
		t.Fatalf("a pending secret used a step: %v %v", ok, err)
	}
	// Confirming the secret replaced since it was read fails.
	code(t, sf.ConfirmSecondFactor(ctx, ann.ID, first, 100, nil), mapcommons.ENOTFOUND)
	codes, hashes := mapcommons.NewRecoveryCodes()
	if err := sf.ConfirmSecondFactor(ctx, ann.ID, secret, 100, hashes); err != nil {
		t.Fatal(err)
	}
	code(t, sf.ConfirmSecondFactor(ctx, ann.ID, secret, 101, hashes), mapcommons.ENOTFOUND)
	code(t, sf.StartSecondFactor(ctx, ann.ID, first, now), mapcommons.ECONFLICT)
	f, err = sf.FindSecondFactor(ctx, ann.ID)
	if err != nil || !f.Confirmed || !bytes.Equal(f.Secret, secret) || f.LastStep != 100 || f.RecoveryCodes != len(codes) {
		t.Fatalf("confirmed: %+v, %v", f, err)
	}
	// Steps: only later ones, each once, of concurrent uses one.
	for _, c := range []struct {
		step int64
		ok   bool
	}{{100, false}, {99, false}, {101, true}, {101, false}} {
		if ok, err := sf.UseTOTPStep(ctx, ann.ID, c.step); ok != c.ok || err != nil {
			t.Fatalf("step %d: %v %v", c.step, ok, err)
		}
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := sf.UseTOTPStep(ctx, ann.ID, 102)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d concurrent uses of a step won", won.Load())
	}
	// Recovery codes: once each, only the user's.
	if ok, err := sf.UseRecoveryCode(ctx, bob.ID, hashes[0]); ok || err != nil {
		t.Fatalf("bob used ann's code: %v %v", ok, err)
	}
	for _, want := range []bool{true, false} {
		if ok, err := sf.UseRecoveryCode(ctx, ann.ID, mapcommons.HashRecoveryCode(codes[0])); ok != want || err != nil {
			t.Fatalf("recovery code: %v %v, want %v", ok, err, want)
		}
	}
	if f, _ := sf.FindSecondFactor(ctx, ann.ID); f.RecoveryCodes != len(codes)-1 {
		t.Fatalf("%d codes left", f.RecoveryCodes)
	}
	// Removal takes the codes too; a new secret starts afresh.
	if err := sf.DeleteSecondFactor(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	code(t, sf.DeleteSecondFactor(ctx, ann.ID), mapcommons.ENOTFOUND)
	if ok, _ := sf.UseRecoveryCode(ctx, ann.ID, hashes[1]); ok {
		t.Fatal("a recovery code outlived its second factor")
	}
	if err := sf.StartSecondFactor(ctx, ann.ID, secret, now); err != nil {
		t.Fatal(err)
	}
	if err := sf.ConfirmSecondFactor(ctx, ann.ID, secret, 7, hashes[:2]); err != nil {
		t.Fatal(err)
	}
	// The user's deletion takes all.
	if err := s.Users.DeleteUser(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	_, err = sf.FindSecondFactor(ctx, ann.ID)
	code(t, err, mapcommons.ENOTFOUND)
	if ok, _ := sf.UseRecoveryCode(ctx, ann.ID, hashes[1]); ok {
		t.Fatal("a recovery code outlived its user")
	}
}

// testSignInLinks: a link signs in once, only while live, and goes with
// its user.
func testSignInLinks(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	ann := MustCreateUser(t, s, "ann", false)
	now := time.Now().UTC().Truncate(time.Second)
	links := s.SignInLinks
	code(t, links.CreateSignInLink(ctx, &mapcommons.SignInLink{TokenHash: "x", UserID: 1 << 40, ExpiresAt: now.Add(time.Hour)}), mapcommons.ENOTFOUND)
	for i, h := range []string{"a", "b", "c"} {
		if err := links.CreateSignInLink(ctx, &mapcommons.SignInLink{TokenHash: h, UserID: ann.ID, ExpiresAt: now.Add(time.Duration(1+i/2) * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	if id, err := links.UseSignInLink(ctx, "a", now); err != nil || id != ann.ID {
		t.Fatalf("use: %d %v", id, err)
	}
	_, err := links.UseSignInLink(ctx, "a", now)
	code(t, err, mapcommons.ENOTFOUND)
	_, err = links.UseSignInLink(ctx, "b", now.Add(time.Hour))
	code(t, err, mapcommons.ENOTFOUND)
	// Of concurrent uses, one wins.
	var won atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := links.UseSignInLink(ctx, "c", now); err == nil {
				won.Add(1)
			} else if mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d uses of one link won", won.Load())
	}
	if err := links.CreateSignInLink(ctx, &mapcommons.SignInLink{TokenHash: "d", UserID: ann.ID, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Users.DeleteUser(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	_, err = links.UseSignInLink(ctx, "d", now)
	code(t, err, mapcommons.ENOTFOUND)
}
