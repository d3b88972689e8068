// Package storekit holds what the two stores (sqlite and postgres) both
// did the same way in Go around their own SQL: the stored form of a map's
// JSON columns, the columns a user's update sets, the domain errors of
// users and groups the stores return, and those their drivers' errors
// become. It does no I/O; the search entries' glue is package searchdoc.
package storekit

import (
	"encoding/json"
	"fmt"
	"strings"

	"mapcommons"
)

// MapJSON is the stored form of a map's JSON columns: Extent nil for a
// map without one, the lists "[]" for none.
type MapJSON struct{ Extent, Tags, Layers, Perms []byte }

// EncodeMap encodes m's JSON columns.
func EncodeMap(m *mapcommons.Map) (MapJSON, error) {
	var out MapJSON
	var err error
	enc := func(v any) []byte {
		b, e := json.Marshal(v)
		if e != nil && err == nil {
			err = e
		}
		if string(b) == "null" {
			return []byte("[]")
		}
		return b
	}
	if m.Extent != nil {
		out.Extent = enc(m.Extent)
	}
	out.Tags, out.Layers, out.Perms = enc(m.Tags), enc(m.Layers), enc(m.Permissions)
	return out, err
}

// DecodeMap sets m's fields of the JSON columns j, as read from the row
// of map m.ID (a nil Extent for NULL): the lists empty, not nil, for none.
func DecodeMap(m *mapcommons.Map, j MapJSON) error {
	if j.Extent != nil {
		m.Extent = new([4]float64)
		if err := json.Unmarshal(j.Extent, m.Extent); err != nil {
			return fmt.Errorf("map %d extent: %w", m.ID, err)
		}
	}
	for _, f := range []struct {
		name string
		raw  []byte
		dst  any
	}{{"tags", j.Tags, &m.Tags}, {"layers", j.Layers, &m.Layers}, {"permissions", j.Perms, &m.Permissions}} {
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return fmt.Errorf("map %d %s: %w", m.ID, f.name, err)
		}
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
	if m.Layers == nil {
		m.Layers = []mapcommons.Layer{}
	}
	if m.Permissions == nil {
		m.Permissions = []mapcommons.Permission{}
	}
	return nil
}

// UserSets is the SET list of the UPDATE of a user's row by upd: the
// columns upd changes, then updated_at = now, the i-th value (from 1)
// written placeholder(i); and the values, in that order.
func UserSets(upd mapcommons.UserUpdate, now any, placeholder func(i int) string) (string, []any) {
	var sets []string
	var args []any
	add := func(col string, v any) {
		args = append(args, v)
		sets = append(sets, col+" = "+placeholder(len(args)))
	}
	if upd.Email != nil {
		add("email", *upd.Email)
	}
	if upd.Fullname != nil {
		add("fullname", *upd.Fullname)
	}
	if upd.PasswordHash != nil {
		add("password_hash", *upd.PasswordHash)
	}
	if upd.Admin != nil {
		add("admin", *upd.Admin)
	}
	add("updated_at", now)
	return strings.Join(sets, ", "), args
}

// NoRow is the error of a row a store read and did not find. It, Taken
// and Full are what each store's formatError makes of the driver's errors
// that mean the same in both stores, so that both say the same.
func NoRow() error { return mapcommons.Errorf(mapcommons.ENOTFOUND, "not found") }

// Taken is the error of a row written with a unique key another row has.
func Taken() error { return mapcommons.Errorf(mapcommons.ECONFLICT, "already exists") }

// Full is the error of a write the store's disk had no room for.
func Full() error {
	return mapcommons.Errorf(mapcommons.EFULL, "the store is full: nothing was stored")
}

// UserNotFound is err, a store's error in finding the user what (an id or
// a login), with ENOTFOUND saying which user; any other error as it is.
func UserNotFound(err error, what string) error {
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %s not found", what)
	}
	return err
}

// LoginTaken is the error of a user created with a login another user
// has (the store's ECONFLICT).
func LoginTaken(login string) error {
	return &mapcommons.Error{Code: mapcommons.ECONFLICT, Message: "login: " + login + " is already taken",
		Fields: map[string][]string{"login": {"has already been taken"}}}
}

// SecondFactorNotStarted is the error of a second factor that could not be started
// for user userID: ECONFLICT when the user has one already (exists), else
// ENOTFOUND of the user.
func SecondFactorNotStarted(exists bool, userID int64) error {
	if exists {
		return mapcommons.Errorf(mapcommons.ECONFLICT, "a second factor is set up already: remove it first")
	}
	return mapcommons.Errorf(mapcommons.ENOTFOUND, "user %d not found", userID)
}

// GroupNotFound is the error of a group id that does not exist.
func GroupNotFound(id int64) error {
	return mapcommons.Errorf(mapcommons.ENOTFOUND, "group %d not found", id)
}

// GroupNameTaken is the error of a group created with the name of
// another (the store's ECONFLICT).
func GroupNameTaken(name string) error {
	return mapcommons.Errorf(mapcommons.ECONFLICT, "name: a group named %q exists already", name)
}
