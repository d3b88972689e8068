package sqlite

// SetExactSummaryMax sets the number of features up to which a write
// computes an exact summary, until the test ends.
func SetExactSummaryMax(tb interface{ Cleanup(func()) }, n int) {
	old := exactSummaryMax
	exactSummaryMax = n
	tb.Cleanup(func() { exactSummaryMax = old })
}

// SetCompactHook sets a function that compactions call between writing
// the new base and taking the dataset's lock, until the test ends.
func SetCompactHook(tb interface{ Cleanup(func()) }, fn func(id int64)) {
	compactHook = fn
	tb.Cleanup(func() { compactHook = nil })
}

// LayoutOf is the layout (the segment column) of dataset id.
func (db *DB) LayoutOf(id int64) string {
	var s string
	db.write.QueryRow(`SELECT segment FROM datasets WHERE id = ?`, id).Scan(&s)
	return s
}

// DeltaNames are the names of the delta segments in the catalogue.
func (db *DB) DeltaNames() []string {
	var names []string
	rows, err := db.write.Query(`SELECT name FROM segment_deltas ORDER BY name`)
	if err != nil {
		return []string{err.Error()}
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	return names
}

// SetMaxDelta sets the most features a write puts in a delta before it
// writes the dataset whole, until the test ends.
func SetMaxDelta(tb interface{ Cleanup(func()) }, n int) {
	old := maxDelta
	maxDelta = n
	tb.Cleanup(func() { maxDelta = old })
}
