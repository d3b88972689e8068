// Package feature holds the rules of features that every store applies
// alike, so that the embedded engine (segment) and the PostgreSQL store
// answer and refuse as one: the evaluation of a Where expression over a
// store's cells or a feature's values (where.go, like.go, values.go), the
// grouping and aggregation of features (group.go), and the checks of a
// feature and of a batch of edits (check.go, edits.go).
package feature
