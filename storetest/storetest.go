// Package storetest is the contract every mapcommons store must pass:
// storetest.Run(t, open) runs it against a fresh store from open. It
// holds every store to the embedded store's results, with one allowance:
// a search service that implements RelevanceApprox may order a relevance
// sort of words its own way (the same results, in any order).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Opener returns the services of a new, empty store, closed by tb.Cleanup.
type Opener func(tb testing.TB) mapcommons.Services

// Run runs the whole contract. A part whose services the store does not
// give (nil in its Services) is skipped, saying which: a store built a
// service at a time runs the contract from its first one.
func Run(t *testing.T, open Opener) {
	// One store tells which services the store gives, so that a part
	// without them is skipped without opening stores for it.
	probe := open(t)
	part := func(name string, fn func(*testing.T, Opener), needs ...string) {
		t.Run(name, func(t *testing.T) {
			Need(t, probe, needs...)
			fn(t, Needing(open, needs...))
		})
	}
	part("Users", testUsers, "Users")
	part("FirstAdmin", testFirstAdmin, "Users")
	part("Datasets", testDatasets, "Users", "Datasets", "Features")
	part("Features", testFeatures, "Datasets", "Features")
	part("Feeds", testFeeds, "Datasets", "Features")
	part("FeedClaims", testFeedClaims, "Datasets", "Features", "FeedClaims")
	part("FeatureIDs", testFeatureIDs, "Datasets", "Features")
	part("Edits", testEdits, "Datasets", "Features")
	part("EditPatches", testEditPatches, "Datasets", "Features")
	part("EditVersion", testEditVersion, "Datasets", "Features")
	part("Maps", testMaps, "Users", "Maps")
	part("Search", testSearch, "Users", "Groups", "Datasets", "Features", "Maps", "Search")
	part("Groups", testGroups, "Users", "Groups")
	part("LoginTrust", testLoginTrust, "Users", "Trust")
	part("Sessions", testSessions, "Users", "Sessions")
	part("LoginLimits", testLoginLimits, "LoginLimits")
	part("SecondFactors", testSecondFactors, "Users", "SecondFactors")
	part("SignInLinks", testSignInLinks, "Users", "SignInLinks")
	part("QueryOracle", testQueryOracle, "Datasets", "Features")
	part("LongLike", testLongLike, "Datasets", "Features")
	part("SpatialFunctions", testSpatialFunctions, "Datasets", "Features")
	part("TemporalFunctions", testTemporalFunctions, "Datasets", "Features")
	part("FractionalTimes", testFractionalTimes, "Datasets", "Features")
	part("CaseAccentInsensitive", testCaseAccentInsensitive, "Datasets", "Features")
	part("PropertyPropertyArithmetic", testPropertyPropertyArithmetic, "Datasets", "Features")
	part("Errors", testErrors, "Users", "Datasets", "Features")
}

// RunFeatures runs the parts of the contract about datasets' features:
// for a store's second way of answering the reads of features (the
// PostgreSQL store's local copies) or of making edits, which must answer
// as the first. Given names, it runs only the parts so named.
func RunFeatures(t *testing.T, open Opener, names ...string) {
	for _, p := range []struct {
		name string
		fn   func(*testing.T, Opener)
	}{
		{"Datasets", testDatasets}, {"Features", testFeatures}, {"Feeds", testFeeds},
		{"FeatureIDs", testFeatureIDs}, {"Edits", testEdits}, {"EditPatches", testEditPatches},
		{"EditVersion", testEditVersion},
		{"QueryOracle", testQueryOracle}, {"LongLike", testLongLike}, {"SpatialFunctions", testSpatialFunctions},
		{"TemporalFunctions", testTemporalFunctions}, {"FractionalTimes", testFractionalTimes}, {"CaseAccentInsensitive", testCaseAccentInsensitive},
		{"PropertyPropertyArithmetic", testPropertyPropertyArithmetic},
	} {
		if len(names) == 0 || slices.Contains(names, p.name) {
			t.Run(p.name, func(t *testing.T) { p.fn(t, open) })
		}
	}
}

// Needing wraps open so that the stores it opens skip their test unless
// they give every service named (fields of mapcommons.Services).
func Needing(open Opener, needs ...string) Opener {
	return func(tb testing.TB) mapcommons.Services {
		tb.Helper()
		s := open(tb)
		Need(tb, s, needs...)
		return s
	}
}

