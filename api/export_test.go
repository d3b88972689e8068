package api

// SetSyncLimits sets the bounds of a keyed refetch (feedsync.go): at most
// rows stored features, keyBytes of their keys, editBytes of changed rows.
func (s *Server) SetSyncLimits(rows int64, keyBytes, editBytes int) {
	s.syncLimits = &syncLimits{rows: rows, keyBytes: keyBytes, editBytes: editBytes}
}
