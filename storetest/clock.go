package storetest

import (
	"sync"
	"testing"
	"time"
)

// Clock is a clock that a part of the contract moves by hand, so that
// what it tests of time (leases, due times) does not hang on the speed of
// the machine.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// NewClock returns a clock at t that only Advance and Set move.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// clocks are the clocks set for tests, by their testing.TB.
var clocks sync.Map

// ClockFor is the clock an Opener or TwoOpener gives the stores it opens
// for tb (as their Now): the one the contract set for tb, or else
// time.Now. A part that sets one checks that its stores read it.
func ClockFor(tb testing.TB) func() time.Time {
	if c, ok := clocks.Load(tb); ok {
		return c.(*Clock).Now
	}
	return time.Now
}

// useClock sets, for the stores opened for tb from now on, a clock at a
// fixed time that only Advance moves.
func useClock(tb testing.TB) *Clock {
	c := &Clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	clocks.Store(tb, c)
	tb.Cleanup(func() { clocks.Delete(tb) })
	return c
}