// Need skips tb unless s gives every service named (fields of
// mapcommons.Services, such as "Datasets").
func Need(tb testing.TB, s mapcommons.Services, needs ...string) {
	tb.Helper()
	v := reflect.ValueOf(s)
	for _, name := range needs {
		f := v.FieldByName(name)
		if !f.IsValid() {
			tb.Fatalf("storetest: mapcommons.Services has no field %s", name)
		}
		if f.IsNil() {
			tb.Skipf("the store gives no %s service yet (Services.%s is nil): skipped", name, name)
		}
	}
}

func code(t *testing.T, err error, want string) {
	t.Helper()
	if got := mapcommons.ErrorCode(err); got != want {
		t.Fatalf("error code = %q (%v), want %q", got, err, want)
	}
}

// MustCreateUser creates a user with the given login.
func MustCreateUser(tb testing.TB, s mapcommons.Services, login string, admin bool) *mapcommons.User {
	tb.Helper()
	u := &mapcommons.User{Login: login, Email: login + "@example.com", Fullname: "Full " + login, PasswordHash: "x", Admin: admin}
	if err := s.Users.CreateUser(context.Background(), u); err != nil {
		tb.Fatal(err)
	}
	return u
}

func testUsers(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		u := MustCreateUser(t, s, "Alice", false)
		if u.ID == 0 || u.CreatedAt.IsZero() {
			t.Fatalf("id/time not set: %+v", u)
		}
		byID, err := s.Users.FindUserByID(ctx, u.ID)
		if err != nil || byID.Login != "Alice" || byID.Email != "Alice@example.com" || byID.Fullname != "Full Alice" {
			t.Fatalf("FindUserByID = %+v, %v", byID, err)
		}
		byLogin, err := s.Users.FindUserByLogin(ctx, "alice")
		if err != nil || byLogin.ID != u.ID {
			t.Fatalf("FindUserByLogin is not case-insensitive: %+v, %v", byLogin, err)
		}
		email, admin := "new@example.com", true
		upd, err := s.Users.UpdateUser(ctx, u.ID, mapcommons.UserUpdate{Email: &email, Admin: &admin})
		if err != nil || upd.Email != email || !upd.Admin || upd.Fullname != "Full Alice" {
			t.Fatalf("UpdateUser = %+v, %v", upd, err)
		}
		if err := s.Users.DeleteUser(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		_, err = s.Users.FindUserByID(ctx, u.ID)
		code(t, err, mapcommons.ENOTFOUND)
	})
	t.Run("ErrConflict", func(t *testing.T) {
		s := open(t)
		MustCreateUser(t, s, "bob", false)
		err := s.Users.CreateUser(ctx, &mapcommons.User{Login: "BOB", Email: "b@example.com", PasswordHash: "x"})
		code(t, err, mapcommons.ECONFLICT)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := open(t)
		_, err := s.Users.FindUserByID(ctx, 999)
		code(t, err, mapcommons.ENOTFOUND)
		_, err = s.Users.FindUserByLogin(ctx, "nobody")
		code(t, err, mapcommons.ENOTFOUND)
		x := "x"
		_, err = s.Users.UpdateUser(ctx, 999, mapcommons.UserUpdate{Email: &x})
		code(t, err, mapcommons.ENOTFOUND)
		code(t, s.Users.DeleteUser(ctx, 999), mapcommons.ENOTFOUND)
	})
}

