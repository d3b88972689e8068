package mapcommons

import (
	"context"
	"io"
)

// Feature is one row of a dataset: its zero-based position, its stable id, one value per
// attribute of the dataset (aligned with Dataset.Attributes) and its
// geometry as WKB (2-D, little endian; nil when the feature has none).
//
// Values hold int64 (AttrInteger), float64 (AttrFloat), string (AttrString,
// AttrDate), bool (AttrBoolean) or nil.
type Feature struct {
	Position int64
	// ID is the feature's stable id within its dataset (from 1): never
	// changed or reused, kept across appends and deletes, unlike Position.
	// Zero in features read from an upload (the store assigns ids).
	ID       int64
	Values   []any
	Geometry []byte
	Distance float64 // to the query's geometry, set when the query asks for it
	// Row reads the values in place instead; set, with Values nil, only for
	// a query with FeatureQuery.Lazy.
	Row Row
}

// Row reads one feature's attribute values where they are stored, without
// boxing them into Values: answers that only encode the values use it.
// Each method takes the attribute's index and suits the attribute's type;
// Bytes aliases the storage and is valid only during the call that got
// the feature.
type Row interface {
	IsNull(col int) bool
	Int(col int) int64     // AttrInteger
	Float(col int) float64 // AttrFloat
	Bytes(col int) []byte  // AttrString, AttrDate
	Bool(col int) bool     // AttrBoolean
}

// FeatureSource is a stream of features read from an upload: its schema,
// known before the first feature, then the features in order. Next returns
// io.EOF after the last one; any other error is the reader's (EINVALID for
// bad input). A feature returned by Next may be reused by the following call.
type FeatureSource interface {
	Attributes() []Attribute
	Next() (*Feature, error)
}

// EOF is returned by FeatureSource.Next after the last feature.
var EOF = io.EOF

// FeatureService reads the features of datasets.
type FeatureService interface {
	// ScanFeatures calls fn for each feature of the dataset that q selects,
	// in q's order, streaming. The *Feature passed to fn is reused between
	// calls. Returns ENOTFOUND when the dataset does not exist, EINVALID when
	// q does not fit the dataset, or the first error fn returns.
	ScanFeatures(ctx context.Context, datasetID int64, q *FeatureQuery, fn func(*Feature) error) error
	// GroupFeatures answers a grouped query (q.Grouped()): one Group per
	// distinct combination of q.GroupBy values among the features q
	// selects, ordered by those values, paged by q.Offset and q.Limit.
	// Errors as ScanFeatures.
	GroupFeatures(ctx context.Context, datasetID int64, q *FeatureQuery) ([]Group, error)
	// AddFeatures appends the features of src (whose values follow the
	// dataset's attributes) after the existing ones, all or nothing, and
	// returns how many were added. The new features get ids the dataset
	// never gave (src's ids are ignored); the old keep theirs. ENOTFOUND when there is no such dataset;
	// src's errors (EINVALID for bad input) as they come. When src is
	// AppendAware, it learns the number of features the append starts
	// from, under the store's write lock, before its first feature is read.
	AddFeatures(ctx context.Context, datasetID int64, src FeatureSource) (int64, error)
	// DeleteFeatures removes the features at the given positions, all or
	// nothing; later features move down, as in an array, keeping their ids.
	// The ids of those removed are never given again. EINVALID when a
	// position does not exist, ENOTFOUND when the dataset does not.
	DeleteFeatures(ctx context.Context, datasetID int64, positions []int64) error
	// ApplyEdits applies a batch of edits to the dataset's features, all
	// or nothing (ArcGIS applyEdits): e.Updates replace the attributes and
	// geometry of the features with their ids (Feature.ID), which keep
	// their ids and positions, or, those with a patch (e.Patches), only
	// what the patch gives; e.Deletes remove the features with those
	// ids, later features moving down as in DeleteFeatures, their ids never
	// given again; e.Adds are appended after the features left, with ids
	// the dataset never gave (their own ignored), as in AddFeatures. Every
	// added or updated feature is checked as a created one is. The
	// dataset's summary (count, extent, stats) follows and its version
	// grows. EINVALID, naming the item ("updates[2]: ..."), and nothing
	// changed, when a feature is bad, an id is not in the dataset or is
	// named twice (updated twice, updated and deleted, deleted twice);
	// ETOOLARGE when the dataset would hold more than e.MaxFeatures
	// features; ENOTFOUND when there is no such dataset.
	ApplyEdits(ctx context.Context, datasetID int64, e *Edits) (*EditResult, error)
}

// Edits is a batch of changes to a dataset's features (FeatureService.ApplyEdits).
type Edits struct {
	Adds    []Feature // ids ignored
	Updates []Feature // each names the feature it replaces by Feature.ID
	// Patches, when not nil, is aligned with Updates: an update whose
	// patch is not nil is partial (a JSON Merge Patch, RFC 7396), and
	// the feature keeps what the patch does not give. Shorter than
	// Updates: the updates past it replace their features whole.
	Patches []*Patch
	Deletes []int64 // stable ids
	// AddSource, when not nil, gives more adds after Adds (ids ignored),
	// read once, in order, by the store under its write lock: a batch of
	// many adds is never all in memory. AddCount is how many it gives, for
	// the MaxFeatures check before they are read; a source that gives
	// another number fails the edit.
	AddSource FeatureSource
	AddCount  int64
	// MaxFeatures, when above zero, is the most features the dataset may
	// hold after the edit (checked under the store's write lock): ETOOLARGE
	// past it.
	MaxFeatures int64
	// Version, when above zero, is the version of the dataset the edit
	// was made against (an If-Match): the store applies it only if the
	// dataset is still at that version under its write lock, and else
	// fails with feature.StaleVersion's error, nothing applied.
	Version int64
}

// Patch says what a partial update gives (Edits.Patches). The store
// merges it with the feature as it is under its write lock, so that
// patches of different attributes made at once all hold.
type Patch struct {
	// Attrs[i] reports that the update gives attribute i: the update's
	// Values[i] replaces the feature's (nil clears it). The feature keeps
	// the values of the others, and of those past the end of Attrs.
	Attrs []bool
	// Geometry reports that the update gives the geometry (nil: none);
	// else the feature keeps its own.
	Geometry bool
}

// EditResult says what ApplyEdits did: the ids the adds got (in the
// order of Edits.Adds), and the dataset's feature count after.
type EditResult struct {
	AddIDs       []int64
	FeatureCount int64
}

// MaxMatchedRows is the most features a dataset may have for
// ReplaceFeatures to match new rows with its old ones (keeping their ids):
// above it every new row gets a fresh id. Every store uses this bound, so
// that all give the same ids; it bounds the memory of a refetch.
const MaxMatchedRows = 4 << 20

// AppendAware is a FeatureSource that wants to know how many features a
// dataset holds when an append of its features starts: AddFeatures calls
// AppendingTo under the store's write lock on the dataset, before the first
// Next, so that no other write comes between the count and the append (a
// limit on a dataset's size holds under concurrent appends).
type AppendAware interface {
	AppendingTo(existing int64)
}
