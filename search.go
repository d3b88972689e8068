package mapcommons

// Search over datasets and maps (spec "Search", wire contract 5): the parsed
// form of a search request, the visibility rule the policy hands the store
// (so that a store filters many rows at once exactly as CanViewDataset and
// CanViewMap would decide one by one), and the service that answers it.

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Kinds of search results (the "type" of an entry and the model parameter).
const (
	ModelOverlay = "Overlay" // a dataset
	ModelMap     = "Map"
)

// Search paging limits.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 100
	MaxSearchOffset    = 1 << 40 // far past any store's end; beyond it the request is malformed
)

// Search orders (the sort parameter).
const (
	SortRelevance    = "relevance" // best match first; newest first without words to match
	SortTitle        = "title"
	SortCreated      = "created"
	SortUpdated      = "updated"
	SortFeatureCount = "feature_count"
)

// Fields a search term may be restricted to ("" is any of them).
const (
	FieldTitle       = "title"
	FieldDescription = "description"
	FieldTags        = "tags" // the term must be one of the tags, exactly (ignoring case)
)

// Limits of a search query.
const (
	MaxSearchQueryLen = 1000
	MaxSearchTerms    = 32
)

// SearchTerm is one word or quoted phrase of a query; every term must match.
type SearchTerm struct {
	Field  string // "" (title, description or tags), FieldTitle, FieldDescription or FieldTags
	Text   string // the word or phrase as typed, without quotes; it is never query syntax
	Phrase bool   // it was quoted
	Prefix bool   // its last word also matches longer words that begin with it
}

// SearchFilter is the parsed, validated form of a search request.
type SearchFilter struct {
	Terms      []SearchTerm
	Users      []string // contributor logins; each must be the object's owner
	BBox       *BBox    // objects whose extent intersects the box (W > E crosses the antimeridian)
	Model      string   // "" for both, ModelOverlay or ModelMap
	Sort       string   // one of the Sort constants; "" is SortRelevance
	Descending bool     // reverse the order (for relevance: worst match first)
	Offset     int64
	Limit      int // 1..MaxSearchLimit
	Visibility SearchVisibility
}

// SearchVisibility is which objects a caller may find, in the form a store
// can apply to many rows at once. An object is visible when any part says
// so. Policy.SearchVisibility builds it from the same rules as
// CanViewDataset and CanViewMap; Allows states its meaning for one object.
type SearchVisibility struct {
	All      bool    // every object (an administrator)
	OwnerID  int64   // objects this user owns (0: none)
	Datasets bool    // every dataset (a hosted instance)
	Shared   bool    // objects whose sharing list gives everyone any right (view, download or edit)
	GroupIDs []int64 // objects whose sharing list gives one of these groups any right
}

// Allows reports whether v lets the caller find an object of the model with
// that owner and sharing list.
func (v SearchVisibility) Allows(model string, ownerID int64, perms []Permission) bool {
	if v.All || (v.OwnerID != 0 && v.OwnerID == ownerID) || (v.Datasets && model == ModelOverlay) {
		return true
	}
	for _, e := range perms {
		if !(e.View || e.Download || e.Edit) {
			continue
		}
		if e.Group == GroupEveryone && v.Shared {
			return true
		}
		if id, ok := e.GroupID(); ok && slices.Contains(v.GroupIDs, id) {
			return true
		}
	}
	return false
}

// SearchVisibility is the search form of CanViewDataset and CanViewMap for
// caller: administrators see everything, owners their own objects, everyone
// the objects shared with everyone, members the objects shared with one of
// their groups, and on a hosted instance everyone every dataset.
func (p Policy) SearchVisibility(caller *User) SearchVisibility {
	v := SearchVisibility{All: isAdmin(caller), Shared: true, Datasets: p.Mode == ModeHosted}
	if caller != nil {
		v.OwnerID = caller.ID
		v.GroupIDs = caller.GroupIDs
	}
	return v
}

// SearchRights are a caller's effective rights on a search result.
type SearchRights = Rights

// SearchRights decides the caller's rights on r with the same rules as for
// the object itself.
func (p Policy) SearchRights(caller *User, r *SearchResult) SearchRights {
	if r.Model == ModelMap {
		return p.MapRights(caller, &Map{ID: r.ID, OwnerID: r.OwnerID, Permissions: r.Permissions})
	}
	return p.DatasetRights(caller, &Dataset{ID: r.ID, OwnerID: r.OwnerID, Permissions: r.Permissions})
}

