package storetest

import (
	"context"
	"testing"

	"mapcommons"
)

// testCaseAccentInsensitive: CASEI and ACCENTI (case-insensitive and
// accent-insensitive comparisons) select the features whose folded value
// compares, alone, with an indexed condition beside them (which the store
// may serve from its index, the folded one never), in an OR and
// negated; a feature without a value is in neither.
func testCaseAccentInsensitive(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	src := &SliceSource{Attrs: []mapcommons.Attribute{{Name: "name", Type: mapcommons.AttrString}, {Name: "n", Type: mapcommons.AttrInteger}}}
	if err := mapcommons.NormalizeAttributes(src.Attrs); err != nil {
		t.Fatal(err)
	}
	for i, v := range []any{"Straße", "STRASSE", "strasse", "Οδος", "ΟΔΟΣ", "débárquér", "DEBARQUER", "Beyoncé", nil, "Calcutta", "new CALCUTTA"} {
		src.Features = append(src.Features, mapcommons.Feature{Values: []any{v, int64(i + 1)}})
	}
	ds := &mapcommons.Dataset{Type: "csv"}
	if err := s.Datasets.CreateDataset(ctx, ds, src); err != nil {
		t.Fatal(err)
	}
	checkFilters(t, s, ds.ID, src.Attrs, []filterCase{
		{`CASEI(name) = CASEI('straße')`, []int64{1, 2, 3}, []int64{4, 5, 6, 7, 8, 10, 11}},
		{`CASEI(name) IN (CASEI('Οδος'), CASEI('Straße'))`, []int64{1, 2, 3, 4, 5}, []int64{6, 7, 8, 10, 11}},
		{`ACCENTI(name) = ACCENTI('débárquér')`, []int64{6}, []int64{1, 2, 3, 4, 5, 7, 8, 10, 11}},
		{`CASEI(ACCENTI(name)) = CASEI(ACCENTI('DÉBARQUER'))`, []int64{6, 7}, []int64{1, 2, 3, 4, 5, 8, 10, 11}},
		{`CASEI(name) LIKE CASEI('%calcutta%')`, []int64{10, 11}, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{`name LIKE CASEI('STR%')`, []int64{3}, []int64{1, 2, 4, 5, 6, 7, 8, 10, 11}},
		{`CASEI(name) = 'strasse' AND n >= 2`, []int64{2, 3}, []int64{1, 4, 5, 6, 7, 8, 10, 11}},
		{`CASEI(name) = 'strasse' OR name = 'Beyoncé'`, []int64{1, 2, 3, 8}, []int64{4, 5, 6, 7, 10, 11}},
		{`ACCENTI(name) BETWEEN 'Bey' AND 'Bz'`, []int64{8}, []int64{1, 2, 3, 4, 5, 6, 7, 10, 11}},
	})
}
