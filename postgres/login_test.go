package postgres_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/postgres"
)

// TestFindUserAndSecondFactor checks the one read of a login against the
// two it stands for (FindUserByLogin, FindSecondFactor): a user without a
// second factor, with a pending one, with a confirmed one and its recovery
// codes, in another case of the login, and no user.
func TestFindUserAndSecondFactor(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t)
	s := db.Services()
	lf := s.Users.(*postgres.UserService)
	u := &mapcommons.User{Login: "Fern", Email: "fern@example.org", PasswordHash: "x"}
	if err := s.Users.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	g := &mapcommons.UserGroup{Name: "ferns"}
	if err := s.Groups.CreateGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := s.Groups.AddGroupMember(ctx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	check := func(step string) {
		t.Helper()
		gotU, gotF, err := lf.FindUserAndSecondFactor(ctx, "fERN")
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		wantU, err := s.Users.FindUserByLogin(ctx, "fERN")
		if err != nil {
			t.Fatal(err)
		}
		wantF, err := s.SecondFactors.FindSecondFactor(ctx, u.ID)
		if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
			wantF, err = nil, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotU, wantU) || !reflect.DeepEqual(gotF, wantF) {
			t.Errorf("%s: %+v %+v, want %+v %+v", step, gotU, gotF, wantU, wantF)
		}
	}
	check("no second factor")
	secret := []byte("0123456789abcdefghij")
	if err := s.SecondFactors.StartSecondFactor(ctx, u.ID, secret, time.Now()); err != nil {
		t.Fatal(err)
	}
	check("pending")
	if err := s.SecondFactors.ConfirmSecondFactor(ctx, u.ID, secret, 12345, []string{"h1", "h2", "h3"}); err != nil {
		t.Fatal(err)
	}
	check("confirmed")
	if _, _, err := lf.FindUserAndSecondFactor(ctx, "nobody"); mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		t.Errorf("no such login: %v, want ENOTFOUND", err)
	}
}