// SearchGrants says who, besides its owner and the administrators, may
// find an object with sharing list perms: everyone (shared), and the
// members of groups (each group once, in the list's order). Any right —
// view, download or edit — lets one find it.
func SearchGrants(perms []Permission) (shared bool, groups []int64) {
	for _, e := range perms {
		if !e.View && !e.Download && !e.Edit {
			continue
		}
		if e.Group == GroupEveryone {
			shared = true
			continue
		}
		id, err := strconv.ParseInt(e.Group, 10, 64)
		if err != nil || slices.Contains(groups, id) {
			continue
		}
		groups = append(groups, id)
	}
	return shared, groups
}

// MapSearchDoc is what the search entry of a map shows that the map's own
// row does not hold.
type MapSearchDoc struct {
	Shared       bool  // its sharing list gives everyone a right (view, download or edit)
	FeatureCount int64 // the sum over the layers whose dataset it shows (MapSearchShows)
	Extent       BBox  // its own; else the union of the extents of the datasets it shows; else the world
}

// MapSearchDocument computes the search entry of m: owner is m's owner
// (nil when it has none), dataset returns the dataset with an id (nil when
// there is none). A dataset the policy does not let the entry show
// (MapSearchShows) counts as missing: the entry of a map on a private
// dataset and on an id that does not exist are the same.
func MapSearchDocument(m *Map, owner *User, dataset func(id int64) *Dataset) MapSearchDoc {
	var d MapSearchDoc
	d.Shared, _ = SearchGrants(m.Permissions)
	union, found := BBox{W: 181, S: 91, E: -181, N: -91}, false
	for _, l := range m.Layers {
		id, ok := l.DatasetID()
		if !ok {
			continue
		}
		ds := dataset(id)
		if !MapSearchShows(owner, m, ds) {
			continue
		}
		d.FeatureCount += ds.FeatureCount
		if e := ds.Extent; e != nil {
			union = BBox{W: min(union.W, e.MinX), S: min(union.S, e.MinY), E: max(union.E, e.MaxX), N: max(union.N, e.MaxY)}
			found = true
		}
	}
	switch {
	case m.Extent != nil:
		d.Extent = BBox{W: m.Extent[0], S: m.Extent[1], E: m.Extent[2], N: m.Extent[3]}
	case found:
		d.Extent = union
	case m.Projection == ProjectionLonLat:
		d.Extent = BBox{W: -180, S: -90, E: 180, N: 90}
	default:
		d.Extent = BBox{W: -180, S: -85, E: 180, N: 85}
	}
	return d
}

// SearchResult is one dataset or map found.
type SearchResult struct {
	Model        string // ModelOverlay or ModelMap
	ID           int64
	OwnerID      int64  // 0 when the owner's account is gone
	Owner        string // the owner's login
	Title        string
	Description  *string // nil for a map without one
	Author       string  // a dataset's author field
	Tags         string  // "a, b"
	Extent       *BBox   // nil when the object has none
	FeatureCount int64   // a map's: the sum of its dataset layers'
	DataType     string  // a dataset's data type
	Source       string  // the URL a dataset was registered from
	Permissions  []Permission
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// SearchService finds datasets and maps.
type SearchService interface {
	// Search returns the page of f.Offset, f.Limit of the objects that match
	// f and that f.Visibility lets the caller see, and how many there are in
	// all. Every change to a dataset or map is visible to the next search.
	// EINVALID when f is not valid.
	Search(ctx context.Context, f SearchFilter) ([]*SearchResult, int64, error)
}

// Validate checks the parts of f that parsing does not.
func (f *SearchFilter) Validate() error {
	switch f.Model {
	case "", ModelOverlay, ModelMap:
	default:
		return Errorf(EINVALID, "model: %q is not Overlay or Map", f.Model)
	}
	switch f.Sort {
	case "", SortRelevance, SortTitle, SortCreated, SortUpdated, SortFeatureCount:
	default:
		return Errorf(EINVALID, "sort: %q is not one of relevance, title, created, updated, feature_count", f.Sort)
	}
	if f.Limit < 1 || f.Limit > MaxSearchLimit {
		return Errorf(EINVALID, "limit: %d is not between 1 and %d", f.Limit, MaxSearchLimit)
	}
	if f.Offset < 0 || f.Offset > MaxSearchOffset {
		return Errorf(EINVALID, "page: too far")
	}
	if len(f.Terms) > MaxSearchTerms {
		return Errorf(EINVALID, "query: more than %d terms", MaxSearchTerms)
	}
	for _, t := range f.Terms {
		switch t.Field {
		case "", FieldTitle, FieldDescription, FieldTags:
		default:
			return Errorf(EINVALID, "query: unknown field %q", t.Field)
		}
	}
	if b := f.BBox; b != nil {
		if err := b.validate("bbox"); err != nil {
			return err
		}
	}
	return nil
}

// validate checks a box: finite, south not above north, latitudes within ±90.
func (b *BBox) validate(param string) error {
	for _, v := range []float64{b.W, b.S, b.E, b.N} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Errorf(EINVALID, "%s: coordinates must be finite numbers", param)
		}
	}
	if b.S > b.N {
		return Errorf(EINVALID, "%s: south (%g) is above north (%g); the order is west,south,east,north", param, b.S, b.N)
	}
	if b.S < -90 || b.N > 90 {
		return Errorf(EINVALID, "%s: latitudes must be within -90 and 90; the order is west,south,east,north", param)
	}
	return nil
}

