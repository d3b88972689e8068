package storetest

import (
	"context"
	"testing"
	"time"

	"mapcommons"
)

// testLoginLimits: buckets start full, every spend counts (also many at
// once), an empty bucket does not go into debt, and keys are exact.
func testLoginLimits(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	now := time.Now().UTC().Truncate(time.Second)
	sp := mapcommons.LoginSpend{Key: "login:ann", Per: 12 * time.Second, Capacity: 5}
	full, err := s.LoginLimits.LoginLimits(ctx, []string{"login:ann", "addr:192.0.2.1"})
	if err != nil || len(full) != 2 || !full[0].IsZero() || !full[1].IsZero() {
		t.Fatalf("new buckets: %v, %v", full, err)
	}
	addr := mapcommons.LoginSpend{Key: "addr:192.0.2.1", Per: 2 * time.Second, Capacity: 30}
	if err := s.LoginLimits.SpendLoginTokens(ctx, now, []mapcommons.LoginSpend{sp, addr}); err != nil {
		t.Fatal(err)
	}
	full, err = s.LoginLimits.LoginLimits(ctx, []string{"addr:192.0.2.1", "login:ANN", "login:ann"})
	if err != nil || !full[0].Equal(now.Add(2*time.Second)) || !full[1].IsZero() || !full[2].Equal(now.Add(12*time.Second)) {
		t.Fatalf("after one spend: %v, %v", full, err)
	}
	// Spends at once all count: 4 more empty the bucket, and more keep it
	// empty (full a minute from now), no further.
	atOnce(t, 8, func(int) error {
		return s.LoginLimits.SpendLoginTokens(ctx, now, []mapcommons.LoginSpend{sp})
	})
	full, err = s.LoginLimits.LoginLimits(ctx, []string{"login:ann"})
	if err != nil || !full[0].Equal(now.Add(time.Minute)) {
		t.Fatalf("after 9 spends of 5 tokens: full at %v (want %v), %v", full, now.Add(time.Minute), err)
	}
	if w := mapcommons.LoginWait(full[0], now, sp.Per, sp.Capacity); w != sp.Per {
		t.Fatalf("wait %v, want %v", w, sp.Per)
	}
	// Later, the bucket has refilled in part: a spend starts from there.
	later := now.Add(30 * time.Second)
	if err := s.LoginLimits.SpendLoginTokens(ctx, later, []mapcommons.LoginSpend{sp}); err != nil {
		t.Fatal(err)
	}
	full, err = s.LoginLimits.LoginLimits(ctx, []string{"login:ann"})
	if err != nil || !full[0].Equal(now.Add(time.Minute+sp.Per)) {
		t.Fatalf("a spend 30 s on: full at %v, %v", full, err)
	}
}

// testSharedLoginLimits: failures counted through one store hold the
// login for the other (two servers behind a load balancer limit a
// password guessed through both as through one).
func testSharedLoginLimits(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	a, b := open(t)
	now := time.Now().UTC().Truncate(time.Second)
	sp := mapcommons.LoginSpend{Key: "login:ann", Per: 12 * time.Second, Capacity: 5}
	atOnce(t, 6, func(i int) error {
		return either(i, a, b).LoginLimits.SpendLoginTokens(ctx, now, []mapcommons.LoginSpend{sp})
	})
	for name, s := range map[string]mapcommons.Services{"a": a, "b": b} {
		full, err := s.LoginLimits.LoginLimits(ctx, []string{"login:ann"})
		if err != nil || !full[0].Equal(now.Add(time.Minute)) {
			t.Fatalf("%s: after 6 spends through both: full at %v, %v", name, full, err)
		}
	}
}
