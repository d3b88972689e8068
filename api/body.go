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
	"sync"
	"time"

	"mapcommons"
)

// Defaults of the body limits.
const (
	// DefaultMaxForm is the largest urlencoded, JSON or multipart-text body
	// parsed into parameters when Config.MaxForm is not set.
	DefaultMaxForm = 1 << 20
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

// formTooLarge is the error of a form or JSON body over the limit.
func formTooLarge(n int64) error {
	return mapcommons.Errorf(mapcommons.ETOOLARGE, "form or JSON body larger than %d bytes (max-form; files are uploads, bounded by max-upload)", n)
}

// FormBudget bounds the memory that form and JSON bodies being read hold
// at once, over all requests: a thousand slow clients each sending a form
// just under max-form would otherwise hold a thousand times max-form. A
// body that finds the budget spent is refused with 429 and Retry-After.
type FormBudget struct {
	mu   sync.Mutex
	left int64
}

// NewFormBudget returns a budget of n bytes.
func NewFormBudget(n int64) *FormBudget { return &FormBudget{left: n} }

// take reserves n bytes, or reports false.
func (b *FormBudget) take(n int64) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

// give returns n bytes.
func (b *FormBudget) give(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.left += n
	b.mu.Unlock()
}

// errFormBusy is what a budgetReader fails with when the budget is spent.
var errFormBusy = errors.New("form budget spent")

// formBusy is the refusal of a body when the budget is spent.
func formBusy() error {
	return &retryAfterError{after: 2 * time.Second, err: mapcommons.Errorf(mapcommons.ETOOMANY,
		"too many form bodies are being received at once: try again in a moment")}
}

// budgetReader reads a form body into memory, reserving from the budget
// before each chunk is read; release returns what was reserved.
type budgetReader struct {
	r        io.Reader // bounded: no more than limit bytes
	limit    int64
	budget   *FormBudget
	reserved int64
	used     int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	const chunk = 16 << 10
	if b.used+int64(len(p)) > b.reserved {
		// Reserve at least a chunk, never beyond limit (r gives no more).
		need := min(max(int64(chunk), b.used+int64(len(p))-b.reserved), b.limit-b.reserved)
		if need > 0 {
			if !b.budget.take(need) {
				return 0, errFormBusy
			}
			b.reserved += need
		}
		if b.used+int64(len(p)) > b.reserved {
			p = p[:b.reserved-b.used] // at limit this is empty and r says EOF
		}
	}
	n, err := b.r.Read(p)
	b.used += int64(n)
	return n, err
}

func (b *budgetReader) release() {
	b.budget.give(b.reserved)
	b.reserved = 0
}
