package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"mapcommons"
)

// The work of one request is bounded: feature queries, downloads,
// classifications and searches run under a deadline (Config.QueryTimeout),
// and under the request's own context, which ends when the client goes
// away. The engines look at their context every few thousand rows (a LIKE
// over a long value within the row too), so the work really stops; the handler's error is then a 503 (ETIMEOUT).

// DefaultQueryTimeout is Config.QueryTimeout when it is not set.
const DefaultQueryTimeout = 30 * time.Second

// bounded runs h under the query deadline, and turns the failure of work
// cut short by the deadline or by the client going away into an ETIMEOUT
// error.
func (s *Server) bounded(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		if s.cfg.QueryTimeout > 0 {
			c := withQueryDeadline(ctx, time.Now().Add(s.cfg.QueryTimeout))
			defer c.finish()
			ctx = c
		}
		err := h(w, r.WithContext(ctx))
		return s.cutShort(r.Context(), ctx, err)
	}
}

// queryCtx is a request's context with the query deadline, made for the
// many requests that end long before it. context.WithTimeout starts a
// timer and registers with the request's context at every request (3 % of
// the CPU of a bbox page), while the embedded engine only looks at Err,
// which can read the clock. So the context.WithDeadline is made the first
// time someone asks for Done (a driver watching the query, a derived
// context), and from then on Done, Err and Value are its: contexts derived
// from this one and context.AfterFunc register with it as with any
// deadline context, with no goroutine of their own, and context.Cause is
// its. Until then Err reads the parent and the clock, and once it has
// reported an end, Done is a closed channel: Err and Done agree as the
// context contract says. Deadline is the earlier of the request's and the
// query's.
type queryCtx struct {
	context.Context // the request's
	deadline        time.Time
	mu              sync.Mutex
	inner           atomic.Pointer[deadlineCtx] // made by Done
	ended           atomic.Bool                 // before inner: err is set
	err             error
}

// deadlineCtx is the context.WithDeadline a queryCtx hands over to.
type deadlineCtx struct {
	context.Context
	cancel context.CancelFunc
}

func withQueryDeadline(parent context.Context, deadline time.Time) *queryCtx {
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return &queryCtx{Context: parent, deadline: deadline}
}

func (c *queryCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *queryCtx) Err() error {
	if in := c.inner.Load(); in != nil {
		return in.Err()
	}
	if c.ended.Load() {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
	err := c.Context.Err()
	if err == nil && !time.Now().Before(c.deadline) {
		err = context.DeadlineExceeded
	}
	if err == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inner.Load(); in != nil {
		return in.Err() // handed over meanwhile: its word, as its Done's
	}
	if !c.ended.Load() {
		c.err = err
		c.ended.Store(true)
	}
	return c.err
}

func (c *queryCtx) Done() <-chan struct{} {
	if in := c.inner.Load(); in != nil {
		return in.Done()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inner.Load(); in != nil {
		return in.Done()
	}
	if c.ended.Load() {
		return closedDone
	}
	ctx, cancel := context.WithDeadline(c.Context, c.deadline)
	in := &deadlineCtx{Context: ctx, cancel: cancel}
	c.inner.Store(in)
	return in.Done()
}

func (c *queryCtx) Value(key any) any {
	if in := c.inner.Load(); in != nil {
		return in.Value(key) // a derived context finds the deadline context's own
	}
	return c.Context.Value(key)
}

func (c *queryCtx) String() string { return "api.queryCtx" }

// finish ends the context when its handler is done, as WithTimeout's
// cancel does.
func (c *queryCtx) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if in := c.inner.Load(); in != nil {
		in.cancel()
		return
	}
	if !c.ended.Load() {
		c.err = context.Canceled
		c.ended.Store(true)
	}
}

// closedDone is the Done of a queryCtx that ended before anyone asked.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// cutShort returns err, or the ETIMEOUT error that explains it when ctx
// (derived from the request's context reqCtx) has ended: a store
// interrupted by its context reports the cause in its own words (an
// internal error, a context error), which is not the caller's to read.
func (s *Server) cutShort(reqCtx, ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		mapcommons.ErrorCode(err) != mapcommons.EINTERNAL && mapcommons.ErrorCode(err) != mapcommons.ETIMEOUT {
		return err // a real answer (a 400, a 404) found before the end
	}
	if reqCtx.Err() != nil {
		return mapcommons.Errorf(mapcommons.ETIMEOUT, "the request was cancelled (the client went away)")
	}
	return mapcommons.Errorf(mapcommons.ETIMEOUT, "the query took longer than the server allows (%v, --query-timeout): narrow it (bbox, filter, limit) and try again", s.cfg.QueryTimeout)
}