// testFirstAdmin: CreateFirstAdmin makes an administrator while there is
// none, and refuses once there is one (made by it or otherwise), and of
// several racing, exactly one wins.
func testFirstAdmin(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("Once", func(t *testing.T) {
		s := open(t)
		if has, err := s.Users.HasAdmin(ctx); err != nil || has {
			t.Fatalf("HasAdmin of an empty store = %v, %v", has, err)
		}
		MustCreateUser(t, s, "plain", false)
		if has, err := s.Users.HasAdmin(ctx); err != nil || has {
			t.Fatalf("HasAdmin with a user who is no administrator = %v, %v", has, err)
		}
		code(t, s.Users.CreateFirstAdmin(ctx, &mapcommons.User{Login: "PLAIN", Email: "p@example.com", PasswordHash: "x"}), mapcommons.ECONFLICT)
		u := &mapcommons.User{Login: "first", Email: "first@example.com", PasswordHash: "x"}
		if err := s.Users.CreateFirstAdmin(ctx, u); err != nil || u.ID == 0 || !u.Admin || u.CreatedAt.IsZero() {
			t.Fatalf("CreateFirstAdmin = %+v, %v", u, err)
		}
		if got, err := s.Users.FindUserByLogin(ctx, "first"); err != nil || !got.Admin || got.Email != "first@example.com" {
			t.Fatalf("the first administrator = %+v, %v", got, err)
		}
		if has, err := s.Users.HasAdmin(ctx); err != nil || !has {
			t.Fatalf("HasAdmin after = %v, %v", has, err)
		}
		err := s.Users.CreateFirstAdmin(ctx, &mapcommons.User{Login: "second", Email: "second@example.com", PasswordHash: "x"})
		if !errors.Is(err, mapcommons.ErrAdminExists) {
			t.Fatalf("a second first administrator: %v, want ErrAdminExists", err)
		}
		if _, err := s.Users.FindUserByLogin(ctx, "second"); mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
			t.Fatalf("the refused second administrator was made: %v", err)
		}
	})
	t.Run("AnyAdmin", func(t *testing.T) {
		s := open(t)
		MustCreateUser(t, s, "boss", true)
		err := s.Users.CreateFirstAdmin(ctx, &mapcommons.User{Login: "first", Email: "first@example.com", PasswordHash: "x"})
		if !errors.Is(err, mapcommons.ErrAdminExists) {
			t.Fatalf("CreateFirstAdmin with an administrator there: %v", err)
		}
	})
	t.Run("Race", func(t *testing.T) {
		s := open(t)
		const n = 8
		errs := make([]error, n)
		atOnce(t, n, func(i int) error {
			errs[i] = s.Users.CreateFirstAdmin(ctx, &mapcommons.User{Login: fmt.Sprintf("racer%d", i), Email: fmt.Sprintf("r%d@example.com", i), PasswordHash: "x"})
			return nil
		})
		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, mapcommons.ErrAdminExists):
				t.Fatalf("racer %d: %v", i, err)
			}
		}
		if won != 1 {
			t.Fatalf("%d of %d racers made the first administrator, want 1", won, n)
		}
	})
}

// SliceSource is a FeatureSource over features held in memory; Err, when
// set, is returned after the features instead of EOF.
type SliceSource struct {
	Attrs    []mapcommons.Attribute
	Features []mapcommons.Feature
	Err      error
	i        int
}

// Attributes implements mapcommons.FeatureSource.
func (s *SliceSource) Attributes() []mapcommons.Attribute { return s.Attrs }

// Next implements mapcommons.FeatureSource.
func (s *SliceSource) Next() (*mapcommons.Feature, error) {
	if s.i >= len(s.Features) {
		if s.Err != nil {
			return nil, s.Err
		}
		return nil, mapcommons.EOF
	}
	s.i++
	return &s.Features[s.i-1], nil
}

// SampleSource returns n features with an integer, a float, a string and a
// boolean attribute; feature i is the point (i, -i/2) with values i, i*1.5,
// "name<i>", i%2==0. Feature 1 has nulls.
func SampleSource(n int) *SliceSource {
	attrs := []mapcommons.Attribute{
		{Name: "n", Type: mapcommons.AttrInteger},
		{Name: "x", Type: mapcommons.AttrFloat},
		{Name: "label", Type: mapcommons.AttrString},
		{Name: "flag", Type: mapcommons.AttrBoolean},
	}
	if err := mapcommons.NormalizeAttributes(attrs); err != nil {
		panic(err)
	}
	src := &SliceSource{Attrs: attrs}
	for i := 0; i < n; i++ {
		f := mapcommons.Feature{
			Values:   []any{int64(i), float64(i) * 1.5, "name" + string(rune('a'+i%26)), i%2 == 0},
			Geometry: wkb.AppendPoint(nil, float64(i), -float64(i)/2),
		}
		if i == 1 {
			f.Values = []any{nil, nil, nil, nil}
		}
		src.Features = append(src.Features, f)
	}
	return src
}