// queryFields maps the field prefixes of a query to fields; user: is apart.
var queryFields = map[string]string{
	"title": FieldTitle, "description": FieldDescription, "tag": FieldTags, "tags": FieldTags,
}

// ParseSearchQuery reads the query parameter: words and "quoted phrases",
// each optionally prefixed by title:, description:, tag: or tags:, and
// user:<login>. All must match. A bare "and" between terms is a connector
// (the legacy Maker client sends "tag:a and tag:b"), a lone * matches
// everything, a word ending in * is a prefix, and the last unquoted word
// (not a tag) is a prefix too, so that a query typed so far finds what it
// will find. Terms with no letter or digit are dropped. An empty query
// returns no terms: everything matches.
func ParseSearchQuery(q string) (terms []SearchTerm, users []string, err error) {
	if len(q) > MaxSearchQueryLen {
		return nil, nil, Errorf(EINVALID, "query: longer than %d bytes", MaxSearchQueryLen)
	}
	if !utf8.ValidString(q) {
		return nil, nil, Errorf(EINVALID, "query: not valid UTF-8")
	}
	lastQuoted := false
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		// One token: [field:]("phrase"|word).
		field, prefix, isField := "", "", false
		j := i
		for j < len(q) && isFieldByte(q[j]) {
			j++
		}
		if j < len(q) && q[j] == ':' && j > i {
			prefix = strings.ToLower(q[i:j])
			if f, ok := queryFields[prefix]; ok {
				field, isField, i = f, true, j+1
			} else if prefix == "user" {
				isField, i = true, j+1
			}
		}
		var text string
		quoted := false
		if i < len(q) && q[i] == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				text, i = q[i+1:], len(q)
			} else {
				text, i = q[i+1:i+1+end], i+2+end
			}
			quoted = true
		} else {
			end := strings.IndexFunc(q[i:], unicode.IsSpace)
			if end < 0 {
				end = len(q) - i
			}
			text, i = q[i:i+end], i+end
		}
		text = strings.TrimSpace(text)
		switch {
		case isField && prefix == "user":
			if text != "" {
				users = append(users, text)
			}
			continue
		case !isField && !quoted && (strings.EqualFold(text, "and") || text == "&&" || text == "*"):
			continue
		}
		t := SearchTerm{Field: field, Text: text, Phrase: quoted}
		if !quoted && strings.HasSuffix(t.Text, "*") {
			t.Text, t.Prefix = strings.TrimRight(t.Text, "*"), true
		}
		if strings.IndexFunc(t.Text, isWordRune) < 0 {
			continue
		}
		terms = append(terms, t)
		lastQuoted = quoted
	}
	if n := len(terms); n > 0 && !lastQuoted && terms[n-1].Field != FieldTags {
		terms[n-1].Prefix = true
	}
	if len(terms) > MaxSearchTerms {
		return nil, nil, Errorf(EINVALID, "query: more than %d terms", MaxSearchTerms)
	}
	return terms, users, nil
}

func isFieldByte(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isWordRune reports whether r is part of a word for the full-text index.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
