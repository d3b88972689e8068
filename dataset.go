package mapcommons

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"mapcommons/format/wkb"
)

// AttrType is the type of an attribute column.
type AttrType string

// Attribute types. Dates are kept as strings for now.
const (
	AttrInteger AttrType = "integer"
	AttrFloat   AttrType = "float"
	AttrString  AttrType = "string"
	AttrBoolean AttrType = "boolean"
	AttrDate    AttrType = "date"
)

// Numeric reports whether values of t are numbers.
func (t AttrType) Numeric() bool { return t == AttrInteger || t == AttrFloat }

// Attribute describes one attribute column of a dataset.
type Attribute struct {
	ID           int64    `json:"id"` // zero-based column index within the dataset
	Name         string   `json:"name"`
	OriginalName string   `json:"original_name"`
	Type         AttrType `json:"data_type"`
	Description  string   `json:"description"`
}

// Stats summarises one numeric attribute over all features.
type Stats struct {
	Min      float64 `json:"min"`
	Max      float64 `json:"max"`
	Mean     float64 `json:"mean"`
	Median   float64 `json:"median"`
	Stdev    float64 `json:"stdev"`
	Variance float64 `json:"variance"`
}

// Dataset states.
const (
	StateComplete    = "complete"
	StateFetchFailed = "fetch_failed" // a feed's last refetch failed; its previous data stays
)

// Data types of datasets (the JSON's data_type).
const (
	DataTypeDataset = "Dataset"
	DataTypeFeed    = "Data Feed" // registered from a URL and refetched from it
	DataTypeWMS     = "WMS"       // a registered WMS service: no features
	DataTypeTiles   = "Tiles"     // a registered tile URL template: no features
)

// OnlyPoints reports whether every geometry of the dataset is a single Point.
func (ds *Dataset) OnlyPoints() bool { return ds.GeometryMask == 1<<1 }

// Dataset is an uploaded or registered collection of features and its metadata.
type Dataset struct {
	ID      int64
	OwnerID int64  // 0 when the owner's account is gone
	Owner   string // the owner's login ("contributor")

	Metadata

	Type     string // the file type it came from: csv, shp, kml, atom
	DataType string // "Dataset" or "Data Feed"
	State    string

	FeatureCount  int64
	Extent        *wkb.Rect // nil when there is no geometry
	GeometryTypes []string  // "point", "line", "area" in that order, each once
	GeometryMask  uint32    // bit 1<<t for each WKB type code t among the features
	Attributes    []Attribute
	Stats         map[string]Stats // by attribute name, numeric attributes only
	CRS           string           // the name of the CRS the data came in, "" when unknown
	PRJ           string           // the .prj text it came with, kept for exports

	URL     string // the source URL of a registered dataset, "" for uploads
	URLType string // what the URL serves: csv, kml, atom, geojson, wms, tile …
	// FeedKey names the attribute whose values identify the rows of a
	// feed ("" when none): a refetch then changes only the rows whose key
	// is new, gone or whose values changed (ingest/feedsync.go).
	FeedKey        string
	LastFetchError string    // why the last refetch failed, "" when it did not
	FetchedAt      time.Time // when the features were last fetched (zero for uploads)

	// Permissions is the sharing list: which groups (or everyone) may view,
	// download or edit the dataset beyond its owner and administrators.
	Permissions []Permission

	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64 // grows with every change of the dataset or its features
}

// Metadata is the user-editable description of a dataset.
type Metadata struct {
	Title          string
	Description    string
	Author         string
	Tags           string // comma-separated words
	MetadataURL    string
	CitationURL    string
	ContactName    string
	ContactAddress string
	ContactPhone   string
	ProcessNotes   string
}

