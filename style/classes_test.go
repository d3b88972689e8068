package style

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestClassCacheComputesOnce: requests needing a classification another is
// computing wait for it and share it; when the computing request fails
// (its client went away), a waiter computes it itself.
func TestClassCacheComputesOnce(t *testing.T) {
	t.Parallel()
	t.Run("Shared", func(t *testing.T) {
		var c classCache
		var computed atomic.Int32
		started, release := make(chan struct{}), make(chan struct{})
		want := &Classes{Attribute: "x"}
		leader := make(chan *Classes)
		go func() {
			d, _ := c.do(t.Context(), "k", func() (*Classes, error) {
				computed.Add(1)
				close(started)
				<-release
				return want, nil
			})
			leader <- d
		}()
		<-started
		var wg sync.WaitGroup
		got := make([]*Classes, 8)
		for i := range got {
			wg.Go(func() {
				got[i], _ = c.do(t.Context(), "k", func() (*Classes, error) { computed.Add(1); return &Classes{}, nil })
			})
		}
		for range 100 {
			runtime.Gosched() // let the waiters arrive while it computes
		}
		close(release)
		wg.Wait()
		if d := <-leader; d != want {
			t.Fatal("the computing request got another answer")
		}
		for i, d := range got {
			if d != want {
				t.Fatalf("waiter %d got another answer", i)
			}
		}
		if n := computed.Load(); n != 1 {
			t.Fatalf("computed %d times, want 1", n)
		}
	})
	t.Run("LeaderGone", func(t *testing.T) {
		var c classCache
		started, release := make(chan struct{}), make(chan struct{})
		go func() {
			c.do(t.Context(), "k", func() (*Classes, error) {
				close(started)
				<-release
				return nil, context.Canceled
			})
		}()
		<-started
		done := make(chan *Classes)
		go func() {
			d, _ := c.do(t.Context(), "k", func() (*Classes, error) { return &Classes{Attribute: "mine"}, nil })
			done <- d
		}()
		close(release)
		if d := <-done; d == nil || d.Attribute != "mine" {
			t.Fatalf("the waiter got %v", d)
		}
		// And it is cached now.
		d, err := c.do(t.Context(), "k", func() (*Classes, error) { return nil, errors.New("computed again") })
		if err != nil || d.Attribute != "mine" {
			t.Fatalf("cached: %v, %v", d, err)
		}
	})
	t.Run("LeaderPanicked", func(t *testing.T) {
		// A computation that panics leaves nothing in flight: the next
		// request computes (here with its client already gone, which a
		// request waiting on the dead computation would report).
		var c classCache
		func() {
			defer func() { recover() }()
			c.do(t.Context(), "k", func() (*Classes, error) { panic("in compute") })
		}()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		d, err := c.do(ctx, "k", func() (*Classes, error) { return &Classes{Attribute: "next"}, nil })
		if err != nil || d == nil || d.Attribute != "next" {
			t.Fatalf("after a panicked computation: %v, %v", d, err)
		}
	})
	t.Run("WaiterGone", func(t *testing.T) {
		var c classCache
		started, release := make(chan struct{}), make(chan struct{})
		defer close(release)
		go func() {
			c.do(context.Background(), "k", func() (*Classes, error) {
				close(started)
				<-release
				return &Classes{}, nil
			})
		}()
		<-started
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := c.do(ctx, "k", func() (*Classes, error) { return &Classes{}, nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiter whose client went away: %v", err)
		}
	})
}
