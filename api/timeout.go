package api

import (
	"context"
	"errors"
	"net/http"
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
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.cfg.QueryTimeout)
			defer cancel()
		}
		err := h(w, r.WithContext(ctx))
		return s.cutShort(r.Context(), ctx, err)
	}
}

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
