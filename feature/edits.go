package feature

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mapcommons"
)

// CheckEdits checks a batch of edits before a store applies it, alike in
// every store: each added or updated feature as a created one is
// (SummaryBuilder.CheckValues, CheckFeature), each update naming an id,
// and no id named twice. Errors are EINVALID and name the item
// ("updates[2]: ..."). Whether the ids are the dataset's is the store's
// to check, through EditTargets.
// (The adds of e.AddSource are checked as AddsOf reads them.)
func CheckEdits(attrs []mapcommons.Attribute, e *mapcommons.Edits) error {
	sum := mapcommons.NewSummaryBuilder(attrs, false)
	check := func(list string, i int, f *mapcommons.Feature) error { return checkEdited(sum, list, i, f) }
	for i := range e.Adds {
		if err := check("adds", i, &e.Adds[i]); err != nil {
			return err
		}
	}
	named := map[int64]string{}
	name := func(list string, i int, id int64) error {
		if id <= 0 {
			return mapcommons.Errorf(mapcommons.EINVALID, "%s[%d]: %d is not a feature id (ids start from 1)", list, i, id)
		}
		if prev, ok := named[id]; ok {
			return mapcommons.Errorf(mapcommons.EINVALID, "%s[%d]: feature %d is named twice (first in %s)", list, i, id, prev)
		}
		named[id] = fmt.Sprintf("%s[%d]", list, i)
		return nil
	}
	for i := range e.Updates {
		if err := name("updates", i, e.Updates[i].ID); err != nil {
			return err
		}
		if err := check("updates", i, &e.Updates[i]); err != nil {
			return err
		}
	}
	for i, id := range e.Deletes {
		if err := name("deletes", i, id); err != nil {
			return err
		}
	}
	return nil
}

// MergePatches returns e with its partial updates (Edits.Patches) made
// whole, alike in every store: each merged with the feature it names as
// read returns it, the values and geometry its patch gives over the
// feature's (read's feature must stay valid until the edit is written).
// An update whose id read does not find (false) is left as it is, for the
// store's check of the ids to name. e itself is not changed. A store calls
// it under its write lock, before CheckEdits, so that what it merges with
// is what the edit replaces.
func MergePatches(e *mapcommons.Edits, nattrs int, read func(id int64) (*mapcommons.Feature, bool, error)) (*mapcommons.Edits, error) {
	if len(e.Patches) == 0 {
		return e, nil
	}
	out := *e
	out.Patches = nil
	out.Updates = slices.Clone(e.Updates)
	for i, p := range e.Patches {
		if p == nil || i >= len(out.Updates) {
			continue
		}
		u := &out.Updates[i]
		if u.ID <= 0 {
			continue // CheckEdits names it
		}
		cur, ok, err := read(u.ID)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		values := make([]any, nattrs)
		copy(values, cur.Values)
		for k, given := range p.Attrs {
			if given && k < nattrs {
				values[k] = nil
				if k < len(u.Values) {
					values[k] = u.Values[k]
				}
			}
		}
		geom := cur.Geometry
		if p.Geometry {
			geom = u.Geometry
		}
		*u = mapcommons.Feature{ID: u.ID, Values: values, Geometry: geom}
	}
	return &out, nil
}

// checkEdited checks feature i of list as a created one is.
func checkEdited(sum *mapcommons.SummaryBuilder, list string, i int, f *mapcommons.Feature) error {
	fail := func(err error) error {
		msg := mapcommons.ErrorMessage(err)
		msg = strings.TrimPrefix(msg, fmt.Sprintf("feature %d: ", i))
		return mapcommons.Errorf(mapcommons.EINVALID, "%s[%d]: %s", list, i, msg)
	}
	if err := sum.CheckValues(f.Values); err != nil {
		return fail(err)
	}
	if _, _, err := CheckFeature(sum, i, f); err != nil {
		return fail(err)
	}
	return nil
}

// NumAdds is the number of features e adds: e.Adds and e.AddSource's.
func NumAdds(e *mapcommons.Edits) int64 { return int64(len(e.Adds)) + e.AddCount }

