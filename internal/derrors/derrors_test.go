package derrors

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"mapcommons"
)

func wrapped(err error) (out error) {
	defer Wrap(&out, "Service.Op(%d)", 7)
	return err
}

func TestWrap(t *testing.T) {
	if err := wrapped(nil); err != nil {
		t.Errorf("no error: %v", err)
	}

	// An unexpected error: it names the operation and still is itself.
	err := wrapped(fs.ErrClosed)
	if got, want := err.Error(), "Service.Op(7): "+fs.ErrClosed.Error(); got != want {
		t.Errorf("unexpected error: %q, want %q", got, want)
	}
	if !errors.Is(err, fs.ErrClosed) || mapcommons.ErrorCode(err) != mapcommons.EINTERNAL {
		t.Errorf("unexpected error: %v is not fs.ErrClosed, or not internal", err)
	}
	for _, cerr := range []error{context.Canceled, context.DeadlineExceeded, fmt.Errorf("read: %w", context.Canceled)} {
		if err := wrapped(cerr); !errors.Is(err, cerr) || err.Error() == cerr.Error() {
			t.Errorf("context error %v: %v", cerr, err)
		}
	}
	if err := wrapped(fmt.Errorf("write: %w", syscall.ENOSPC)); mapcommons.ErrorCode(err) != mapcommons.EFULL {
		t.Errorf("a full disk: %v is %s", err, mapcommons.ErrorCode(err))
	}

	// Expected errors come back as they are: the same value, code and
	// message.
	for _, e := range []error{
		mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset %d not found", 7),
		mapcommons.Errorf(mapcommons.EINVALID, "bad"),
		mapcommons.ErrCatalogueMoved,
		fmt.Errorf("inner: %w", mapcommons.Errorf(mapcommons.ECONFLICT, "taken")),
	} {
		err := wrapped(e)
		if err != e {
			t.Errorf("expected error %v came back as %v", e, err)
		}
	}
}

func TestWrapExcept(t *testing.T) {
	stop := errors.New("stop")
	scan := func(q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error, fail error) (err error) {
		var theirs error
		defer WrapExcept(&err, &theirs, "FeatureService.ScanFeatures(%d)", 3)
		q, fn = ThroughQuery(&theirs, q, fn)
		if fail != nil {
			return fail
		}
		if err := fn(&mapcommons.Feature{}); err != nil {
			return fmt.Errorf("scanning: %w", err)
		}
		if q.Then != nil {
			if _, tfn := q.Then(); tfn != nil {
				return tfn(&mapcommons.Feature{})
			}
		}
		return nil
	}
	// The callback's own error comes back as it was made (errors.Is),
	// not named with the operation.
	err := scan(&mapcommons.FeatureQuery{}, func(*mapcommons.Feature) error { return stop }, nil)
	if !errors.Is(err, stop) || err.Error() != "scanning: stop" {
		t.Errorf("the callback's error: %v", err)
	}
	var count int64
	q := &mapcommons.FeatureQuery{Count: &count, Then: func() (*mapcommons.FeatureQuery, func(*mapcommons.Feature) error) {
		return &mapcommons.FeatureQuery{}, func(*mapcommons.Feature) error { return stop }
	}}
	if err := scan(q, func(*mapcommons.Feature) error { return nil }, nil); err != stop {
		t.Errorf("the follow-up's error: %v", err)
	}
	// The store's own failure is named.
	if err := scan(&mapcommons.FeatureQuery{}, func(*mapcommons.Feature) error { return nil }, fs.ErrClosed); err == nil || err.Error() != "FeatureService.ScanFeatures(3): "+fs.ErrClosed.Error() {
		t.Errorf("the store's error: %v", err)
	}
	if got := Through[int](new(error), nil); got != nil {
		t.Error("Through(nil) is not nil")
	}
}