func testDatasets(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		owner := MustCreateUser(t, s, "owner", false)
		ds := &mapcommons.Dataset{OwnerID: owner.ID, Type: "csv", CRS: "GCS_WGS_1984", PRJ: `GEOGCS["GCS_WGS_1984"]`,
			Metadata: mapcommons.Metadata{Title: "Sample", Tags: "a, b"}}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(5)); err != nil {
			t.Fatal(err)
		}
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Title != "Sample" || got.Tags != "a, b" || got.Owner != "owner" || got.OwnerID != owner.ID ||
			got.FeatureCount != 5 || got.State != mapcommons.StateComplete || got.DataType != "Dataset" || got.Type != "csv" {
			t.Fatalf("dataset = %+v", got)
		}
		if got.Extent == nil || *got.Extent != (wkb.Rect{MinX: 0, MinY: -2, MaxX: 4, MaxY: 0}) {
			t.Fatalf("extent = %+v", got.Extent)
		}
		if got.CRS != "GCS_WGS_1984" || got.PRJ != `GEOGCS["GCS_WGS_1984"]` || !got.OnlyPoints() {
			t.Fatalf("crs %q prj %q mask %b", got.CRS, got.PRJ, got.GeometryMask)
		}
		if !reflect.DeepEqual(got.GeometryTypes, []string{"point"}) {
			t.Fatalf("geometry types = %v", got.GeometryTypes)
		}
		if len(got.Attributes) != 4 || got.Attributes[2].Name != "label" || got.Attributes[2].Type != mapcommons.AttrString {
			t.Fatalf("attributes = %+v", got.Attributes)
		}
		// n over features 0,2,3,4 (feature 1 is null): mean 2.25, median 2.5.
		st, ok := got.Stats["n"]
		if !ok || st.Min != 0 || st.Max != 4 || st.Mean != 2.25 || st.Median != 2.5 {
			t.Fatalf("stats n = %+v (%v)", st, got.Stats)
		}
		if want := (2.25*2.25 + 0.25*0.25 + 0.75*0.75 + 1.75*1.75) / 4; math.Abs(st.Variance-want) > 1e-12 || math.Abs(st.Stdev-math.Sqrt(want)) > 1e-12 {
			t.Fatalf("variance %v stdev %v, want %v", st.Variance, st.Stdev, want)
		}
		if _, ok := got.Stats["label"]; ok {
			t.Fatal("stats for a string column")
		}

		title := "Renamed"
		upd, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title})
		if err != nil || upd.Title != "Renamed" || upd.Tags != "a, b" || upd.FeatureCount != 5 || upd.Version <= got.Version {
			t.Fatalf("update = %+v, %v", upd, err)
		}
		list, total, err := s.Datasets.FindDatasets(ctx, mapcommons.DatasetFilter{OwnerID: &owner.ID})
		if err != nil || total != 1 || len(list) != 1 || list[0].ID != ds.ID {
			t.Fatalf("FindDatasets = %v, %d, %v", list, total, err)
		}
		if err := s.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
			t.Fatal(err)
		}
		_, err = s.Datasets.FindDatasetByID(ctx, ds.ID)
		code(t, err, mapcommons.ENOTFOUND)
		err = s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(*mapcommons.Feature) error { return nil })
		code(t, err, mapcommons.ENOTFOUND)
	})
	t.Run("OwnerDeleted", func(t *testing.T) {
		s := open(t)
		owner := MustCreateUser(t, s, "gone", false)
		ds := &mapcommons.Dataset{OwnerID: owner.ID, Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(1)); err != nil {
			t.Fatal(err)
		}
		if err := s.Users.DeleteUser(ctx, owner.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil || got.OwnerID != 0 || got.Owner != "" {
			t.Fatalf("after owner deletion: %+v, %v", got, err)
		}
	})
	t.Run("ErrSourceFailsLeavesNothing", func(t *testing.T) {
		s := open(t)
		src := SampleSource(1000)
		src.Err = mapcommons.Errorf(mapcommons.EINVALID, "row 1001: broken")
		err := s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv"}, src)
		code(t, err, mapcommons.EINVALID)
		_, total, err := s.Datasets.FindDatasets(ctx, mapcommons.DatasetFilter{})
		if err != nil || total != 0 {
			t.Fatalf("a failed create left %d datasets (%v)", total, err)
		}
		ds := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(2)); err != nil {
			t.Fatal(err)
		}
		if ds.FeatureCount != 2 {
			t.Fatalf("count = %d", ds.FeatureCount)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := open(t)
		_, err := s.Datasets.FindDatasetByID(ctx, 42)
		code(t, err, mapcommons.ENOTFOUND)
		x := "x"
		_, err = s.Datasets.UpdateDataset(ctx, 42, mapcommons.MetadataUpdate{Title: &x})
		code(t, err, mapcommons.ENOTFOUND)
		code(t, s.Datasets.DeleteDataset(ctx, 42), mapcommons.ENOTFOUND)
	})
	t.Run("NoGeometry", func(t *testing.T) {
		s := open(t)
		src := SampleSource(3)
		for i := range src.Features {
			src.Features[i].Geometry = nil
		}
		ds := &mapcommons.Dataset{Type: "shp"}
		if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
			t.Fatal(err)
		}
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil || got.Extent != nil || len(got.GeometryTypes) != 0 || got.FeatureCount != 3 {
			t.Fatalf("dataset without geometry = %+v, %v", got, err)
		}
	})
}

