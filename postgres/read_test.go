package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
	"mapcommons/storetest"
)

// TestReadHints checks the one-round-trip reads: a server answers with
// the row an earlier read found while it holds, and every write through
// another server on the same database (an append in place, a deletion, a
// replace, other kinds of geometry, the dataset gone) is seen by the
// next read all the same.
func TestReadHints(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := pgtest.OpenURL(t, url), pgtest.OpenURL(t, url)
	sa, sb := a.Services(), b.Services()
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := sb.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(5)); err != nil {
		t.Fatal(err)
	}
	// Queries whose plan depends on the row: a descending page (the
	// count), a bbox (points only, or not), all.
	queries := []*mapcommons.FeatureQuery{
		{Limit: 2, Offset: 1, Descending: true},
		{BBox: &mapcommons.BBox{W: -1, S: -3, E: 3, N: 1}, Limit: -1},
		{Limit: -1},
	}
	scan := func(s mapcommons.Services) string {
		t.Helper()
		var out []string
		for _, q := range queries {
			err := s.Features.ScanFeatures(ctx, ds.ID, q, func(f *mapcommons.Feature) error {
				out = append(out, fmt.Sprintf("%d:%d:%x", f.Position, f.ID, f.Geometry))
				return nil
			})
			if err != nil {
				return "error: " + err.Error()
			}
			out = append(out, "|")
		}
		return fmt.Sprint(out)
	}
	read := func() string { return scan(sa) }
	// The truth: a server that never read the dataset before (no hint).
	want := func() string { return scan(pgtest.OpenURL(t, url).Services()) }
	read()
	before := postgres.HintedReads(a)
	if got, w := read(), want(); got != w {
		t.Fatalf("hinted read %s, want %s", got, w)
	}
	if postgres.HintedReads(a) != before+int64(len(queries)) {
		t.Fatalf("a second read of an unchanged dataset did not use the hint")
	}
	polygon := storetest.SampleSource(1)
	polygon.Features[0].Geometry = wkb.AppendPolygon(nil, [][]float64{{0, 0, 1, 0, 1, 1, 0, 0}})
	for _, w := range []struct {
		name  string
		write func() error
	}{
		{"append", func() error { _, err := sb.Features.AddFeatures(ctx, ds.ID, storetest.SampleSource(3)); return err }},
		{"append of a polygon", func() error { _, err := sb.Features.AddFeatures(ctx, ds.ID, polygon); return err }},
		{"delete", func() error { return sb.Features.DeleteFeatures(ctx, ds.ID, []int64{0, 2}) }},
		{"replace", func() error { _, err := sb.Datasets.ReplaceFeatures(ctx, ds.ID, storetest.SampleSource(4)); return err }},
		{"metadata only", func() error {
			title := "t"
			_, err := sb.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title})
			return err
		}},
		{"dataset deleted", func() error { return sb.Datasets.DeleteDataset(ctx, ds.ID) }},
	} {
		read() // the hint is this read's row
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if got, want := read(), want(); got != want {
			t.Errorf("after the other server's %s, a read gave %s, want %s", w.name, got, want)
		}
	}
}

// TestDatasetJSONCopies: the decoded JSON columns a read reuses are
// copies, so that a caller changing the dataset it got changes nothing
// for the next one; a change through another server is decoded afresh.
func TestDatasetJSONCopies(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, b := pgtest.OpenURL(t, url).Services(), pgtest.OpenURL(t, url).Services()
	ds := &mapcommons.Dataset{Type: "csv", Permissions: []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}}}
	if err := a.Datasets.CreateDataset(ctx, ds, storetest.SampleSource(5)); err != nil {
		t.Fatal(err)
	}
	first, err := a.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Attributes) == 0 || len(first.Stats) == 0 || len(first.Permissions) != 1 {
		t.Fatalf("sample dataset: %d attributes, %d stats, %d permissions", len(first.Attributes), len(first.Stats), len(first.Permissions))
	}
	name := first.Attributes[0].Name
	first.Attributes[0].Name = "changed"
	for k := range first.Stats {
		first.Stats[k] = mapcommons.Stats{Min: -12345}
	}
	first.Permissions[0].Edit = true
	again, err := a.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Attributes[0].Name != name || again.Permissions[0].Edit {
		t.Fatalf("a change to a read dataset reached the next read: %+v %+v", again.Attributes[0], again.Permissions[0])
	}
	for k, s := range again.Stats {
		if s.Min == -12345 {
			t.Fatalf("a change to a read dataset's stats reached the next read: %s %+v", k, s)
		}
	}
	if _, err := b.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &[]mapcommons.Permission{}}); err != nil {
		t.Fatal(err)
	}
	third, err := a.Datasets.FindDatasetByID(ctx, ds.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(third.Permissions) != 0 {
		t.Fatalf("permissions changed through another server, read %+v", third.Permissions)
	}
}
