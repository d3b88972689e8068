package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"mapcommons"
	"mapcommons/internal/pgtest"
)

// racingUsers is a user service on which another server creates login,
// with a password of its own, between a look-up that found no such user
// and the answer to it: the race of servers starting at once.
type racingUsers struct {
	mapcommons.UserService
	login string
	once  sync.Once
}

func (u *racingUsers) FindUserByLogin(ctx context.Context, login string) (*mapcommons.User, error) {
	found, err := u.UserService.FindUserByLogin(ctx, login)
	if login == u.login && mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		u.once.Do(func() {
			hash, _ := mapcommons.HashPassword("the-other-servers", 4)
			if cerr := u.UserService.CreateUser(ctx, &mapcommons.User{Login: login, Email: login + "@localhost",
				Admin: true, PasswordHash: hash}); cerr != nil {
				panic(cerr)
			}
		})
	}
	return found, err
}

// TestEnsureAdminRace: when another server creates the administrator
// between this one's look-up and its create, this one does not fail with
// a conflict: it sets the password of the administrator now there. On
// both stores.
func TestEnsureAdminRace(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"embedded", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			url := ""
			if kind == "postgres" {
				url = pgtest.URL(t)
			}
			st, err := openStore(ctx, t.TempDir(), url)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			users := &racingUsers{UserService: st.svc.Users, login: "admin"}
			if err := ensureAdmin(ctx, users, "admin", "", "mine-123456", 4); err != nil {
				t.Fatalf("ensureAdmin, racing another server: %v", err)
			}
			u, err := st.svc.Users.FindUserByLogin(ctx, "admin")
			if err != nil || !u.Admin || !mapcommons.CheckPassword(u.PasswordHash, "mine-123456") {
				t.Fatalf("the administrator after the race: %+v, %v", u, err)
			}
		})
	}
}

// TestServersStartTogether starts four servers at once on one PostgreSQL
// database never migrated, each with MAPCOMMONS_ADMIN_PASSWORD: every one
// starts (migrations, the administrator and any other start-up write are
// idempotent), and there is one administrator, with that password.
func TestServersStartTogether(t *testing.T) {
	url := pgtest.EmptyURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := func(k string) string {
		return map[string]string{"MAPCOMMONS_ADMIN_PASSWORD": "together-123", "MAPCOMMONS_BCRYPT_COST": "4"}[k]
	}
	const n = 4
	type outcome struct {
		addr string
		err  error
	}
	started := make(chan outcome, n)
	var wg sync.WaitGroup
	for range n {
		addrc := make(chan string, 1)
		errc := make(chan error, 1)
		data := t.TempDir()
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- run(ctx, []string{"serve", "--data", data, "--addr", "127.0.0.1:0", "--database-url", url}, env, nil, io.Discard, addrWriter(addrc))
		}()
		go func() {
			select {
			case a := <-addrc:
				started <- outcome{addr: a}
			case err := <-errc:
				started <- outcome{err: fmt.Errorf("the server exited: %v", err)}
			case <-time.After(5 * time.Minute): // a bound on a hang, not a measure
				started <- outcome{err: fmt.Errorf("the server neither started nor failed")}
			}
		}()
	}
	for range n {
		if o := <-started; o.err != nil {
			t.Error(o.err)
		}
	}
	cancel()
	wg.Wait()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(context.Background(), `SELECT login, password_hash FROM users WHERE admin`)
	admins, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Login, Hash string }])
	if err != nil {
		t.Fatal(err)
	}
	if len(admins) != 1 || admins[0].Login != "admin" || !mapcommons.CheckPassword(admins[0].Hash, "together-123") {
		t.Fatalf("administrators %v, want admin alone, with the password", admins)
	}
}
