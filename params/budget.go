package params

// The bounds of the bodies parsed into parameters: each is at most
// ParseOptions.MaxForm bytes, and all being read at once hold at most a
// FormBudget.

import (
	"errors"
	"io"
	"sync"
	"time"

	"mapcommons"
)

// DefaultMaxForm is the largest urlencoded, JSON or multipart-text body
// parsed into parameters when ParseOptions.MaxForm is not set.
const DefaultMaxForm = 1 << 20

// FormTooLarge is the error of a form or JSON body over the limit.
func FormTooLarge(n int64) error {
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

// Left is what the budget has left.
func (b *FormBudget) Left() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left
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
	e := mapcommons.Errorf(mapcommons.ETOOMANY, "too many form bodies are being received at once: try again in a moment")
	e.RetryAfter = 2 * time.Second
	return e
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
