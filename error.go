package mapcommons

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Error codes. api/error.go maps each to one HTTP status.
const (
	EINVALID        = "invalid"              // malformed or missing input (400)
	EUNAUTHORIZED   = "unauthorized"         // not logged in, or bad credentials (401)
	EFORBIDDEN      = "forbidden"            // logged in but not allowed (403)
	ENOTFOUND       = "not_found"            // no such object (404)
	ECONFLICT       = "conflict"             // already exists (409)
	ETOOLARGE       = "too_large"            // over a size limit (413)
	ETOOMANY        = "too_many_requests"    // too many failed attempts: wait and retry (429)
	EUNSUPPORTED    = "unsupported_type"     // an upload of a kind we cannot read (415)
	EUPSTREAM       = "upstream"             // a remote source failed us: unreachable, an error, bad data (502)
	EFULL           = "insufficient_storage" // the disk (or the store) is full (507)
	ETIMEOUT        = "timeout"              // the work took longer than its time limit, or the caller went away (503)
	EINTERNAL       = "internal"             // a bug or an outage; never shown (500)
	ENOTIMPLEMENTED = "not_implemented"      // a format or feature not built yet (501)
)

// Error is the error type of the domain: a code, a message safe to show to
// the caller, and optionally per-field messages (user validation).
type Error struct {
	Code    string
	Message string
	Fields  map[string][]string
	// RetryAfter is how long the client should wait before it tries
	// again (ETOOMANY); 0: not said.
	RetryAfter time.Duration
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err: its own for an *Error anywhere in the
// chain, EINTERNAL for anything else, "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return "" // before e, which escapes: no allocation for no error
	}
	return errorCode(err)
}

func errorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	} else if diskFull(err) {
		return EFULL
	}
	return EINTERNAL
}

// diskFull reports whether err comes from a write to a full disk or over
// a disk quota, wherever it happened (a spooled upload, a segment, the
// store).
func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// ErrorMessage returns the message of err that may be shown to a caller.
func ErrorMessage(err error) string {
	var e *Error
	if err == nil {
		return ""
	} else if errors.As(err, &e) {
		return e.Message
	} else if diskFull(err) {
		return "the server's disk is full: nothing was stored"
	}
	return "internal error"
}
