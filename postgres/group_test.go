package postgres_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"mapcommons"
	"mapcommons/internal/pgtest"
	"mapcommons/storetest"
)

// TestDeleteGroupDatasets checks, until the store has a DatasetService
// (and the contract's Groups/DeleteGroup runs), that deleting a group
// takes its entries out of the datasets' sharing lists in the same
// transaction, keeping the other entries in their order.
func TestDeleteGroupDatasets(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := pgtest.OpenURL(t, url).Services()
	conn := rawConn(t, url)
	gone, stays := storetest.MustCreateGroup(t, s, "gone"), storetest.MustCreateGroup(t, s, "stays")
	g := mapcommons.Permission{Group: strconv.FormatInt(gone.ID, 10), View: true}
	k := mapcommons.Permission{Group: strconv.FormatInt(stays.ID, 10), View: true, Download: true, Edit: true}
	every := mapcommons.Permission{Group: mapcommons.GroupEveryone, View: true}
	lists := [][]mapcommons.Permission{{every, g, k}, {g}, {k}, {}}
	want := [][]mapcommons.Permission{{every, k}, {}, {k}, {}}
	var ids []int64
	for _, perms := range lists {
		b, _ := json.Marshal(perms)
		var id int64
		if err := conn.QueryRow(ctx, `INSERT INTO datasets (type, data_type, state, permissions, created_at, updated_at)
			VALUES ('csv', 'Dataset', 'complete', $1, now(), now()) RETURNING id`, b).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.Groups.DeleteGroup(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		var b []byte
		if err := conn.QueryRow(ctx, `SELECT permissions FROM datasets WHERE id = $1`, id).Scan(&b); err != nil {
			t.Fatal(err)
		}
		var got []mapcommons.Permission
		if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("dataset %d: %s, want %+v (%v)", i, b, want[i], err)
		}
	}
}
