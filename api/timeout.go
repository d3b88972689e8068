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
			defer c.end(context.Canceled)
			ctx = c
		}
		err := h(w, r.WithContext(ctx))
		return s.cutShort(r.Context(), ctx, err)
	}
}

// queryCtx is a request's context with the query deadline, made for the
// many requests that end long before it. context.WithTimeout starts a
// timer and registers with the request's context at every request (3 % of
// the CPU of a bbox page); the engines only look at Err, which can read
// the clock. So the timer and the registration are made the first time
// someone asks for Done, and never for a request nobody asks. Err and
// Done agree as the context contract says: Err reports the end only once
// Done is closed (end closes it, or makes it closed, first). Deadline is
// the earlier of the request's and the query's.
//
// (context.Cause of it is its parent's: nothing here reads causes.)
type queryCtx struct {
	context.Context // the request's
	deadline        time.Time
	ended           atomic.Bool // err is set and done closed
	mu              sync.Mutex
	done            chan struct{} // made by Done, or closed by end
	err             error
	stopTimer       func() bool
	stopParent      func() bool
}

func withQueryDeadline(parent context.Context, deadline time.Time) *queryCtx {
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return &queryCtx{Context: parent, deadline: deadline}
}

func (c *queryCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *queryCtx) Err() error {
	if c.ended.Load() {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	}
	if err := c.Context.Err(); err != nil {
		return c.end(err)
	}
	if !time.Now().Before(c.deadline) {
		return c.end(context.DeadlineExceeded)
	}
	return nil
}

func (c *queryCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		// Ended already (its deadline passed, or its parent ended): closed
		// now, as context.WithDeadline's is, not when a timer gets to it.
		err := c.Context.Err()
		if err == nil && !time.Now().Before(c.deadline) {
			err = context.DeadlineExceeded
		}
		if err != nil {
			c.err, c.done = err, closedDone
			c.ended.Store(true)
			return c.done
		}
		c.done = make(chan struct{})
		// Both run their functions on goroutines of their own, never
		// here under the lock.
		c.stopParent = context.AfterFunc(c.Context, func() { c.end(c.Context.Err()) })
		t := time.AfterFunc(time.Until(c.deadline), func() { c.end(context.DeadlineExceeded) })
		c.stopTimer = t.Stop
	}
	return c.done
}

// end ends the context with err (the first end's error stays) and returns
// the error it ended with.
func (c *queryCtx) end(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	c.err = err
	// ended before the close: whoever sees Done closed sees Err set (a
	// context derived from this one panics on a nil Err).
	c.ended.Store(true)
	if c.done == nil {
		c.done = closedDone
	} else {
		close(c.done)
		c.stopTimer()
		c.stopParent()
	}
	return err
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
