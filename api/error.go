package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"mapcommons"
)

// codeStatus is the one table from error codes to HTTP statuses.
var codeStatus = map[string]int{
	mapcommons.EINVALID:        http.StatusBadRequest,
	mapcommons.EUNAUTHORIZED:   http.StatusUnauthorized,
	mapcommons.EFORBIDDEN:      http.StatusForbidden,
	mapcommons.ENOTFOUND:       http.StatusNotFound,
	mapcommons.ECONFLICT:       http.StatusConflict,
	mapcommons.ETOOLARGE:       http.StatusRequestEntityTooLarge,
	mapcommons.ETOOMANY:        http.StatusTooManyRequests,
	mapcommons.EUNSUPPORTED:    http.StatusUnsupportedMediaType,
	mapcommons.EUPSTREAM:       http.StatusBadGateway,
	mapcommons.EFULL:           http.StatusInsufficientStorage,
	mapcommons.ETIMEOUT:        http.StatusServiceUnavailable,
	mapcommons.EINTERNAL:       http.StatusInternalServerError,
	mapcommons.ENOTIMPLEMENTED: http.StatusNotImplemented,
	codeMethod:                 http.StatusMethodNotAllowed,
	codePrecondition:           http.StatusPreconditionFailed,
}

// codeMethod is the API's own code for a method a path does not take.
const codeMethod = "method_not_allowed"

// codePrecondition is the API's own code for a write whose If-Match names
// another version of the object than its current one.
const codePrecondition = "precondition_failed"

// Error writes err as the JSON error body with its status. Internal errors
// are logged with the request and shown only as "internal error".
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	code := mapcommons.ErrorCode(err)
	status, ok := codeStatus[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if code == mapcommons.EINTERNAL {
		s.logger.ErrorContext(r.Context(), "internal error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body := map[string]any{"error": mapcommons.ErrorMessage(err), "code": code}
	if ogcPath(r) {
		// The OGC API's exception (OGC API Features, 7.5.1).
		body = map[string]any{"code": code, "description": mapcommons.ErrorMessage(err)}
	}
	var e *mapcommons.Error
	if errors.As(err, &e) && !ogcPath(r) {
		for field, msgs := range e.Fields {
			if field != "error" && field != "code" {
				body[field] = msgs
			}
		}
	}
	if status == http.StatusUnauthorized {
		if browserRequest(r) {
			// A page's script: no Basic challenge, which would open the
			// browser's own prompt; sessions are signed in at /session.
			w.Header().Set("WWW-Authenticate", `Session realm="mapcommons", form-action="/session"`)
		} else {
			w.Header().Set("WWW-Authenticate", `Basic realm="mapcommons"`)
		}
	}
	if me := (*mapcommons.Error)(nil); errors.As(err, &me) && me.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(me.RetryAfter)))
	}
	// A download that failed before its first byte must not keep the
	// headers of the file it meant to send.
	w.Header().Del("Content-Disposition")
	w.Header().Del("Content-Length")
	// Nor its validator: an error is no version of the object, and no
	// cache keeps it.
	w.Header().Del("ETag")
	w.Header().Set("Cache-Control", "no-store")
	b, _ := json.Marshal(body)
	writeBody(w, r, status, b)
}

// writeBody writes a whole JSON body (JSONP-wrapped when the request asked
// for it with a valid callback name).
func writeBody(w http.ResponseWriter, r *http.Request, status int, b []byte) {
	out := startJSON(w, r)
	out.status = status
	out.buf = append(out.buf, b...)
	out.Close()
}
