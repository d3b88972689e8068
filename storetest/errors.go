package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"mapcommons"
)

// testErrors: an expected error (ENOTFOUND) comes back as the store made
// it, its message the caller's; an unexpected one (here a cancelled
// context) names the operation it failed in and is still what it was
// (errors.Is); the error of ScanFeatures' callback comes back as the
// callback returned it.
func testErrors(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	u := MustCreateUser(t, s, "erin", false)

	_, err := s.Users.FindUserByID(ctx, u.ID+1000)
	code(t, err, mapcommons.ENOTFOUND)
	var e *mapcommons.Error
	if !errors.As(err, &e) || err.Error() != e.Error() || strings.Contains(err.Error(), "UserService") {
		t.Errorf("a user not found: %q: not the domain's error as it was made", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.Users.FindUserByID(cancelled, u.ID)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a read with its context cancelled: %v, want context.Canceled", err)
	}
	if op := fmt.Sprintf("UserService.FindUserByID(%d)", u.ID); !strings.Contains(err.Error(), op) {
		t.Errorf("a read with its context cancelled: %q does not name %s", err, op)
	}
	if got := mapcommons.ErrorMessage(err); got != "internal error" {
		t.Errorf("a read with its context cancelled shows %q", got)
	}

	ds := MustCreateDataset(t, s, u.ID, "Errors", "", "", 1, 2, 3, 4)
	stop := errors.New("stop")
	err = s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(*mapcommons.Feature) error { return stop })
	if err != stop {
		t.Errorf("ScanFeatures gives back its callback's error as %v", err)
	}
}
