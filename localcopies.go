// localcopies.go: local copies of datasets' features, which a store that
// keeps its data elsewhere reads from its own disk (the PostgreSQL store's
// mirror); the embedded engine makes them (segment.Copies), so that such
// a store reads them without importing that engine.
package mapcommons

import "context"

// LocalCopies makes and opens the files of local copies.
type LocalCopies interface {
	// NewCopy starts a copy of features with attrs, whose next id after
	// them is nextID, spooling to dir.
	NewCopy(dir string, attrs []Attribute, nextID int64) (CopyWriter, error)
	// OpenCopy opens a finished copy for reading.
	OpenCopy(path string) (LocalCopy, error)
}

// CopyWriter writes a local copy: its features in the order of their ids.
type CopyWriter interface {
	Add(f *Feature) error
	// Finish writes the copy to path.
	Finish(path string) error
	// Abort drops an unfinished copy and its spooled files.
	Abort()
}

// LocalCopy is an opened copy: it answers reads of its features as a
// FeatureService does those of a dataset.
type LocalCopy interface {
	Scan(ctx context.Context, q *FeatureQuery, fn func(*Feature) error) error
	Groups(ctx context.Context, q *FeatureQuery) ([]Group, error)
	// Close unmaps the copy; its file stays.
	Close() error
}
