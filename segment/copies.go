// copies.go: segments as another store's local copies of its datasets
// (mapcommons.LocalCopies, for the PostgreSQL store's mirror), so that the
// store reads them by the embedded engine's code without importing it.
package segment

import (
	"context"

	"mapcommons"
)

// Copies makes and opens segment files as local copies of datasets.
type Copies struct{}

var _ mapcommons.LocalCopies = Copies{}

// NewCopy starts a segment of features with attrs, whose next id after
// them is nextID, spooling to dir.
func (Copies) NewCopy(dir string, attrs []mapcommons.Attribute, nextID int64) (mapcommons.CopyWriter, error) {
	w, err := NewWriter(dir, attrs)
	if err != nil {
		return nil, err
	}
	w.SetNextID(nextID)
	return &copyWriter{w: w}, nil
}

// OpenCopy opens a finished copy for reading.
func (Copies) OpenCopy(path string) (mapcommons.LocalCopy, error) {
	seg, err := Open(path)
	if err != nil {
		return nil, err
	}
	v, err := NewView(seg, nil, nil)
	if err != nil {
		seg.Close()
		return nil, err
	}
	return &localCopy{seg: seg, view: v}, nil
}

// copyWriter writes a copy: its features in the order of their ids.
type copyWriter struct{ w *Writer }

// Add adds the next feature.
func (c *copyWriter) Add(f *mapcommons.Feature) error { return c.w.Add(f) }

// Finish writes the copy to path.
func (c *copyWriter) Finish(path string) error {
	_, err := c.w.Finish(path)
	return err
}

// Abort drops an unfinished copy and its spooled files.
func (c *copyWriter) Abort() { c.w.Abort() }

// localCopy is an opened copy: a segment and its view.
type localCopy struct {
	seg  *Segment
	view *View
}

// Scan reads the features q selects, as View.Scan.
func (c *localCopy) Scan(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	return c.view.Scan(ctx, q, fn)
}

// Groups groups the features q selects, as View.Groups.
func (c *localCopy) Groups(ctx context.Context, q *mapcommons.FeatureQuery) ([]mapcommons.Group, error) {
	return c.view.Groups(ctx, q)
}

// Close unmaps the copy; its file stays.
func (c *localCopy) Close() error { return c.seg.Close() }
