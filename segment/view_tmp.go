package segment

import (
	"context"
	"os"
	"path/filepath"

	"mapcommons"
)

func (v *View) tmpCompact() (*Segment, func(), error) {
	dir, err := os.MkdirTemp("", "viewtmp")
	if err != nil {
		return nil, nil, err
	}
	w, err := NewWriter(dir, v.Attributes())
	if err != nil {
		return nil, nil, err
	}
	w.SetNextID(v.NextID())
	f := &mapcommons.Feature{}
	v.Each(func(s *Segment, p int) bool {
		s.Read(p, f)
		err = w.Add(f)
		return err == nil
	})
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.Finish(filepath.Join(dir, "x.seg")); err != nil {
		return nil, nil, err
	}
	s, err := Open(filepath.Join(dir, "x.seg"))
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close(); os.RemoveAll(dir) }, nil
}

func (v *View) Query(ctx context.Context, q *mapcommons.FeatureQuery, fn func(*mapcommons.Feature) error) error {
	if !v.Pending() {
		return v.base.Query(ctx, q, fn)
	}
	s, done, err := v.tmpCompact()
	if err != nil {
		return err
	}
	defer done()
	return s.Query(ctx, q, fn)
}

func (v *View) Groups(ctx context.Context, q *mapcommons.FeatureQuery) ([]mapcommons.Group, error) {
	if !v.Pending() {
		return v.base.Groups(ctx, q)
	}
	s, done, err := v.tmpCompact()
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Groups(ctx, q)
}
