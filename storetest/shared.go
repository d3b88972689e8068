package storetest

// The contract of stores that share one database, as the servers behind a
// load balancer do: what one writes, the other reads at once, and writes
// through both at the same time lose nothing. A store that keeps state in
// its process (a cache, a lock, a limiter) fails it.

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"mapcommons"
)

// TwoOpener returns the services of two stores on one new, empty database,
// as two servers would have them, closed by tb.Cleanup.
type TwoOpener func(tb testing.TB) (a, b mapcommons.Services)

// atOnce runs fn(0) to fn(n-1) at the same time, each in a goroutine of
// its own, waits for them all and fails t with the first error any
// returned.
func atOnce(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- fn(i) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// either is a for an even i, b for an odd one: the store the i-th of
// writes made at once through both goes through.
func either(i int, a, b mapcommons.Services) mapcommons.Services {
	if i%2 == 1 {
		return b
	}
	return a
}

// RunShared runs the contract of two stores on one database. As Run, it
// skips the parts of services the stores do not give.
func RunShared(t *testing.T, open TwoOpener) {
	probe, _ := open(t)
	part := func(name string, fn func(*testing.T, TwoOpener), needs ...string) {
		t.Run(name, func(t *testing.T) {
			Need(t, probe, needs...)
			fn(t, open)
		})
	}
	part("Users", testSharedUsers, "Users")
	part("FirstAdmin", testSharedFirstAdmin, "Users")
	part("Groups", testSharedGroups, "Users", "Groups")
	part("Sessions", testSharedSessions, "Users", "Sessions", "Trust")
	part("Maps", testSharedMaps, "Users", "Groups", "Maps")
	part("Datasets", testSharedDatasets, "Datasets", "Features")
	part("LoginLimits", testSharedLoginLimits, "LoginLimits")
	part("FeedClaims", testSharedFeedClaims, "Datasets", "Features", "FeedClaims")
	part("Search", testSharedSearch, "Users", "Groups", "Datasets", "Features", "Maps", "Search")
}

// testSharedFirstAdmin: two servers on one database making the first
// administrator at once make one.
func testSharedFirstAdmin(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	for round := range 3 {
		a, b := open(t)
		const n = 6
		errs := make([]error, n)
		atOnce(t, n, func(i int) error {
			errs[i] = either(i, a, b).Users.CreateFirstAdmin(ctx, &mapcommons.User{
				Login: fmt.Sprintf("racer%d", i), Email: fmt.Sprintf("r%d@example.com", i), PasswordHash: "x"})
			return nil
		})
		won := 0
		for i, err := range errs {
			if err == nil {
				won++
			} else if mapcommons.ErrorCode(err) != mapcommons.ECONFLICT {
				t.Fatalf("round %d, racer %d: %v", round, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of %d racers through two stores made the first administrator, want 1", round, won, n)
		}
	}
}

func testSharedUsers(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	a, b := open(t)
	u := MustCreateUser(t, a, "Ann", false)
	got, err := b.Users.FindUserByLogin(ctx, "ann")
	if err != nil || got.ID != u.ID || got.Email != u.Email {
		t.Fatalf("b finds a's new user: %+v, %v", got, err)
	}
	// Taken logins are taken for both.
	code(t, b.Users.CreateUser(ctx, &mapcommons.User{Login: "ANN", Email: "x@example.com", PasswordHash: "x"}), mapcommons.ECONFLICT)
	admin, hash := true, "new hash"
	if _, err := b.Users.UpdateUser(ctx, u.ID, mapcommons.UserUpdate{Admin: &admin, PasswordHash: &hash}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Users.FindUserByID(ctx, u.ID); err != nil || !got.Admin || got.PasswordHash != hash {
		t.Fatalf("a reads b's update: %+v, %v", got, err)
	}
	if err := a.Users.DeleteUser(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	_, err = b.Users.FindUserByID(ctx, u.ID)
	code(t, err, mapcommons.ENOTFOUND)
	_, err = b.Users.FindUserByLogin(ctx, "Ann")
	code(t, err, mapcommons.ENOTFOUND)
}

func testSharedGroups(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	a, b := open(t)
	ann := MustCreateUser(t, a, "ann", false)
	staff := MustCreateGroup(t, a, "staff")
	code(t, b.Groups.CreateGroup(ctx, &mapcommons.UserGroup{Name: "Staff"}), mapcommons.ECONFLICT)
	MustAddMember(t, b, staff, ann)
	// The groups that come with a user (and decide what they may see)
	// are the database's, whichever store reads them.
	if got, err := a.Users.FindUserByLogin(ctx, "ann"); err != nil || !reflect.DeepEqual(got.GroupIDs, []int64{staff.ID}) {
		t.Fatalf("a reads b's membership: %+v, %v", got, err)
	}
	if members, err := a.Groups.FindGroupMembers(ctx, staff.ID); err != nil || !reflect.DeepEqual(logins(members), []string{"ann"}) {
		t.Fatalf("a reads the members b added: %v, %v", logins(members), err)
	}
	if err := b.Groups.DeleteGroup(ctx, staff.ID); err != nil {
		t.Fatal(err)
	}
	_, err := a.Groups.FindGroupByID(ctx, staff.ID)
	code(t, err, mapcommons.ENOTFOUND)
	if got, err := a.Users.FindUserByID(ctx, ann.ID); err != nil || got.GroupIDs != nil {
		t.Fatalf("a still sees the groups b deleted: %+v, %v", got, err)
	}
	code(t, a.Groups.AddGroupMember(ctx, staff.ID, ann.ID), mapcommons.ENOTFOUND)
}

func testSharedSessions(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	a, b := open(t)
	ann := MustCreateUser(t, a, "ann", false)
	now := time.Now().UTC().Truncate(time.Second)
	_, hash := mapcommons.NewSessionToken()
	if err := a.Sessions.CreateSession(ctx, &mapcommons.Session{TokenHash: hash, UserID: ann.ID, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	// A browser signed in on one server is signed in on the other.
	got, err := b.Sessions.FindSessionByToken(ctx, hash)
	if err != nil || got.UserID != ann.ID || !got.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("b finds a's session: %+v, %v", got, err)
	}
	// And signed out on both.
	if err := b.Sessions.DeleteSession(ctx, hash); err != nil {
		t.Fatal(err)
	}
	_, err = a.Sessions.FindSessionByToken(ctx, hash)
	code(t, err, mapcommons.ENOTFOUND)
	// A login trusted by one server's limiter is trusted by the other's.
	if err := a.Trust.TrustLogin(ctx, ann.ID, "addr:192.0.2.1", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Trust.LoginTrusted(ctx, ann.ID, []string{"addr:192.0.2.1"}, now); err != nil || !ok {
		t.Fatalf("b trusts what a recorded: %v, %v", ok, err)
	}
	// A user deleted through one ends their sessions on the other.
	_, hash = mapcommons.NewSessionToken()
	if err := b.Sessions.CreateSession(ctx, &mapcommons.Session{TokenHash: hash, UserID: ann.ID, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := a.Users.DeleteUser(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	_, err = b.Sessions.FindSessionByToken(ctx, hash)
	code(t, err, mapcommons.ENOTFOUND)
}

func testSharedMaps(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	a, b := open(t)
	owner := MustCreateUser(t, a, "owner", false)
	m := &mapcommons.Map{OwnerID: owner.ID, Title: "m", Basemap: "b", Projection: mapcommons.ProjectionMercator}
	if err := a.Maps.CreateMap(ctx, m); err != nil {
		t.Fatal(err)
	}
	// Updates through both stores at once each apply to the map as the
	// one before left it: none is lost.
	const n = 20
	atOnce(t, n, func(i int) error {
		_, err := either(i, a, b).Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
			m.Tags = append(m.Tags, fmt.Sprintf("t%02d", i))
			return nil
		})
		return err
	})
	got, err := b.Maps.FindMapByID(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got.Tags)
	if len(got.Tags) != n || got.Tags[0] != "t00" || got.Tags[n-1] != fmt.Sprintf("t%02d", n-1) {
		t.Fatalf("after %d updates through two stores, tags %v", n, got.Tags)
	}
	// A group deleted through one store leaves the sharing lists the other
	// reads.
	staff := MustCreateGroup(t, a, "staff")
	every := mapcommons.Permission{Group: mapcommons.GroupEveryone, View: true}
	if _, err := a.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
		m.Permissions = []mapcommons.Permission{{Group: fmt.Sprint(staff.ID), View: true, Download: true, Edit: true}, every}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.Groups.DeleteGroup(ctx, staff.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Maps.FindMapByID(ctx, m.ID); err != nil || !reflect.DeepEqual(got.Permissions, []mapcommons.Permission{every}) {
		t.Fatalf("a reads the sharing list after b deleted the group: %+v, %v", got, err)
	}
	if err := b.Maps.DeleteMap(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	_, err = a.Maps.FindMapByID(ctx, m.ID)
	code(t, err, mapcommons.ENOTFOUND)
}

// sharedFeatures reads every feature of a dataset through s: positions,
// ids, values and geometry.
func sharedFeatures(t *testing.T, s mapcommons.Services, id int64) []mapcommons.Feature {
	t.Helper()
	var out []mapcommons.Feature
	err := s.Features.ScanFeatures(context.Background(), id, &mapcommons.FeatureQuery{Limit: -1}, func(f *mapcommons.Feature) error {
		out = append(out, mapcommons.Feature{Position: f.Position, ID: f.ID, Values: slices.Clone(f.Values), Geometry: slices.Clone(f.Geometry)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameEverywhere checks that both stores read the same dataset (version,
// count) and the same features, and that these are want's ids in order;
// it returns the features.
func sameEverywhere(t *testing.T, a, b mapcommons.Services, id, version int64, wantIDs []int64) []mapcommons.Feature {
	t.Helper()
	ctx := context.Background()
	var feats [2][]mapcommons.Feature
	for k, s := range []mapcommons.Services{a, b} {
		ds, err := s.Datasets.FindDatasetByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ds.Version != version || ds.FeatureCount != int64(len(wantIDs)) {
			t.Fatalf("store %d reads version %d, %d features; want version %d, %d features", k, ds.Version, ds.FeatureCount, version, len(wantIDs))
		}
		feats[k] = sharedFeatures(t, s, id)
		var ids []int64
		for i, f := range feats[k] {
			if f.Position != int64(i) {
				t.Fatalf("store %d: feature %d at position %d", k, i, f.Position)
			}
			ids = append(ids, f.ID)
		}
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("store %d reads ids %v; want %v", k, ids, wantIDs)
		}
	}
	if !reflect.DeepEqual(feats[0], feats[1]) {
		t.Fatalf("the stores read different features:\n%v\n%v", feats[0], feats[1])
	}
	return feats[0]
}

func testSharedDatasets(t *testing.T, open TwoOpener) {
	ctx := context.Background()
	a, b := open(t)
	ds := &mapcommons.Dataset{Type: "csv", Metadata: mapcommons.Metadata{Title: "shared"}}
	if err := a.Datasets.CreateDataset(ctx, ds, SampleSource(5)); err != nil {
		t.Fatal(err)
	}
	feats := sameEverywhere(t, a, b, ds.ID, 1, []int64{1, 2, 3, 4, 5})
	if feats[4].Values[2] != "namee" {
		t.Fatalf("feature 4 reads %v", feats[4].Values)
	}
	// Appended through b: a reads them at once, with the next ids.
	if n, err := b.Features.AddFeatures(ctx, ds.ID, SampleSource(2)); err != nil || n != 2 {
		t.Fatalf("b appends: %d, %v", n, err)
	}
	sameEverywhere(t, a, b, ds.ID, 2, []int64{1, 2, 3, 4, 5, 6, 7})
	// Deleted through a: b reads the others, moved down, their ids kept.
	if err := a.Features.DeleteFeatures(ctx, ds.ID, []int64{0, 6}); err != nil {
		t.Fatal(err)
	}
	sameEverywhere(t, a, b, ds.ID, 3, []int64{2, 3, 4, 5, 6})
	// Replaced through b: identical rows keep their ids; ids deleted are
	// not given again.
	src := SampleSource(5)
	src.Features = src.Features[1:] // the rows of ids 2…5, then a new one
	src.Features = append(src.Features, mapcommons.Feature{Values: []any{int64(99), nil, "new", true}})
	if _, err := b.Datasets.ReplaceFeatures(ctx, ds.ID, src); err != nil {
		t.Fatal(err)
	}
	feats = sameEverywhere(t, a, b, ds.ID, 4, []int64{2, 3, 4, 5, 8})
	if feats[4].Values[2] != "new" || feats[4].Geometry != nil {
		t.Fatalf("the new row reads %+v", feats[4])
	}
	// A query through a sees what b wrote.
	q := &mapcommons.FeatureQuery{Limit: -1, BBox: &mapcommons.BBox{W: 1.5, S: -10, E: 10, N: 10}, Sort: "n", Descending: true}
	var got []int64
	if err := a.Features.ScanFeatures(ctx, ds.ID, q, func(f *mapcommons.Feature) error { got = append(got, f.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int64{5, 4, 3}) {
		t.Fatalf("a's query after b's replace: ids %v, want [5 4 3]", got)
	}
	// Appends through both stores at once come one after the other: each
	// learns the count the one before left, and none is lost.
	const n = 8
	told := make(chan int64, n)
	atOnce(t, n, func(i int) error {
		src := &appendAware{SliceSource: SampleSource(1), existing: -1}
		_, err := either(i, a, b).Features.AddFeatures(ctx, ds.ID, src)
		told <- src.existing
		return err
	})
	close(told)
	var counts []int64
	for c := range told {
		counts = append(counts, c)
	}
	slices.Sort(counts)
	for i, c := range counts {
		if c != int64(5+i) {
			t.Fatalf("concurrent appends learned counts %v; want 5 to %d, each once", counts, 5+n-1)
		}
	}
	sameEverywhere(t, a, b, ds.ID, 4+n, []int64{2, 3, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	// Deleted through a: gone for b.
	if err := a.Datasets.DeleteDataset(ctx, ds.ID); err != nil {
		t.Fatal(err)
	}
	_, err := b.Datasets.FindDatasetByID(ctx, ds.ID)
	code(t, err, mapcommons.ENOTFOUND)
	err = b.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, func(*mapcommons.Feature) error { return nil })
	code(t, err, mapcommons.ENOTFOUND)
}