func testFeatures(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	src := SampleSource(50)
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	scan := func(q mapcommons.FeatureQuery) []mapcommons.Feature {
		t.Helper()
		var out []mapcommons.Feature
		err := s.Features.ScanFeatures(ctx, ds.ID, &q, func(f *mapcommons.Feature) error {
			out = append(out, mapcommons.Feature{Position: f.Position, Values: append([]any(nil), f.Values...),
				Geometry: append([]byte(nil), f.Geometry...)})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("OrderAndValues", func(t *testing.T) {
		all := scan(mapcommons.FeatureQuery{Limit: -1})
		if len(all) != 50 {
			t.Fatalf("%d features", len(all))
		}
		for i, f := range all {
			if f.Position != int64(i) {
				t.Fatalf("feature %d has position %d", i, f.Position)
			}
			want := src.Features[i]
			if !reflect.DeepEqual(f.Values, want.Values) || !reflect.DeepEqual(f.Geometry, want.Geometry) {
				t.Fatalf("feature %d = %#v %x, want %#v %x", i, f.Values, f.Geometry, want.Values, want.Geometry)
			}
		}
	})
	t.Run("Paging", func(t *testing.T) {
		page := scan(mapcommons.FeatureQuery{Offset: 45, Limit: 30})
		if len(page) != 5 || page[0].Position != 45 {
			t.Fatalf("page = %d features from %d", len(page), page[0].Position)
		}
		if got := scan(mapcommons.FeatureQuery{Offset: 50, Limit: 30}); len(got) != 0 {
			t.Fatalf("past the end: %d features", len(got))
		}
		if got := scan(mapcommons.FeatureQuery{Offset: 3, Limit: 0}); len(got) != 0 {
			t.Fatalf("limit 0: %d features", len(got))
		}
	})
	t.Run("ErrStopsScan", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(*mapcommons.Feature) error {
			n++
			return stop
		})
		if !errors.Is(err, stop) || n != 1 {
			t.Fatalf("err = %v after %d calls", err, n)
		}
	})
	t.Run("Query", func(t *testing.T) {
		// Points (i, -i/2): the box 10..20 × -8..-5 holds 10..16; n ≥ 12 leaves 12..16.
		got := scan(mapcommons.FeatureQuery{Limit: -1, BBox: &mapcommons.BBox{W: 10, S: -8, E: 20, N: -5},
			Filters: []mapcommons.Filter{{Attr: "n", Op: mapcommons.OpMin, Values: []string{"12"}}}})
		if len(got) != 5 || got[0].Position != 12 || got[4].Position != 16 {
			t.Fatalf("bbox and filter: %d features", len(got))
		}
		got = scan(mapcommons.FeatureQuery{Limit: 3, Sort: "x", Descending: true})
		if len(got) != 3 || got[0].Position != 49 || got[2].Position != 47 {
			t.Fatalf("sort by x descending: %v", got)
		}
		_, err := s.Features.GroupFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{GroupBy: []string{"nope"}})
		code(t, err, mapcommons.EINVALID)
		groups, err := s.Features.GroupFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1, GroupBy: []string{"flag"},
			Aggregates: []mapcommons.Aggregate{{Name: "n", Calc: mapcommons.CalcMax}}})
		if err != nil || len(groups) != 3 || groups[0].Values[0] != false || groups[0].Count != 24 || groups[1].Count != 25 ||
			groups[2].Values[0] != nil || groups[2].Count != 1 || groups[1].Aggregates[0] != int64(48) {
			t.Fatalf("groups %+v %v", groups, err)
		}
	})
	t.Run("AddAndDelete", func(t *testing.T) {
		more := SampleSource(53)
		more.Features = more.Features[50:]
		before, _ := s.Datasets.FindDatasetByID(ctx, ds.ID)
		added, err := s.Features.AddFeatures(ctx, ds.ID, more)
		if err != nil || added != 3 {
			t.Fatalf("AddFeatures = %d, %v", added, err)
		}
		if got, _ := s.Datasets.FindDatasetByID(ctx, ds.ID); got.FeatureCount != 53 || got.Extent.MaxX != 52 || got.Version <= before.Version {
			t.Fatalf("after adding: %+v", got)
		}
		code(t, s.Features.DeleteFeatures(ctx, ds.ID, []int64{0, 53}), mapcommons.EINVALID)
		if err := s.Features.DeleteFeatures(ctx, ds.ID, []int64{0, 52}); err != nil {
			t.Fatal(err)
		}
		all := scan(mapcommons.FeatureQuery{Limit: -1})
		if len(all) != 51 || all[0].Values[0] != nil || all[1].Values[0] != int64(2) || all[50].Values[0] != int64(51) {
			t.Fatalf("after deleting: %d features, first %v", len(all), all[0].Values)
		}
		failing := SampleSource(1)
		failing.Err = mapcommons.Errorf(mapcommons.EINVALID, "bad")
		_, err = s.Features.AddFeatures(ctx, ds.ID, failing)
		code(t, err, mapcommons.EINVALID)
		if got := scan(mapcommons.FeatureQuery{Limit: -1}); len(got) != 51 {
			t.Fatalf("a failed add left %d features", len(got))
		}
		// An AppendAware source learns the count the append starts from,
		// before its first feature is read.
		aware := &appendAware{SliceSource: SampleSource(1), existing: -1}
		if _, err := s.Features.AddFeatures(ctx, ds.ID, aware); err != nil || aware.existing != 51 || aware.toldAfterNext {
			t.Fatalf("AppendingTo(%d) (after Next: %v): %v", aware.existing, aware.toldAfterNext, err)
		}
		_, err = s.Features.AddFeatures(ctx, 9999, SampleSource(1))
		code(t, err, mapcommons.ENOTFOUND)
		code(t, s.Features.DeleteFeatures(ctx, 9999, []int64{0}), mapcommons.ENOTFOUND)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		err := s.Features.ScanFeatures(ctx, 9999, &mapcommons.FeatureQuery{Limit: 1}, func(*mapcommons.Feature) error { return nil })
		code(t, err, mapcommons.ENOTFOUND)
	})
}

