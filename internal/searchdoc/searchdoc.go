// Package searchdoc is the glue between the domain's search rules and the
// table of search entries both stores keep (search_docs): the ids and
// kinds of its rows, what a map's row holds, and a search result read
// back from a row joined with its dataset or map. It does no I/O: each
// store reads and writes the rows in its own SQL (sqlite/mapsearch.go,
// postgres/searchdocs.go) and leaves the rest here.
package searchdoc

import (
	"encoding/json"
	"fmt"
	"strings"

	"mapcommons"
	"mapcommons/format/wkb"
)

// Kinds of search_docs rows.
const (
	KindDataset = 0
	KindMap     = 1
)

// DatasetDocID and MapDocID are the docids of the entries of dataset id
// and map id: a dataset's even, a map's odd (the kind is the parity).
func DatasetDocID(id int64) int64 { return 2 * id }
func MapDocID(id int64) int64     { return 2*id + 1 }

// Map is the row of a map's search entry.
type Map struct {
	mapcommons.MapSearchDoc         // shared, feature count, extent
	DocID                   int64   // MapDocID
	Owner                   *int64  // nil for a map without owner
	Description             string  // "" for none
	Tags                    string  // "a, b"
	Groups                  []int64 // the groups it is shared with (SearchGrants)
}

// MapEntry computes the row of m's search entry: owner is m's owner (nil
// when it has none), dataset returns what the entry needs of the dataset
// with an id (nil when there is none: LayerDataset), as for
// mapcommons.MapSearchDocument.
func MapEntry(m *mapcommons.Map, owner *mapcommons.User, dataset func(id int64) *mapcommons.Dataset) Map {
	e := Map{MapSearchDoc: mapcommons.MapSearchDocument(m, owner, dataset), DocID: MapDocID(m.ID), Tags: strings.Join(m.Tags, ", ")}
	if m.OwnerID != 0 {
		e.Owner = &m.OwnerID
	}
	if m.Description != nil {
		e.Description = *m.Description
	}
	_, e.Groups = mapcommons.SearchGrants(m.Permissions)
	return e
}

// ReadMapEntry is MapEntry of m with what it needs read through the
// store: owner reads m's owner (nil, no error, when the account is gone),
// layer reads what the entry needs of each dataset m's layers name (nil
// when there is none: LayerDataset) and notes that m names it (the
// store's list of the maps that show a dataset).
func ReadMapEntry(m *mapcommons.Map, owner func(id int64) (*mapcommons.User, error), layer func(id int64) (*mapcommons.Dataset, error)) (Map, error) {
	var u *mapcommons.User
	if m.OwnerID != 0 {
		var err error
		if u, err = owner(m.OwnerID); err != nil {
			return Map{}, err
		}
	}
	datasets := map[int64]*mapcommons.Dataset{}
	for _, id := range m.DatasetIDs() {
		ds, err := layer(id)
		if err != nil {
			return Map{}, err
		}
		datasets[id] = ds
	}
	return MapEntry(m, u, func(id int64) *mapcommons.Dataset { return datasets[id] }), nil
}

// LayerDataset completes ds, a dataset a map's layer shows, of which the
// store read the owner and feature count: its permissions from their
// JSON column, its extent from the four bounds (none if one is NULL).
func LayerDataset(ds *mapcommons.Dataset, perms []byte, minx, miny, maxx, maxy *float64) error {
	if err := json.Unmarshal(perms, &ds.Permissions); err != nil {
		return fmt.Errorf("dataset %d permissions: %w", ds.ID, err)
	}
	if minx != nil && miny != nil && maxx != nil && maxy != nil {
		ds.Extent = &wkb.Rect{MinX: *minx, MinY: *miny, MaxX: *maxx, MaxY: *maxy}
	}
	return nil
}

// ResultColumns are the columns of a search result (as ResultRow scans
// them, bar the permissions: the stores spell the empty list each its own
// way), from ResultFrom.
const ResultColumns = `s.docid, s.kind, s.obj_id, coalesce(s.owner_id, 0), coalesce(u.login, ''),
	s.title, s.tags, s.feature_count, s.minx, s.miny, s.maxx, s.maxy, s.created_at, s.updated_at,
	coalesce(d.description, ''), coalesce(d.author, ''), coalesce(d.data_type, ''), coalesce(d.url, ''),
	m.description`