// AddsOf returns the adds of e as one source of features without ids:
// e.Adds (which CheckEdits checks), then e.AddSource's, each checked as
// CheckEdits checks an add (named adds[i]) as it is read; EINVALID when
// e.AddSource gives another number than e.AddCount.
func AddsOf(attrs []mapcommons.Attribute, e *mapcommons.Edits) mapcommons.FeatureSource {
	return &addsSource{attrs: attrs, e: e, sum: mapcommons.NewSummaryBuilder(attrs, false)}
}

type addsSource struct {
	attrs []mapcommons.Attribute
	e     *mapcommons.Edits
	sum   *mapcommons.SummaryBuilder
	i     int
	f     mapcommons.Feature
}

func (s *addsSource) Attributes() []mapcommons.Attribute { return s.attrs }

func (s *addsSource) Next() (*mapcommons.Feature, error) {
	i := s.i
	if i < len(s.e.Adds) {
		s.i++
		s.f = mapcommons.Feature{Values: s.e.Adds[i].Values, Geometry: s.e.Adds[i].Geometry}
		return &s.f, nil
	}
	if s.e.AddSource == nil {
		return nil, mapcommons.EOF
	}
	f, err := s.e.AddSource.Next()
	if errors.Is(err, mapcommons.EOF) {
		if got := int64(i - len(s.e.Adds)); got != s.e.AddCount {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "adds: %d features where %d were counted", got, s.e.AddCount)
		}
		return nil, mapcommons.EOF
	} else if err != nil {
		return nil, err
	}
	s.i++
	if int64(i-len(s.e.Adds)) >= s.e.AddCount {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "adds: more features than the %d counted", s.e.AddCount)
	}
	if err := checkEdited(s.sum, "adds", i, f); err != nil {
		return nil, err
	}
	s.f = mapcommons.Feature{Values: f.Values, Geometry: f.Geometry}
	return &s.f, nil
}

// MissingFeature is the error of an edit naming an id the dataset does not
// hold: the same in every store, an EINVALID with ErrMissingFeature in its
// chain.
func MissingFeature(list string, i int, id int64) error {
	return missingFeature{mapcommons.Errorf(mapcommons.EINVALID, "%s[%d]: there is no feature %d in this dataset", list, i, id)}
}

// ErrMissingFeature is in the chain of MissingFeature's errors: a caller
// editing one feature tells a missing one (a 404) from a bad edit by it.
var ErrMissingFeature = errors.New("no such feature")

type missingFeature struct{ e *mapcommons.Error }

func (m missingFeature) Error() string   { return m.e.Error() }
func (m missingFeature) Unwrap() []error { return []error{m.e, ErrMissingFeature} }

// StaleVersion is the error of an edit made against version want of a
// dataset that is at version got (Edits.Version): the same in every store,
// an ECONFLICT with ErrStaleVersion in its chain.
func StaleVersion(want, got int64) error {
	return staleVersion{mapcommons.Errorf(mapcommons.ECONFLICT, "the dataset is at version %d, not %d: it changed since", got, want)}
}

// ErrStaleVersion is in the chain of StaleVersion's errors.
var ErrStaleVersion = errors.New("the dataset changed")

type staleVersion struct{ e *mapcommons.Error }

func (m staleVersion) Error() string   { return m.e.Error() }
func (m staleVersion) Unwrap() []error { return []error{m.e, ErrStaleVersion} }

// CheckVersion is the check of Edits.Version against the version of the
// dataset as the store's write lock holds it.
func CheckVersion(e *mapcommons.Edits, version int64) error {
	if e.Version > 0 && e.Version != version {
		return StaleVersion(e.Version, version)
	}
	return nil
}

// TooManyFeatures is the error of an edit that would leave a dataset with
// more than max features.
func TooManyFeatures(max int64) error {
	return mapcommons.Errorf(mapcommons.ETOOLARGE, "max-features: a dataset may hold at most %d features on this server", max)
}