// MetadataUpdate names the metadata fields to change, and optionally the
// sharing list; nil means unchanged.
type MetadataUpdate struct {
	Title          *string
	Description    *string
	Author         *string
	Tags           *string
	MetadataURL    *string
	CitationURL    *string
	ContactName    *string
	ContactAddress *string
	ContactPhone   *string
	ProcessNotes   *string

	// Permissions, when given, replaces the dataset's sharing list whole
	// (Fields and Apply leave it alone).
	Permissions *[]Permission
	// URLType, when given, is how a URL-registered dataset's feed is read
	// from its next fetch on (Fields and Apply leave it alone).
	URLType *string
	// FeedKey, when given, is the attribute that identifies the rows of a
	// URL-registered dataset's feed from its next fetch on ("" for none;
	// Fields and Apply leave it alone).
	FeedKey *string
}

// Fields pairs each parameter name with its field, for parsing and applying.
func (u *MetadataUpdate) Fields() []struct {
	Name string
	Ptr  **string
} {
	return []struct {
		Name string
		Ptr  **string
	}{
		{"title", &u.Title}, {"description", &u.Description}, {"author", &u.Author},
		{"tags", &u.Tags}, {"metadata_url", &u.MetadataURL}, {"citation_url", &u.CitationURL},
		{"contact_name", &u.ContactName}, {"contact_address", &u.ContactAddress},
		{"contact_phone", &u.ContactPhone}, {"process_notes", &u.ProcessNotes},
	}
}

// Apply copies the given fields of u onto m.
func (u *MetadataUpdate) Apply(m *Metadata) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&m.Title, u.Title)
	set(&m.Description, u.Description)
	set(&m.Author, u.Author)
	set(&m.Tags, u.Tags)
	set(&m.MetadataURL, u.MetadataURL)
	set(&m.CitationURL, u.CitationURL)
	set(&m.ContactName, u.ContactName)
	set(&m.ContactAddress, u.ContactAddress)
	set(&m.ContactPhone, u.ContactPhone)
	set(&m.ProcessNotes, u.ProcessNotes)
}

// Size limits of metadata.
const (
	MaxTitleLen = 500
	MaxTextLen  = 64 << 10
)

// Validate checks the metadata.
func (m *Metadata) Validate() error {
	if len(m.Title) > MaxTitleLen {
		return Errorf(EINVALID, "title: longer than %d bytes", MaxTitleLen)
	}
	for _, f := range []struct{ name, v string }{
		{"title", m.Title},
		{"description", m.Description}, {"author", m.Author}, {"tags", m.Tags},
		{"metadata_url", m.MetadataURL}, {"citation_url", m.CitationURL},
		{"contact_name", m.ContactName}, {"contact_address", m.ContactAddress},
		{"contact_phone", m.ContactPhone}, {"process_notes", m.ProcessNotes},
	} {
		if len(f.v) > MaxTextLen {
			return Errorf(EINVALID, "%s: longer than %d bytes", f.name, MaxTextLen)
		}
		// Every store keeps it as text: PostgreSQL refuses a NUL byte and
		// bytes that are not UTF-8, so every store does.
		if !utf8.ValidString(f.v) || strings.IndexByte(f.v, 0) >= 0 {
			return Errorf(EINVALID, "%s: not UTF-8 text, or holds a NUL byte", f.name)
		}
	}
	return nil
}

