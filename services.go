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
	// last fetched maxAge or longer ago that no claim holds and that is
	// due (never claimed, its claim released with a due time now past, or
	// its lease over: a server that died holding it), the one fetched
	// longest ago first; a claim of ID 0 when no feed is due. While a
	// claim holds, no caller in any process sharing the store is given
	// that feed.
	ClaimDueFeed(ctx context.Context, maxAge, lease time.Duration) (FeedClaim, error)
	// ReleaseFeed ends claim c when the refresh it was for is over,
	// successfully or not, and makes its feed due again at due (by the
	// store's clock, as FeedClaim.At), not before. A claim that no longer
	// holds (its lease ran out and another caller claimed the feed, or the
	// feed is gone) is left alone: no error.
	ReleaseFeed(ctx context.Context, c FeedClaim, due time.Time) error
}

// FeedClaim is a feed claimed by ClaimDueFeed.
type FeedClaim struct {
	ID int64     // the feed's dataset; 0 for no feed due
	At time.Time // when it was claimed, by the store's clock
	// Until is the end of its lease as the store keeps it: ReleaseFeed
	// ends this claim only, not a later one of the same feed.
	Until time.Time
}

// Pinger reports whether a store answers.
type Pinger interface {
	Ping(ctx context.Context) error
}

type recentCatalogueKey struct{}

// WithRecentCatalogue marks ctx as a read that may see the datasets'
// rows as they were up to MaxCatalogueLag ago: a store that keeps them
// in memory, told of every change by its database, may then answer from
// memory without asking it. It is for callers with no writes of their
// own to read back (anonymous reads); every other read sees every change
// committed before it began.
func WithRecentCatalogue(ctx context.Context) context.Context {
	return context.WithValue(ctx, recentCatalogueKey{}, true)
}

// RecentCatalogue reports whether ctx is marked by WithRecentCatalogue.
func RecentCatalogue(ctx context.Context) bool {
	v, _ := ctx.Value(recentCatalogueKey{}).(bool)
	return v
}

// MaxCatalogueLag bounds how old the datasets' rows a read marked by
// WithRecentCatalogue sees.
const MaxCatalogueLag = time.Second
