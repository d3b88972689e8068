package mapcommons

import (
	"context"
	"sync"
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
//
// Such a row may be older than the features a read of the same request
// then finds: a store that answered from memory notes the version it gave
// (NoteRecentRow), and a read whose snapshot holds another version of the
// dataset fails with ErrCatalogueMoved before any feature, so that the
// request is never answered with features its dataset's row did not
// authorize (the server runs it again, with the catalogue as it is).
func WithRecentCatalogue(ctx context.Context) context.Context {
	return context.WithValue(ctx, recentCatalogueKey{}, &recentRows{})
}

// WithoutRecentCatalogue is ctx without the mark of WithRecentCatalogue.
func WithoutRecentCatalogue(ctx context.Context) context.Context {
	return context.WithValue(ctx, recentCatalogueKey{}, false)
}

// RecentCatalogue reports whether ctx is marked by WithRecentCatalogue.
func RecentCatalogue(ctx context.Context) bool {
	_, ok := ctx.Value(recentCatalogueKey{}).(*recentRows)
	return ok
}

// recentRows are the versions of the datasets' rows a store gave a
// request from memory.
type recentRows struct {
	mu       sync.Mutex
	versions map[int64]int64
}

// NoteRecentRow records, in a request marked by WithRecentCatalogue, that
// dataset id's row was given as of version (from memory).
func NoteRecentRow(ctx context.Context, id, version int64) {
	rr, ok := ctx.Value(recentCatalogueKey{}).(*recentRows)
	if !ok {
		return
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.versions == nil {
		rr.versions = map[int64]int64{}
	}
	rr.versions[id] = version
}

// RecentRow returns the version of dataset id's row given to the request
// from memory (NoteRecentRow), if one was.
func RecentRow(ctx context.Context, id int64) (int64, bool) {
	rr, ok := ctx.Value(recentCatalogueKey{}).(*recentRows)
	if !ok {
		return 0, false
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	v, ok := rr.versions[id]
	return v, ok
}

// ErrCatalogueMoved is a read's error when the dataset's row given to the
// request from memory is not the row of the read's snapshot (see
// WithRecentCatalogue): nothing was read; run the request again without
// the mark.
var ErrCatalogueMoved = &Error{Code: ETIMEOUT, Message: "the dataset changed while it was read: try again"}

// MaxCatalogueLag bounds how old the datasets' rows a read marked by
// WithRecentCatalogue sees.
const MaxCatalogueLag = time.Second
