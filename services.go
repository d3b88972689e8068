package mapcommons

import "context"

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
	// Sessions keeps the sessions of signed-in browsers.
	Sessions SessionService
	// Health reports whether the store answers (for /healthz).
	Health Pinger
}

// Pinger reports whether a store answers.
type Pinger interface {
	Ping(ctx context.Context) error
}
