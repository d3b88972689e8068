package storekit

import (
	"reflect"
	"testing"

	"mapcommons"
)

func TestMapJSON(t *testing.T) {
	m := &mapcommons.Map{ID: 3, Extent: &[4]float64{1, 2, 3, 4}}
	j, err := EncodeMap(m)
	if err != nil || string(j.Tags) != "[]" || string(j.Layers) != "[]" || string(j.Perms) != "[]" || string(j.Extent) != "[1,2,3,4]" {
		t.Fatalf("EncodeMap: %s %s %s %s, %v", j.Extent, j.Tags, j.Layers, j.Perms, err)
	}
	var back mapcommons.Map
	back.ID = 3
	if err := DecodeMap(&back, j); err != nil || !reflect.DeepEqual(back.Extent, m.Extent) || back.Tags == nil || back.Layers == nil || back.Permissions == nil {
		t.Fatalf("DecodeMap: %+v, %v", back, err)
	}
	if err := DecodeMap(&back, MapJSON{Tags: []byte("{"), Layers: []byte("[]"), Perms: []byte("[]")}); err == nil {
		t.Error("DecodeMap of bad tags: no error")
	}
}

func TestUserSets(t *testing.T) {
	email, admin := "a@example.com", true
	sets, args := UserSets(mapcommons.UserUpdate{Email: &email, Admin: &admin}, "now", func(i int) string { return "$" + string(rune('0'+i)) })
	if sets != "email = $1, admin = $2, updated_at = $3" || !reflect.DeepEqual(args, []any{email, admin, "now"}) {
		t.Errorf("UserSets: %q %v", sets, args)
	}
}

func TestErrors(t *testing.T) {
	if err := UserNotFound(mapcommons.Errorf(mapcommons.ENOTFOUND, "not found"), "ann"); mapcommons.ErrorMessage(err) != "user ann not found" {
		t.Errorf("UserNotFound: %v", err)
	}
	other := mapcommons.Errorf(mapcommons.EINVALID, "bad")
	if err := UserNotFound(other, "ann"); err != other {
		t.Errorf("UserNotFound of another error: %v", err)
	}
	if err := SecondFactorNotStarted(true, 1); mapcommons.ErrorCode(err) != mapcommons.ECONFLICT {
		t.Errorf("a second factor there already: %v", err)
	}
	if err := SecondFactorNotStarted(false, 1); mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		t.Errorf("no user: %v", err)
	}
}
