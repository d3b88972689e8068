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
	part("Groups", testSharedGroups, "Users", "Groups")
	part("Sessions", testSharedSessions, "Users", "Sessions", "Trust")
	part("Maps", testSharedMaps, "Users", "Groups", "Maps")
	part("LoginLimits", testSharedLoginLimits, "LoginLimits")
	part("FeedClaims", testSharedFeedClaims, "Datasets", "Features", "FeedClaims")
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
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Maps.UpdateMap(ctx, m.ID, func(m *mapcommons.Map) error {
				m.Tags = append(m.Tags, fmt.Sprintf("t%02d", i))
				return nil
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
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
