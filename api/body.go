package api

// Request bodies arrive on the client's schedule, not the server's: a
// client that sends one byte every few seconds would hold its connection,
// its goroutine and whatever was buffered for ever. Every body is read
// under a deadline that moves with progress (bodyClock), and bodies parsed
// into parameters are bounded by --max-form, apart from uploads.

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"mapcommons"
	"mapcommons/params"
)

// Defaults of the body limits.
const (
	// DefaultMaxForm is the largest urlencoded, JSON or multipart-text body
	// parsed into parameters when Config.MaxForm is not set.
	DefaultMaxForm = params.DefaultMaxForm
	// DefaultBodyTimeout is how long a body may make no progress.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultBodyMinRate is the average rate, in bytes per second, below
	// which a body is cut once its first DefaultBodyTimeout has passed.
	DefaultBodyMinRate = 1 << 10
)

// hasBody reports whether a request carries a body to read.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// bodyClock reads a request body under a read deadline on the connection
// that moves with progress: each read must bring data within the idle
// timeout, and the body must keep an average rate of at least rate bytes a
// second after its first idle period. A body too slow for either fails with
// EINVALID and the connection is closed after the answer. Once the body
// has been read to its end, the deadline is lifted, so that a long answer
// is not cut by it.
type bodyClock struct {
	rc    *http.ResponseController
	body  io.ReadCloser
	start time.Time
	idle  time.Duration
	rate  int64 // bytes per second; <= 0: no minimum
	n     int64
	done  bool
	slow  bool
}

// newBodyClock starts the clock: the first byte must come within idle.
func newBodyClock(w http.ResponseWriter, body io.ReadCloser, idle time.Duration, rate int64) *bodyClock {
	c := &bodyClock{rc: http.NewResponseController(w), body: body, start: time.Now(), idle: idle, rate: rate}
	c.arm()
	return c
}

// arm sets the deadline of the next read.
func (c *bodyClock) arm() {
	now := time.Now()
	d := now.Add(c.idle)
	if c.rate > 0 {
		// The next byte is due when the average would fall below rate.
		due := c.start.Add(c.idle + time.Duration(float64(c.n+1)/float64(c.rate)*float64(time.Second)))
		if due.Before(d) {
			d = due
		}
	}
	c.rc.SetReadDeadline(d) // ErrNotSupported (tests' recorders): no deadline
}

func (c *bodyClock) Read(p []byte) (int, error) {
	if c.slow {
		return 0, c.slowError()
	}
	if !c.done {
		c.arm()
	}
	n, err := c.body.Read(p)
	c.n += int64(n)
	switch {
	case err == io.EOF && !c.done:
		c.done = true
		c.rc.SetReadDeadline(time.Time{})
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		c.slow = true
		return n, c.slowError()
	}
	return n, err
}

func (c *bodyClock) slowError() error {
	return mapcommons.Errorf(mapcommons.EINVALID, "the request body came too slowly (%d bytes in %s): it must make progress every %s and average %d bytes a second",
		c.n, time.Since(c.start).Round(time.Millisecond), c.idle, c.rate)
}

func (c *bodyClock) Close() error { return c.body.Close() }

// abandon stops reading the body: the server, which would otherwise read
// what is left of it (up to 256 KiB) at the client's pace before closing
// or reusing the connection, finds the deadline passed and closes it.
func (c *bodyClock) abandon() {
	c.done = true
	c.rc.SetReadDeadline(time.Now())
}
