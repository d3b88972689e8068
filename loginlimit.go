package mapcommons

import (
	"context"
	"sync"
	"time"
)

// LoginLimitService keeps the limits on failed logins for every server of
// a store, so that a password guessed through several servers is limited
// as through one. Each limit is a bucket of Capacity tokens refilling one
// every Per, kept as the time the bucket is full again (the generic cell
// rate algorithm): at now it holds Capacity - max(0, full-now)/Per tokens.
// Keys are opaque strings chosen by the caller ("addr:…", "login:…").
type LoginLimitService interface {
	// LoginLimits returns, for each of keys in order, when its bucket is
	// full again; the zero time for a bucket that is full (never spent,
	// or forgotten since).
	LoginLimits(ctx context.Context, keys []string) ([]time.Time, error)
	// SpendLoginTokens takes a token from each bucket, at once for all of
	// them: its full time becomes the later of itself and now, plus Per,
	// and at most now + Capacity×Per (an empty bucket stays empty, it does
	// not go into debt). Concurrent spends through any server all count.
	// Buckets full again before now may be forgotten.
	SpendLoginTokens(ctx context.Context, now time.Time, spends []LoginSpend) error
}

// LoginSpend is one token taken from the bucket Key of Capacity tokens
// refilling one every Per.
type LoginSpend struct {
	Key      string
	Per      time.Duration
	Capacity int
}

// SpentFullAt is when a bucket full again at full is full again after sp
// takes a token from it at now (LoginLimitService.SpendLoginTokens).
func SpentFullAt(full, now time.Time, sp LoginSpend) time.Time {
	if full.Before(now) {
		full = now
	}
	return minTime(full.Add(sp.Per), now.Add(time.Duration(sp.Capacity)*sp.Per))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// LoginWait is how long until the bucket of capacity tokens refilling one
// every per, full again at full, holds a whole token at now: 0 when it
// holds one.
func LoginWait(full, now time.Time, per time.Duration, capacity int) time.Duration {
	if !full.After(now) {
		return 0 // full (and the zero time is long past: no overflow)
	}
	return max(0, full.Sub(now)-time.Duration(capacity-1)*per)
}

// MaxMemoryLoginLimits bounds the buckets a MemoryLoginLimits keeps:
// beyond it, those full again are forgotten, and if that is not enough,
// all of them.
const MaxMemoryLoginLimits = 300000

// MemoryLoginLimits is a LoginLimitService in the memory of one process:
// for a store that one process at a time serves (the embedded one).
type MemoryLoginLimits struct {
	mu   sync.Mutex
	full map[string]time.Time
}

// NewMemoryLoginLimits returns empty limits.
func NewMemoryLoginLimits() *MemoryLoginLimits {
	return &MemoryLoginLimits{full: map[string]time.Time{}}
}

// LoginLimits implements LoginLimitService.
func (m *MemoryLoginLimits) LoginLimits(ctx context.Context, keys []string) ([]time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]time.Time, len(keys))
	for i, k := range keys {
		out[i] = m.full[k]
	}
	return out, nil
}

// SpendLoginTokens implements LoginLimitService.
func (m *MemoryLoginLimits) SpendLoginTokens(ctx context.Context, now time.Time, spends []LoginSpend) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.full)+len(spends) > MaxMemoryLoginLimits {
		for k, full := range m.full {
			if !full.After(now) {
				delete(m.full, k)
			}
		}
		if len(m.full)+len(spends) > MaxMemoryLoginLimits {
			clear(m.full)
		}
	}
	for _, sp := range spends {
		m.full[sp.Key] = SpentFullAt(m.full[sp.Key], now, sp)
	}
	return nil
}

// Len is the number of buckets kept (for tests of the bound).
func (m *MemoryLoginLimits) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.full)
}
