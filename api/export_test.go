package api

import (
	"encoding/json"

	"mapcommons/ingest"
)

// SetSyncLimits sets the bounds of a keyed refetch (ingest/feedsync.go): at most
// rows stored features, keyBytes of their keys, editBytes of changed rows.
func (s *Server) SetSyncLimits(rows int64, keyBytes, editBytes int) {
	s.feeds.SyncLimits = ingest.SyncLimits{Rows: rows, KeyBytes: keyBytes, EditBytes: editBytes}
}

// FormBudgetLeft is what the form budget has left (-1: no budget).
func (s *Server) FormBudgetLeft() int64 {
	if s.forms == nil {
		return -1
	}
	return s.forms.Left()
}

// Patterns are the route patterns the server registered.
func (s *Server) Patterns() []string { return s.patterns }

// NormalizePath is the server's path normalisation (repeated slashes,
// /overlays, the format suffix), for the tests that look a request up in
// the OpenAPI document as the server's routes would.
func NormalizePath(p string) (path, format string) { return normalizePath(p) }

// OpenAPIJSON is the OpenAPI document the server serves, assembled as it
// assembles it, without its servers.
func OpenAPIJSON() ([]byte, error) {
	doc, err := servedOpenAPI()
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}

// Warming tells whether a thumbnail is being drawn or waits to be.
func (s *Server) Warming() bool {
	s.warmer.mu.Lock()
	defer s.warmer.mu.Unlock()
	return s.warmer.running
}

// WaitThumbnails waits until the thumbnails of what changed are drawn.
func (s *Server) WaitThumbnails() { s.waitWarm() }

// Draws is how many images the server has drawn.
func (s *Server) Draws() int64 { return s.draws.Load() }