// appendAware is a source that records what AppendingTo told it.
type appendAware struct {
	*SliceSource
	existing      int64
	read          bool // Next was called
	toldAfterNext bool
}

func (a *appendAware) AppendingTo(n int64) { a.existing, a.toldAfterNext = n, a.read }

func (a *appendAware) Next() (*mapcommons.Feature, error) {
	a.read = true
	return a.SliceSource.Next()
}

func testFeeds(t *testing.T, open Opener) {
	ctx := context.Background()
	const url = "https://example.com/feed.csv"
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		ds := &mapcommons.Dataset{Type: "csv", DataType: mapcommons.DataTypeFeed, URL: url, URLType: "csv", FeedKey: "n"}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(3)); err != nil {
			t.Fatal(err)
		}
		if ds.FetchedAt.IsZero() {
			t.Error("no fetch time after create")
		}
		got, err := s.Datasets.FindDatasetByURL(ctx, url)
		if err != nil || got.ID != ds.ID || got.URL != url || got.URLType != "csv" || got.FeedKey != "n" || got.DataType != mapcommons.DataTypeFeed {
			t.Fatalf("FindDatasetByURL = %+v, %v", got, err)
		}
		_, err = s.Datasets.FindDatasetByURL(ctx, "https://example.com/other")
		code(t, err, mapcommons.ENOTFOUND)
		// An upload has no URL and is not found by the empty one.
		if err := s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv"}, SampleSource(1)); err != nil {
			t.Fatal(err)
		}
		_, err = s.Datasets.FindDatasetByURL(ctx, "")
		code(t, err, mapcommons.ENOTFOUND)
		feeds, total, err := s.Datasets.FindDatasets(ctx, mapcommons.DatasetFilter{Feeds: true})
		if err != nil || total != 1 || len(feeds) != 1 || feeds[0].ID != ds.ID {
			t.Fatalf("feeds = %v, %d, %v", feeds, total, err)
		}

		// A failed refetch keeps the data and says why.
		if err := s.Datasets.RecordFetchError(ctx, ds.ID, "the remote answered 500"); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Datasets.FindDatasetByID(ctx, ds.ID)
		if got.State != mapcommons.StateFetchFailed || got.LastFetchError != "the remote answered 500" || got.FeatureCount != 3 {
			t.Fatalf("after a failed fetch: %+v", got)
		}

		// A refetch that succeeded by other means (edits) is recorded
		// with an empty message: the error goes, the fetch time moves.
		failed := got
		if err := s.Datasets.RecordFetchError(ctx, ds.ID, ""); err != nil {
			t.Fatal(err)
		}
		got, _ = s.Datasets.FindDatasetByID(ctx, ds.ID)
		if got.State != mapcommons.StateComplete || got.LastFetchError != "" || got.FeatureCount != 3 ||
			got.Version <= failed.Version || got.FetchedAt.Before(failed.FetchedAt) || got.FetchedAt.IsZero() {
			t.Fatalf("after a fetch recorded as successful: %+v (was %+v)", got, failed)
		}

		// The feed's key changes with an update, and goes with "".
		for _, key := range []string{"s", ""} {
			up, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{FeedKey: &key})
			if err != nil || up.FeedKey != key || up.Version <= got.Version {
				t.Fatalf("UpdateDataset(FeedKey %q) = %+v, %v", key, up, err)
			}
			if got, _ = s.Datasets.FindDatasetByID(ctx, ds.ID); got.FeedKey != key {
				t.Fatalf("FeedKey %q after an update to %q", got.FeedKey, key)
			}
		}

		// A refetch with another schema replaces attributes and features.
		src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "only", Type: mapcommons.AttrString}}}
		src.Features = []mapcommons.Feature{{Values: []any{"a"}, Geometry: wkb.AppendPoint(nil, 10, 20)}}
		rep, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, src)
		if err != nil {
			t.Fatal(err)
		}
		if rep.FeatureCount != 1 || len(rep.Attributes) != 1 || rep.Attributes[0].Name != "only" || rep.State != mapcommons.StateComplete ||
			rep.LastFetchError != "" || rep.Version <= got.Version || rep.Extent == nil || rep.Extent.MinX != 10 {
			t.Fatalf("after replace: %+v", rep)
		}
		var vals []any
		err = s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
			vals = append(vals, f.Values...)
			return nil
		})
		if err != nil || !reflect.DeepEqual(vals, []any{"a"}) {
			t.Fatalf("features after replace: %v, %v", vals, err)
		}
	})
	t.Run("ErrDuplicateURL", func(t *testing.T) {
		s := open(t)
		if err := s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv", URL: url}, SampleSource(1)); err != nil {
			t.Fatal(err)
		}
		code(t, s.Datasets.CreateDataset(ctx, &mapcommons.Dataset{Type: "csv", URL: url}, SampleSource(1)), mapcommons.ECONFLICT)
		_, total, _ := s.Datasets.FindDatasets(ctx, mapcommons.DatasetFilter{})
		if total != 1 {
			t.Fatalf("%d datasets", total)
		}
	})
	t.Run("ErrReplaceFailsKeepsOld", func(t *testing.T) {
		s := open(t)
		ds := &mapcommons.Dataset{Type: "csv", URL: url}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(4)); err != nil {
			t.Fatal(err)
		}
		src := SampleSource(100)
		src.Err = mapcommons.Errorf(mapcommons.EINVALID, "row 101: broken")
		_, err := s.Datasets.ReplaceFeatures(ctx, ds.ID, src)
		code(t, err, mapcommons.EINVALID)
		got, _ := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if got.FeatureCount != 4 || got.Version != ds.Version {
			t.Fatalf("after a failed replace: count %d version %d (was %d)", got.FeatureCount, got.Version, ds.Version)
		}
		n := 0
		s.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(*mapcommons.Feature) error { n++; return nil })
		if n != 4 {
			t.Fatalf("%d features after a failed replace", n)
		}
		_, err = s.Datasets.ReplaceFeatures(ctx, 999, SampleSource(1))
		code(t, err, mapcommons.ENOTFOUND)
		code(t, s.Datasets.RecordFetchError(ctx, 999, "x"), mapcommons.ENOTFOUND)
	})
}
