package api

import (
	"strconv"
	"testing"
	"time"
)

// TestAuthLimiter checks the token buckets of failed logins on a fake
// clock: the limit, the refill, trust, and that the tables stay bounded.
func TestAuthLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newAuthLimiter(func() time.Time { return now })
	for i := 0; i < loginFailures; i++ {
		if _, ok := l.allow("Ann", "a"); !ok {
			t.Fatalf("refused after %d failures", i)
		}
		l.fail("ann", "a")
	}
	wait, ok := l.allow("ANN", "b")
	if ok || wait <= 5*time.Second || wait > 6*time.Second {
		t.Fatalf("after %d failures: wait %v, allowed %v", loginFailures, wait, ok)
	}
	now = now.Add(6 * time.Second)
	if _, ok := l.allow("ann", "b"); !ok {
		t.Fatal("not allowed again after 6 s")
	}
	l.fail("ann", "b")
	if _, ok := l.allow("ann", "b"); ok {
		t.Fatal("one token came back, one failure took it")
	}
	// A minute later the bucket is full again: ten more tries.
	now = now.Add(time.Minute)
	for i := 0; i < loginFailures; i++ {
		if _, ok := l.allow("ann", "c"); !ok {
			t.Fatalf("refill: refused after %d", i)
		}
		l.fail("ann", "c")
	}
	// Trust: a success from "home" lets "home" past the per-login limit.
	l.succeed("ann", "home")
	if _, ok := l.allow("ann", "home"); !ok {
		t.Fatal("the trusted address is limited per login")
	}
	if _, ok := l.allow("ann", "elsewhere"); ok {
		t.Fatal("an untrusted address is not limited")
	}
	now = now.Add(trustTTL + time.Second)
	l.fail("ann", "x")
	for i := 0; i < loginFailures; i++ {
		l.fail("ann", "x")
	}
	if _, ok := l.allow("ann", "home"); ok {
		t.Fatal("trust outlived trustTTL")
	}
	// Bounded: full buckets are dropped when the table is full.
	for i := 0; i < limiterEntries+10; i++ {
		l.fail("user"+strconv.Itoa(i), "z"+strconv.Itoa(i))
		if i%1000 == 0 {
			now = now.Add(time.Minute)
		}
	}
	if len(l.logins) > limiterEntries || len(l.addrs) > limiterEntries {
		t.Fatalf("tables grew to %d, %d", len(l.logins), len(l.addrs))
	}
}

func TestRetrySeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, 6 * time.Second: 6} {
		if got := retrySeconds(d); got != want {
			t.Errorf("retrySeconds(%v) = %d, want %d", d, got, want)
		}
	}
}
