package postgres

import (
	"slices"
	"sort"
)

// Positions with holes. A table written whole (a create, a replace, a
// rewrite) numbers its rows 0 to n-1 in pos. An edit in place (edits.go)
// deletes rows and leaves their pos unused, a hole: dataset_holes keeps
// the holes of the dataset's current table (read with its row, ascending:
// datasetRow.holes), and a feature's
// position is its pos less the holes below it, so that positions stay
// 0 to count-1 in order, as the segment engine gives them, while a
// delete moves no row. Added rows take the pos past the last slot
// (count plus holes). A rewrite fills up the holes again (maxHoles).

// holesOf + the SQL of a dataset's id + holesEnd is the SQL of its holes,
// ascending (the rows of dataset_holes, migration 0016, in the order of
// its key: no sort).
const (
	holesOf  = `ARRAY(SELECT h.pos FROM dataset_holes h WHERE h.dataset_id = `
	holesEnd = ` ORDER BY h.pos)`
)

// maxHoles bounds the holes a table keeps: an edit in place that would
// leave more rewrites the table instead (variable for tests).
var maxHoles = 10000

// position is the dataset position of the row at pos.
func (r *datasetRow) position(pos int64) int64 {
	if len(r.holes) == 0 {
		return pos
	}
	below, _ := slices.BinarySearch(r.holes, pos)
	return pos - int64(below)
}

// slot is the pos of the feature at dataset position k (0 <= k <=
// count; count gives the slot past the last row).
func (r *datasetRow) slot(k int64) int64 {
	// The least pos s with s - holes below s = k and s not a hole: k
	// plus the number of holes at or below it.
	i := sort.Search(len(r.holes), func(i int) bool { return r.holes[i]-int64(i) > k })
	return k + int64(i)
}

// slots is the pos the next added row gets.
func (r *datasetRow) slots() int64 { return r.FeatureCount + int64(len(r.holes)) }

// mergeHoles merges the sorted holes with new ones (unsorted).
func mergeHoles(holes, more []int64) []int64 {
	out := append(slices.Clone(holes), more...)
	slices.Sort(out)
	return slices.Compact(out)
}
