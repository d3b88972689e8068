package mapcommons_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"mapcommons"
)

// TestLoginBucket: the bucket kept as its full time holds Capacity tokens,
// refills one every Per, waits exactly as long as a token takes to come
// back, and does not go into debt.
func TestLoginBucket(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	sp := mapcommons.LoginSpend{Key: "k", Per: 12 * time.Second, Capacity: 5}
	var full time.Time // never spent
	if w := mapcommons.LoginWait(full, now, sp.Per, sp.Capacity); w != 0 {
		t.Fatalf("a bucket never spent waits %v", w)
	}
	for i := range sp.Capacity {
		if w := mapcommons.LoginWait(full, now, sp.Per, sp.Capacity); w != 0 {
			t.Fatalf("after %d spends: wait %v", i, w)
		}
		full = mapcommons.SpentFullAt(full, now, sp)
	}
	if w := mapcommons.LoginWait(full, now, sp.Per, sp.Capacity); w != sp.Per {
		t.Fatalf("empty: wait %v, want %v", w, sp.Per)
	}
	// Spending an empty bucket takes nothing more: it is full a minute on.
	if again := mapcommons.SpentFullAt(full, now, sp); !again.Equal(now.Add(time.Minute)) {
		t.Fatalf("an empty bucket went into debt: full at %v", again)
	}
	later := now.Add(5 * time.Second)
	if w := mapcommons.LoginWait(full, later, sp.Per, sp.Capacity); w != 7*time.Second {
		t.Fatalf("5 s on: wait %v, want 7s", w)
	}
	if w := mapcommons.LoginWait(full, now.Add(sp.Per), sp.Per, sp.Capacity); w != 0 {
		t.Fatalf("a token came back, wait %v", w)
	}
	// A bucket full again long ago starts from now.
	if got := mapcommons.SpentFullAt(now.Add(-time.Hour), now, sp); !got.Equal(now.Add(sp.Per)) {
		t.Fatalf("spent from full: %v", got)
	}
}

// TestMemoryLoginLimitsBound: the buckets kept in memory stay bounded;
// those still counting are kept while those full again are dropped.
func TestMemoryLoginLimitsBound(t *testing.T) {
	ctx := context.Background()
	m := mapcommons.NewMemoryLoginLimits()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	sp := func(k string) []mapcommons.LoginSpend {
		return []mapcommons.LoginSpend{{Key: k, Per: time.Second, Capacity: 60}}
	}
	for i := range mapcommons.MaxMemoryLoginLimits {
		if err := m.SpendLoginTokens(ctx, now, sp("old"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(time.Hour)
	if err := m.SpendLoginTokens(ctx, now, sp("new")); err != nil {
		t.Fatal(err)
	}
	if n := m.Len(); n != 1 {
		t.Fatalf("%d buckets kept, want the new one only", n)
	}
	full, err := m.LoginLimits(ctx, []string{"new", "old1"})
	if err != nil || !full[0].Equal(now.Add(time.Second)) || !full[1].IsZero() {
		t.Fatalf("LoginLimits = %v, %v", full, err)
	}
}