// ResultFrom is the FROM of a read of search results: an entry joined
// with its owner and with its dataset or map.
const ResultFrom = `FROM search_docs s
	LEFT JOIN users u ON u.id = s.owner_id
	LEFT JOIN datasets d ON s.kind = 0 AND d.id = s.obj_id
	LEFT JOIN maps m ON s.kind = 1 AND m.id = s.obj_id`

// ResultRow is a row of ResultColumns and the sharing list after them, as
// a store scans it: Dest gives the driver's Scan its destinations, in the
// columns' order, and Result makes the search result of what it scanned.
type ResultRow struct {
	DocID int64 // the entry's docid

	r                      mapcommons.SearchResult
	kind                   int
	minx, miny, maxx, maxy *float64
	dsDesc                 string  // a dataset's description
	mapDesc                *string // a map's, nil for none
	perms                  []byte
}

// Dest returns the destinations of the row's columns for a driver's Scan.
// The entry's times go to created and updated, which each store scans as
// its driver reads them and sets on the result itself.
func (row *ResultRow) Dest(created, updated any) []any {
	r := &row.r
	return []any{&row.DocID, &row.kind, &r.ID, &r.OwnerID, &r.Owner, &r.Title, &r.Tags, &r.FeatureCount,
		&row.minx, &row.miny, &row.maxx, &row.maxy, created, updated, &row.dsDesc, &r.Author, &r.DataType, &r.Source,
		&row.mapDesc, &row.perms}
}

// Result returns the search result of the row scanned, its times not set:
// the model of its kind, the description of its object, the permissions
// from their JSON, the extent from the entry's four bounds.
func (row *ResultRow) Result() (*mapcommons.SearchResult, error) {
	r := &row.r
	r.Model, r.Description = mapcommons.ModelOverlay, &row.dsDesc
	if row.kind == KindMap {
		r.Model, r.Description = mapcommons.ModelMap, row.mapDesc
	}
	if err := json.Unmarshal(row.perms, &r.Permissions); err != nil {
		return nil, fmt.Errorf("%s %d permissions: %w", r.Model, r.ID, err)
	}
	if r.Permissions == nil {
		r.Permissions = []mapcommons.Permission{}
	}
	if row.minx != nil && row.miny != nil && row.maxx != nil && row.maxy != nil {
		r.Extent = &mapcommons.BBox{W: *row.minx, S: *row.miny, E: *row.maxx, N: *row.maxy}
	}
	return r, nil
}

// OrderBy is the ORDER BY of a search f over the entries search_docs s:
// title orders the titles (each store folds their case its own way: as
// SQLite's COLLATE NOCASE, ASCII case folded, then bytes), score is the
// relevance of a match ("" without words), a higher score a better match
// when highest, and id the docid of a match. Every order ends with the
// docid, so that pages never overlap.
func OrderBy(f *mapcommons.SearchFilter, title, score string, highest bool, id string) string {
	dir, flip := "", " DESC"
	if f.Descending {
		dir, flip = flip, dir
	}
	switch f.Sort {
	case mapcommons.SortTitle:
		return title + dir + ", s.docid" + dir
	case mapcommons.SortCreated:
		return "s.created_at" + dir + ", s.docid" + dir
	case mapcommons.SortUpdated:
		return "s.updated_at" + dir + ", s.docid" + dir
	case mapcommons.SortFeatureCount:
		return "s.feature_count" + dir + ", s.docid" + dir
	}
	if score != "" {
		// The best match first.
		if highest {
			return score + flip + ", " + id + dir
		}
		return score + dir + ", " + id + dir
	}
	// Relevance without words: the newest first.
	return "s.created_at" + flip + ", s.docid" + flip
}

// InOrder appends to out the results of byID (by docid) in the order of
// ids, those there are.
func InOrder(out []*mapcommons.SearchResult, ids []int64, byID map[int64]*mapcommons.SearchResult) []*mapcommons.SearchResult {
	for _, id := range ids {
		if r := byID[id]; r != nil {
			out = append(out, r)
		}
	}
	return out
}
