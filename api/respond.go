package api

import (
	"encoding/json"
	"net/http"

	"mapcommons/params"
)

// writeJSON writes v as the JSON answer (JSONP when asked for).
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	writeBody(w, r, status, b)
	return nil
}

// created answers 201 with the absolute Location of the new object and its JSON.
func (s *Server) created(w http.ResponseWriter, r *http.Request, location string, v any) error {
	w.Header().Set("Location", location)
	return s.writeJSON(w, r, http.StatusCreated, v)
}

// empty answers with a status and no body (the Status header says it again).
func empty(w http.ResponseWriter, status int) error {
	w.WriteHeader(status)
	return nil
}

// parseRequest reads the parameters and uploads of r within the server's limits.
func (s *Server) parseRequest(r *http.Request) (*params.Request, error) {
	return params.ParseRequest(r, params.ParseOptions{MaxBody: s.cfg.MaxUpload, MaxForm: s.cfg.MaxForm, TempDir: s.cfg.TempDir, Budget: s.forms})
}

// parseFor finds what r acts on with find, which authorizes the caller,
// and only then reads r's parameters: a body is never read for a caller
// who may not make the request. The caller cleans up the parameters.
func parseFor[T any](s *Server, r *http.Request, find func(*http.Request) (T, error)) (T, *params.Request, error) {
	v, err := find(r)
	if err != nil {
		return v, nil, err
	}
	q, err := s.parseRequest(r)
	return v, q, err
}

// parseAllowed reads r's parameters when allowed, the caller's
// authorization, is nil; else it answers that refusal, reading nothing.
func (s *Server) parseAllowed(r *http.Request, allowed error) (*params.Request, error) {
	if allowed != nil {
		return nil, allowed
	}
	return s.parseRequest(r)
}

// findNoBody finds what a request that takes no parameters acts on with
// find, which authorizes the caller, then refuses a malformed body.
func findNoBody[T any](s *Server, r *http.Request, find func(*http.Request) (T, error)) (T, error) {
	v, err := find(r)
	if err != nil {
		return v, err
	}
	return v, s.checkBody(r)
}

// checkBody refuses a malformed JSON body (one that starts with { or [
// and does not parse is a 400 everywhere) for handlers that read no
// parameters. Bodies of other types are left unread.
func (s *Server) checkBody(r *http.Request) error {
	if mt, _ := params.ParseContentType(r.Header.Get("Content-Type")); !params.IsJSONMediaType(mt) {
		return nil
	}
	q, err := s.parseRequest(r)
	q.Cleanup()
	return err
}
