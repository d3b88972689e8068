package api

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// closedNow says whether ch is closed.
func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// The query deadline's context (queryCtx) ends as context.WithTimeout's
// does: by its clock, with its parent, or when the handler is done; and
// its Err and Done agree.
func TestQueryDeadlineContext(t *testing.T) {
	t.Run("passed deadline, nobody asked for Done", func(t *testing.T) {
		c := withQueryDeadline(context.Background(), time.Now().Add(-time.Second))
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err %v, want the deadline's", err)
		}
		if !closedNow(c.Done()) {
			t.Fatal("Err said it ended but Done is open")
		}
		c.finish() // the handler's end keeps the first error
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err %v after the handler's end, want the deadline's", err)
		}
	})
	t.Run("passed deadline, Done asked first", func(t *testing.T) {
		// As database/sql asks: a select on Done with a default. A
		// deadline passed is a Done closed already, not a timer's later.
		c := withQueryDeadline(context.Background(), time.Now().Add(-time.Nanosecond))
		if !closedNow(c.Done()) {
			t.Fatal("Done open past the deadline")
		}
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err %v, want the deadline's", err)
		}
		parent, cancel := context.WithCancel(context.Background())
		cancel()
		c = withQueryDeadline(parent, time.Now().Add(time.Hour))
		if !closedNow(c.Done()) {
			t.Fatal("Done open with its parent ended")
		}
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Err %v, want the parent's", err)
		}
	})
	t.Run("Err once Done is closed", func(t *testing.T) {
		// Whoever sees Done closed sees Err set: a context derived from
		// it (context.WithCancel's goroutine) panics on a nil Err. Ended
		// on another goroutine while this one waits, many times over.
		for i := range 2000 {
			c := withQueryDeadline(context.Background(), time.Now().Add(time.Hour))
			done := c.Done()
			go c.finish()
			<-done
			if c.Err() == nil {
				t.Fatalf("round %d: Done closed, Err nil", i)
			}
		}
	})
	t.Run("deadline reached while waiting on Done", func(t *testing.T) {
		live := withQueryDeadline(context.Background(), time.Now().Add(time.Hour))
		if live.Err() != nil || closedNow(live.Done()) {
			t.Fatal("ended before its deadline")
		}
		live.finish()
		c := withQueryDeadline(context.Background(), time.Now().Add(20*time.Millisecond))
		<-c.Done() // closed by the timer alone: nothing calls Err
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Err %v, want the deadline's", err)
		}
	})
	t.Run("parent cancelled", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		c := withQueryDeadline(parent, time.Now().Add(time.Hour))
		child, stop := context.WithCancel(c) // asks for Done
		defer stop()
		cancel()
		<-child.Done()
		if err := c.Err(); !errors.Is(err, context.Canceled) || !closedNow(c.Done()) {
			t.Fatalf("Err %v, want the parent's", err)
		}
		// Without anyone asking for Done, Err still sees the parent.
		parent2, cancel2 := context.WithCancel(context.Background())
		c2 := withQueryDeadline(parent2, time.Now().Add(time.Hour))
		cancel2()
		if err := c2.Err(); !errors.Is(err, context.Canceled) || !closedNow(c2.Done()) {
			t.Fatalf("Err %v, want the parent's, Done closed", err)
		}
	})
	t.Run("handler done", func(t *testing.T) {
		c := withQueryDeadline(context.Background(), time.Now().Add(time.Hour))
		child, stop := context.WithCancel(c)
		defer stop()
		c.finish()
		<-child.Done() // what was derived from it ends with it
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Fatalf("Err %v, want Canceled", err)
		}
	})
	t.Run("derived contexts register with it", func(t *testing.T) {
		// As pgx watches each query (context.AfterFunc): no goroutine each
		// (the deadline far, so that none fires while they are counted),
		// and each fires when the context ends.
		c := withQueryDeadline(context.Background(), time.Now().Add(time.Hour))
		before := runtime.NumGoroutine()
		fired := make(chan struct{}, 200)
		for range 200 {
			context.AfterFunc(c, func() { fired <- struct{}{} })
		}
		child, stop := context.WithCancel(c)
		defer stop()
		if n := runtime.NumGoroutine() - before; n >= 100 {
			t.Fatalf("%d goroutines for 200 AfterFuncs and a child", n)
		}
		c.finish()
		<-child.Done()
		for range 200 {
			<-fired
		}
		if err := context.Cause(child); !errors.Is(err, context.Canceled) {
			t.Fatalf("child's Cause %v, want the handler's end", err)
		}
		// And at the deadline, Cause says so (waiting for the timer itself).
		d := withQueryDeadline(context.Background(), time.Now().Add(time.Millisecond))
		defer d.finish()
		<-d.Done()
		if err := context.Cause(d); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Cause %v, want the deadline's", err)
		}
	})
	t.Run("deadline is the earlier", func(t *testing.T) {
		soon := time.Now().Add(time.Minute)
		parent, cancel := context.WithDeadline(context.Background(), soon)
		defer cancel()
		if d, ok := withQueryDeadline(parent, soon.Add(time.Hour)).Deadline(); !ok || !d.Equal(soon) {
			t.Fatalf("deadline %v, want the parent's %v", d, soon)
		}
		later := soon.Add(-30 * time.Second)
		if d, _ := withQueryDeadline(parent, later).Deadline(); !d.Equal(later) {
			t.Fatalf("deadline %v, want its own %v", d, later)
		}
		if v := withQueryDeadline(context.WithValue(parent, requestKey{}, "x"), later).Value(requestKey{}); v != "x" {
			t.Fatalf("value %v: the parent's values are lost", v)
		}
	})
}
