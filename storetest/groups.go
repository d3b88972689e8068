package storetest

// The groups contract: groups and members, the user's groups read with
// the user, sharing lists on datasets, and what deleting a group or a user
// does to them.

import (
	"context"
	"reflect"
	"strconv"
	"testing"

	"mapcommons"
)

// MustCreateGroup creates a group with the given name.
func MustCreateGroup(tb testing.TB, s mapcommons.Services, name string) *mapcommons.UserGroup {
	tb.Helper()
	g := &mapcommons.UserGroup{Name: name}
	if err := s.Groups.CreateGroup(context.Background(), g); err != nil {
		tb.Fatal(err)
	}
	return g
}

// MustAddMember makes the user a member of the group.
func MustAddMember(tb testing.TB, s mapcommons.Services, g *mapcommons.UserGroup, u *mapcommons.User) {
	tb.Helper()
	if err := s.Groups.AddGroupMember(context.Background(), g.ID, u.ID); err != nil {
		tb.Fatal(err)
	}
}

func logins(users []*mapcommons.User) []string {
	out := []string{}
	for _, u := range users {
		out = append(out, u.Login)
	}
	return out
}

func testGroups(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		s := open(t)
		ann := MustCreateUser(t, s, "ann", false)
		bob := MustCreateUser(t, s, "bob", false)
		staff := MustCreateGroup(t, s, "Staff")
		if staff.ID == 0 || staff.CreatedAt.IsZero() {
			t.Fatalf("create did not set id and time: %+v", staff)
		}
		got, err := s.Groups.FindGroupByID(ctx, staff.ID)
		if err != nil || got.Name != "Staff" || !got.CreatedAt.Equal(staff.CreatedAt) {
			t.Fatalf("FindGroupByID = %+v, %v", got, err)
		}
		members, err := s.Groups.FindGroupMembers(ctx, staff.ID)
		if err != nil || members == nil || len(members) != 0 {
			t.Fatalf("members of a new group = %v, %v", members, err)
		}
		editors := MustCreateGroup(t, s, "editors")
		MustAddMember(t, s, staff, bob)
		MustAddMember(t, s, staff, ann)
		MustAddMember(t, s, staff, ann) // again: no error, one membership
		MustAddMember(t, s, editors, ann)
		// The listing: by name ignoring case, with the members counted.
		all, err := s.Groups.FindGroups(ctx)
		if err != nil || len(all) != 2 || all[0].Name != "editors" || all[0].Members != 1 ||
			all[1].ID != staff.ID || all[1].Members != 2 || all[1].CreatedAt.IsZero() {
			t.Fatalf("FindGroups = %+v, %v", all, err)
		}
		members, err = s.Groups.FindGroupMembers(ctx, staff.ID)
		if err != nil || !reflect.DeepEqual(logins(members), []string{"ann", "bob"}) {
			t.Fatalf("members = %v, %v", logins(members), err)
		}
		if members[0].Email != "ann@example.com" || members[0].Fullname != "Full ann" {
			t.Fatalf("a member comes back whole: %+v", members[0])
		}
		// The user's groups come with the user, however it is found.
		want := []int64{staff.ID, editors.ID}
		byID, err := s.Users.FindUserByID(ctx, ann.ID)
		if err != nil || !reflect.DeepEqual(byID.GroupIDs, want) {
			t.Fatalf("FindUserByID groups = %v, %v; want %v", byID.GroupIDs, err, want)
		}
		byLogin, err := s.Users.FindUserByLogin(ctx, "ANN")
		if err != nil || !reflect.DeepEqual(byLogin.GroupIDs, want) {
			t.Fatalf("FindUserByLogin groups = %v, %v", byLogin.GroupIDs, err)
		}
		name := "Ann"
		upd, err := s.Users.UpdateUser(ctx, ann.ID, mapcommons.UserUpdate{Fullname: &name})
		if err != nil || !reflect.DeepEqual(upd.GroupIDs, want) {
			t.Fatalf("UpdateUser groups = %v, %v", upd.GroupIDs, err)
		}
		if !upd.InGroup(editors.ID) || upd.InGroup(editors.ID+100) {
			t.Fatal("InGroup")
		}
		if err := s.Groups.RemoveGroupMember(ctx, staff.ID, ann.ID); err != nil {
			t.Fatal(err)
		}
		members, _ = s.Groups.FindGroupMembers(ctx, staff.ID)
		if !reflect.DeepEqual(logins(members), []string{"bob"}) {
			t.Fatalf("after removing ann: %v", logins(members))
		}
		if u, _ := s.Users.FindUserByID(ctx, ann.ID); !reflect.DeepEqual(u.GroupIDs, []int64{editors.ID}) {
			t.Fatalf("ann's groups after removal: %v", u.GroupIDs)
		}
		if u, _ := s.Users.FindUserByID(ctx, MustCreateUser(t, s, "carl", false).ID); u.GroupIDs != nil {
			t.Fatalf("a user in no group: %v", u.GroupIDs)
		}
		// A deleted user leaves their groups.
		if err := s.Users.DeleteUser(ctx, bob.ID); err != nil {
			t.Fatal(err)
		}
		members, _ = s.Groups.FindGroupMembers(ctx, staff.ID)
		if len(members) != 0 {
			t.Fatalf("a deleted user is still a member: %v", logins(members))
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		s := open(t)
		MustCreateGroup(t, s, "Staff")
		code(t, s.Groups.CreateGroup(ctx, &mapcommons.UserGroup{Name: "STAFF"}), mapcommons.ECONFLICT)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := open(t)
		u := MustCreateUser(t, s, "ann", false)
		g := MustCreateGroup(t, s, "staff")
		_, err := s.Groups.FindGroupByID(ctx, 999)
		code(t, err, mapcommons.ENOTFOUND)
		_, err = s.Groups.FindGroupMembers(ctx, 999)
		code(t, err, mapcommons.ENOTFOUND)
		code(t, s.Groups.AddGroupMember(ctx, 999, u.ID), mapcommons.ENOTFOUND)
		code(t, s.Groups.AddGroupMember(ctx, g.ID, 999), mapcommons.ENOTFOUND)
		code(t, s.Groups.RemoveGroupMember(ctx, 999, u.ID), mapcommons.ENOTFOUND)
		code(t, s.Groups.RemoveGroupMember(ctx, g.ID, u.ID), mapcommons.ENOTFOUND) // not a member
		code(t, s.Groups.DeleteGroup(ctx, 999), mapcommons.ENOTFOUND)
	})
	t.Run("DatasetPermissions", func(t *testing.T) {
		s := open(t)
		Need(t, s, "Datasets", "Features")
		owner := MustCreateUser(t, s, "owner", false)
		perms := []mapcommons.Permission{
			{Group: mapcommons.GroupEveryone, View: true},
			{Group: "7", View: true, Download: true, Edit: true},
		}
		ds := &mapcommons.Dataset{OwnerID: owner.ID, Type: "csv", Permissions: perms}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(2)); err != nil {
			t.Fatal(err)
		}
		got, err := s.Datasets.FindDatasetByID(ctx, ds.ID)
		if err != nil || !reflect.DeepEqual(got.Permissions, perms) {
			t.Fatalf("permissions = %+v, %v", got.Permissions, err)
		}
		// A metadata update leaves them; a permissions update replaces them.
		title := "t"
		upd, err := s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Title: &title})
		if err != nil || !reflect.DeepEqual(upd.Permissions, perms) {
			t.Fatalf("after a metadata update: %+v, %v", upd.Permissions, err)
		}
		none := []mapcommons.Permission{}
		upd, err = s.Datasets.UpdateDataset(ctx, ds.ID, mapcommons.MetadataUpdate{Permissions: &none})
		if err != nil || upd.Permissions == nil || len(upd.Permissions) != 0 || upd.Title != "t" || upd.Version <= got.Version {
			t.Fatalf("after emptying: %+v, %v", upd, err)
		}
		if got, _ := s.Datasets.FindDatasetByID(ctx, ds.ID); got.Permissions == nil || len(got.Permissions) != 0 {
			t.Fatalf("read back after emptying: %+v", got.Permissions)
		}
		bare := &mapcommons.Dataset{Type: "csv"}
		if err := s.Datasets.CreateDataset(ctx, bare, SampleSource(1)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Datasets.FindDatasetByID(ctx, bare.ID); got.Permissions == nil || len(got.Permissions) != 0 {
			t.Fatalf("no permissions given: %+v", got.Permissions)
		}
	})
	t.Run("DeleteGroupFromMaps", func(t *testing.T) {
		s := open(t)
		Need(t, s, "Maps")
		ann := MustCreateUser(t, s, "ann", false)
		gone, stays := MustCreateGroup(t, s, "gone"), MustCreateGroup(t, s, "stays")
		g := mapcommons.Permission{Group: strconv.FormatInt(gone.ID, 10), View: true}
		k := mapcommons.Permission{Group: strconv.FormatInt(stays.ID, 10), View: true, Download: true}
		every := mapcommons.Permission{Group: mapcommons.GroupEveryone, View: true}
		lists := [][]mapcommons.Permission{{k, g, every}, {g}, {every, k}, {}}
		want := [][]mapcommons.Permission{{k, every}, {}, {every, k}, {}}
		var maps []*mapcommons.Map
		for _, perms := range lists {
			m := &mapcommons.Map{OwnerID: ann.ID, Title: "m", Basemap: "b", Projection: mapcommons.ProjectionMercator, Permissions: perms}
			if err := s.Maps.CreateMap(ctx, m); err != nil {
				t.Fatal(err)
			}
			maps = append(maps, m)
		}
		if err := s.Groups.DeleteGroup(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		for i, m := range maps {
			got, err := s.Maps.FindMapByID(ctx, m.ID)
			if err != nil || !reflect.DeepEqual(got.Permissions, want[i]) {
				t.Fatalf("map %d permissions after the group went: %+v, want %+v (%v)", i, got.Permissions, want[i], err)
			}
		}
	})
	t.Run("DeleteGroup", func(t *testing.T) {
		s := open(t)
		Need(t, s, "Datasets", "Features", "Maps")
		ann := MustCreateUser(t, s, "ann", false)
		gone := MustCreateGroup(t, s, "gone")
		stays := MustCreateGroup(t, s, "stays")
		MustAddMember(t, s, gone, ann)
		MustAddMember(t, s, stays, ann)
		g, k := mapcommons.Permission{Group: strconv.FormatInt(gone.ID, 10), View: true}, mapcommons.Permission{Group: strconv.FormatInt(stays.ID, 10), Edit: true, Download: true, View: true}
		every := mapcommons.Permission{Group: mapcommons.GroupEveryone, View: true}
		ds := &mapcommons.Dataset{OwnerID: ann.ID, Type: "csv", Permissions: []mapcommons.Permission{every, g, k}}
		if err := s.Datasets.CreateDataset(ctx, ds, SampleSource(1)); err != nil {
			t.Fatal(err)
		}
		only := &mapcommons.Dataset{OwnerID: ann.ID, Type: "csv", Permissions: []mapcommons.Permission{g}}
		if err := s.Datasets.CreateDataset(ctx, only, SampleSource(1)); err != nil {
			t.Fatal(err)
		}
		m := &mapcommons.Map{OwnerID: ann.ID, Title: "m", Basemap: "b", Projection: mapcommons.ProjectionMercator,
			Permissions: []mapcommons.Permission{g, every}}
		if err := s.Maps.CreateMap(ctx, m); err != nil {
			t.Fatal(err)
		}
		// Read once so that a store that caches datasets holds them.
		if _, err := s.Datasets.FindDatasetByID(ctx, ds.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Groups.DeleteGroup(ctx, gone.ID); err != nil {
			t.Fatal(err)
		}
		_, err := s.Groups.FindGroupByID(ctx, gone.ID)
		code(t, err, mapcommons.ENOTFOUND)
		if u, _ := s.Users.FindUserByID(ctx, ann.ID); !reflect.DeepEqual(u.GroupIDs, []int64{stays.ID}) {
			t.Fatalf("ann's groups: %v", u.GroupIDs)
		}
		for _, c := range []struct {
			id   int64
			want []mapcommons.Permission
		}{{ds.ID, []mapcommons.Permission{every, k}}, {only.ID, []mapcommons.Permission{}}} {
			got, err := s.Datasets.FindDatasetByID(ctx, c.id)
			if err != nil || !reflect.DeepEqual(got.Permissions, c.want) {
				t.Fatalf("dataset %d permissions after the group went: %+v, want %+v (%v)", c.id, got.Permissions, c.want, err)
			}
		}
		if got, _ := s.Maps.FindMapByID(ctx, m.ID); !reflect.DeepEqual(got.Permissions, []mapcommons.Permission{every}) {
			t.Fatalf("map permissions after the group went: %+v", got.Permissions)
		}
	})
}