// NormalizeTags turns a comma- or space-separated tag string into the
// stored form: lower-case words joined by ", ", duplicates removed.
func NormalizeTags(s string) string {
	sep := func(r rune) bool { return r == ',' }
	if !strings.Contains(s, ",") {
		sep = func(r rune) bool { return r == ' ' || r == '\t' }
	}
	seen := map[string]bool{}
	var out []string
	for _, t := range strings.FieldsFunc(s, sep) {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return strings.Join(out, ", ")
}

// DatasetFilter selects datasets in FindDatasets.
type DatasetFilter struct {
	OwnerID *int64
	Feeds   bool // only datasets registered from a URL that can be refetched
	Offset  int
	Limit   int // 0 means no limit
}

// DatasetService stores datasets and their features.
type DatasetService interface {
	// FindDatasetByID returns the dataset with its sharing list (never nil);
	// ENOTFOUND when there is no such dataset.
	FindDatasetByID(ctx context.Context, id int64) (*Dataset, error)
	// FindDatasets returns a page of datasets by id and the total count.
	FindDatasets(ctx context.Context, f DatasetFilter) ([]*Dataset, int, error)
	// CreateDataset stores ds and every feature of src atomically: on any
	// error nothing is left behind. It sets ds.ID, the counts, extent, stats
	// and times, and stores ds.Permissions as given (nil: none). Returns
	// EINVALID when src reports bad input, or its error.
	CreateDataset(ctx context.Context, ds *Dataset, src FeatureSource) error
	// UpdateDataset changes metadata and, when upd.Permissions is given, the
	// sharing list; ENOTFOUND when there is no such dataset.
	UpdateDataset(ctx context.Context, id int64, upd MetadataUpdate) (*Dataset, error)
	// DeleteDataset removes the dataset and its features for good;
	// ENOTFOUND when there is no such dataset.
	DeleteDataset(ctx context.Context, id int64) error
	// FindDatasetByURL returns the dataset registered from url; ENOTFOUND
	// when there is none. (CreateDataset answers ECONFLICT for a URL that
	// is registered already.)
	FindDatasetByURL(ctx context.Context, url string) (*Dataset, error)
	// ReplaceFeatures replaces a dataset's attributes and features with
	// those of src, all at once: readers see the old or the new, never a
	// mix, and on any error the old stay. New rows identical to old ones
	// (values and geometry) keep the old ids where ids can still increase
	// with positions; the others get ids never given before. It marks the
	// dataset fetched now (state complete, no fetch error). ENOTFOUND when there is no such
	// dataset; src's errors as they come.
	ReplaceFeatures(ctx context.Context, id int64, src FeatureSource) (*Dataset, error)
	// RecordFetchError notes that refetching a dataset failed (state
	// fetch_failed, the message in LastFetchError); its features stay.
	// An empty message records a successful refetch that changed the
	// features by other means (FeatureService.ApplyEdits): state
	// complete, no fetch error, FetchedAt now. Either way the version
	// grows. ENOTFOUND when there is no such dataset.
	RecordFetchError(ctx context.Context, id int64, message string) error
}

// PrepareCreate checks a new dataset's attributes against MaxAttributes
// and fills the defaults of its state and data type: what every store's
// CreateDataset does first.
func (ds *Dataset) PrepareCreate(attrs []Attribute) error {
	if len(attrs) > MaxAttributes {
		return Errorf(EINVALID, "too many attribute columns (%d, at most %d)", len(attrs), MaxAttributes)
	}
	if ds.State == "" {
		ds.State = StateComplete
	}
	if ds.DataType == "" {
		ds.DataType = DataTypeDataset
	}
	return nil
}

// MaxAttributes bounds the number of attribute columns of a dataset.
const MaxAttributes = 1000

// NormalizeAttributes gives every attribute a usable, unique name and its
// index as ID: blank names become "column_<n>", "geometry" (which the feature
// JSON uses for the geometry) becomes "geometry_<n>", and a name equal to an
// earlier one (ignoring case) gets the first free suffix "_2", "_3", ...
// OriginalName keeps the name as it came when it is empty.
func NormalizeAttributes(attrs []Attribute) error {
	if len(attrs) > MaxAttributes {
		return Errorf(EINVALID, "too many attribute columns (%d, at most %d)", len(attrs), MaxAttributes)
	}
	taken := make(map[string]bool, len(attrs))
	for i := range attrs {
		a := &attrs[i]
		if a.OriginalName == "" {
			a.OriginalName = a.Name
		}
		name := strings.TrimSpace(a.Name)
		if name == "" {
			name = "column_" + itoa(i+1)
		}
		base := name
		if strings.EqualFold(base, "geometry") {
			name = base + "_2"
		}
		for n := 2; taken[strings.ToLower(name)]; n++ {
			name = base + "_" + itoa(n)
		}
		taken[strings.ToLower(name)] = true
		a.Name = name
		a.ID = int64(i)
	}
	return nil
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}
