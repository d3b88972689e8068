package mapcommons

import (
	"context"
	"time"
)

// Services are the services of one store: what the server reads and
// writes, and what the store contract (package storetest) checks. Every
// store gives all of them; Trust, Sessions and Health may be nil in tests
// that do without (the server then keeps login trust in memory, has no
// sign-in, and reports itself healthy).
type Services struct {
	Users    UserService
	Datasets DatasetService
	Features FeatureService
	Maps     MapService
	Search   SearchService
	Groups   GroupService
	// Trust remembers where users logged in from, for the login limiter.
	Trust LoginTrustService
	// LoginLimits keeps the limiter's buckets of failed logins (nil: the
	// server keeps them in its memory).
	LoginLimits LoginLimitService
	// Sessions keeps the sessions of signed-in browsers.
	Sessions SessionService
	// SecondFactors keeps the users' TOTP secrets and recovery codes (nil:
	// no two-factor sign-in).
	SecondFactors SecondFactorService
	// SignInLinks keeps the one-time sign-in links administrators issue
	// (nil: none).
	SignInLinks SignInLinkService
	// FeedClaims hands the feeds due for a refresh to the servers that
	// refresh them, each feed to one server at a time.
	FeedClaims FeedClaimService
	// Health reports whether the store answers (for /healthz).
	Health Pinger
}

// FeedClaimService decides which server refreshes which feed: several
// servers sharing a store refresh each due feed once, not once each.
type FeedClaimService interface {
	// ClaimDueFeed claims, for lease, one feed (a dataset of DataTypeFeed)
	// last fetched maxAge or longer ago that no claim holds (never claimed,
	// or its claim over), the one fetched longest ago first, and returns
	// its id; 0 when no feed is due. While a claim holds, no caller in any
	// process sharing the store is given that feed: a feed whose refresh
	// failed (its fetch time unchanged) waits for the end of its lease.
	ClaimDueFeed(ctx context.Context, maxAge, lease time.Duration) (int64, error)
}

// Pinger reports whether a store answers.
type Pinger interface {
	Ping(ctx context.Context) error
}
