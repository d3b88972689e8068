package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"mapcommons"
)

func testMaps(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	owner := MustCreateUser(t, s, "cartographer", false)
	desc := ""
	weight := 2.5
	color := 0xFF8800
	m := &mapcommons.Map{
		OwnerID: owner.ID, Title: "Counties", Basemap: "Acetate", Description: &desc,
		Tags: []string{"nc", "counties"}, Extent: &[4]float64{-84.5, 33.5, -75, 37}, Projection: mapcommons.ProjectionMercator,
		Layers: []mapcommons.Layer{{
			Source: "finder:7", Title: "NC", Opacity: 0.5, Visible: true,
			Styles: mapcommons.Styles{
				Type:    mapcommons.LayerChoropleth,
				Density: mapcommons.DensityHeatmap,
				Fill:    mapcommons.Fill{Classing: mapcommons.Classing{SelectedAttribute: "AREA", ClassificationType: "Quantile", Categories: 3}, Colors: []int{1, 2, 3}, Opacity: 0.75},
				Stroke:  mapcommons.Stroke{Color: &color, Alpha: 0.75, Weight: &weight},
				Icon:    mapcommons.Icon{Size: 1},
				Slider:  &mapcommons.Slider{Now: true},
				Timeline: &mapcommons.Timeline{
					Begin: &mapcommons.TimeMark{Millis: -86400000}, Period: new(int64),
				},
			},
		}},
		Permissions: []mapcommons.Permission{{Group: mapcommons.GroupEveryone, View: true}},
	}
	if err := s.Maps.CreateMap(ctx, m); err != nil {
		t.Fatal(err)
	}
	if m.ID == 0 || m.CreatedAt.IsZero() || !m.CreatedAt.Equal(m.UpdatedAt) {
		t.Fatalf("create did not set id and times: %+v", m)
	}
	got, err := s.Maps.FindMapByID(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != "cartographer" {
		t.Fatalf("owner %q", got.Owner)
	}
	got.Owner = ""
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
	}

	t.Run("NullsStayNull", func(t *testing.T) {
		bare := &mapcommons.Map{OwnerID: owner.ID, Title: "t", Basemap: "b", Projection: mapcommons.ProjectionLonLat}
		if err := s.Maps.CreateMap(ctx, bare); err != nil {
			t.Fatal(err)
		}
		got, err := s.Maps.FindMapByID(ctx, bare.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != nil || got.Extent != nil || got.Layers == nil || len(got.Layers) != 0 || got.Tags == nil || got.Permissions == nil {
			t.Fatalf("unset fields: %+v", got)
		}
	})
	t.Run("Update", func(t *testing.T) {
		up, err := s.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
			m.Title = "Renamed"
			m.Layers = []mapcommons.Layer{{Source: "url:http://example.com/a.kml", Visible: false, Opacity: 1}}
			m.Description = nil
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.Maps.FindMapByID(ctx, m.ID)
		if got.Title != "Renamed" || len(got.Layers) != 1 || got.Layers[0].Source != "url:http://example.com/a.kml" || got.Description != nil {
			t.Fatalf("after update: %+v", got)
		}
		if up.Title != "Renamed" || !got.UpdatedAt.Equal(up.UpdatedAt) {
			t.Fatalf("update returned %+v", up)
		}
	})
	t.Run("UpdateAbortedByFn", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := s.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
			m.Title = "Lost"
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err %v", err)
		}
		if got, _ := s.Maps.FindMapByID(ctx, m.ID); got.Title == "Lost" {
			t.Fatal("an aborted update was stored")
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := s.Maps.FindMapByID(ctx, 999)
		code(t, err, mapcommons.ENOTFOUND)
		_, err = s.Maps.UpdateMap(ctx, 999, func(*mapcommons.Map) error { return nil })
		code(t, err, mapcommons.ENOTFOUND)
		code(t, s.Maps.DeleteMap(ctx, 999), mapcommons.ENOTFOUND)
	})
	t.Run("Showing", func(t *testing.T) {
		// Three maps: one of dataset 17, one of 17 and 18, one of 18
		// and a url: layer.
		one := &mapcommons.Map{OwnerID: owner.ID, Title: "one", Basemap: "b", Projection: mapcommons.ProjectionMercator,
			Layers: []mapcommons.Layer{{Source: "finder:17", Visible: true}}}
		both := &mapcommons.Map{OwnerID: owner.ID, Title: "both", Basemap: "b", Projection: mapcommons.ProjectionMercator,
			Layers: []mapcommons.Layer{{Source: "finder:18", Visible: true}, {Source: "finder:17", Visible: true}}}
		other := &mapcommons.Map{OwnerID: owner.ID, Title: "other", Basemap: "b", Projection: mapcommons.ProjectionMercator,
			Layers: []mapcommons.Layer{{Source: "url:http://example.com/f.geojson", Visible: true}, {Source: "finder:18", Visible: true}}}
		for _, x := range []*mapcommons.Map{one, both, other} {
			if err := s.Maps.CreateMap(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		showing := func(ds int64, limit int, want ...int64) {
			t.Helper()
			got, err := s.Maps.MapsShowing(ctx, ds, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Errorf("maps showing dataset %d (at most %d): %v, want %v", ds, limit, got, want)
			}
		}
		showing(17, 10, one.ID, both.ID)
		showing(18, 10, both.ID, other.ID)
		showing(17, 1, one.ID)
		showing(99, 10)
		showing(17, 0)
		if _, err := s.Maps.UpdateMap(ctx, both.ID, func(x *mapcommons.Map) error {
			x.Layers = x.Layers[:1] // finder:18 alone
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		showing(17, 10, one.ID)
		if err := s.Maps.DeleteMap(ctx, other.ID); err != nil {
			t.Fatal(err)
		}
		showing(18, 10, both.ID)
	})
	t.Run("OwnerGone", func(t *testing.T) {
		if err := s.Users.DeleteUser(ctx, owner.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.Maps.FindMapByID(ctx, m.ID)
		if err != nil || got.OwnerID != 0 || got.Owner != "" {
			t.Fatalf("after the owner left: %+v, %v", got, err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		if err := s.Maps.DeleteMap(ctx, m.ID); err != nil {
			t.Fatal(err)
		}
		_, err := s.Maps.FindMapByID(ctx, m.ID)
		code(t, err, mapcommons.ENOTFOUND)
	})
}
