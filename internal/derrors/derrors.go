// Package derrors adds to an unexpected error the operation it failed in,
// after pkgsite's habit: an exported method of a store begins with
//
//	defer derrors.Wrap(&err, "DatasetService.FindDatasetByID(%d)", id)
//
// so that an internal error logged by the server says which store
// operation went wrong, not only what the database answered.
package derrors

import (
	"errors"
	"fmt"

	"mapcommons"
)

// Wrap, when *errp is not nil, replaces it with an error that begins with
// the operation (format and args, formatted only then) and wraps the old
// one (%w: errors.Is and errors.As still find it, context.Canceled and
// context.DeadlineExceeded among the rest).
//
// The rule: an expected error, one with a *mapcommons.Error anywhere in
// its chain (ENOTFOUND, EINVALID, ECONFLICT, ...), is left as it is. Its
// code and message are what the caller is shown, and it already says
// what went wrong in the caller's terms; mapcommons.ErrorCode and
// ErrorMessage, err.Error() and == against a sentinel such as
// mapcommons.ErrCatalogueMoved all give what they gave before. Only the
// others, the errors that become "internal error" (or EFULL), are
// wrapped: those are the ones whose log line wants the operation.
//
// Wrap is meant to be deferred at a method's entry: its cost when nothing
// fails is the call and its arguments, none of the formatting.
func Wrap(errp *error, format string, args ...any) {
	if *errp == nil || expected(*errp) {
		return
	}
	*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
}

// WrapExcept is Wrap for a method that calls back a function of its
// caller (ScanFeatures' fn, UpdateMap's fn): an error for which
// errors.Is(*errp, *theirs) holds, *theirs recorded by Through, is the
// caller's own and comes back as the callback returned it.
func WrapExcept(errp *error, theirs *error, format string, args ...any) {
	if *errp == nil || *theirs != nil && errors.Is(*errp, *theirs) {
		return
	}
	Wrap(errp, format, args...)
}

// Through returns fn that records in *theirs the last error fn returned,
// for WrapExcept. A nil fn stays nil.
func Through[T any](theirs *error, fn func(T) error) func(T) error {
	if fn == nil {
		return nil
	}
	return func(v T) error {
		err := fn(v)
		if err != nil {
			*theirs = err
		}
		return err
	}
}

// ThroughQuery is Through for ScanFeatures: fn, and the function of q's
// follow-up (q.Then) if it has one, which needs a copy of q (its Count
// still points where the caller's does).
func ThroughQuery(theirs *error, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) (*mapcommons.FeatureQuery, func(*mapcommons.Feature) error) {
	if q != nil && q.Then != nil {
		then := q.Then
		c := *q
		c.Then = func() (*mapcommons.FeatureQuery, func(*mapcommons.Feature) error) {
			tq, tfn := then()
			return tq, Through(theirs, tfn)
		}
		q = &c
	}
	return q, Through(theirs, fn)
}

func expected(err error) bool {
	var e *mapcommons.Error
	return errors.As(err, &e)
}
