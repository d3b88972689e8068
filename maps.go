package mapcommons

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Map projections a map may ask for.
const (
	ProjectionMercator = "EPSG:3785" // the default: spherical (web) Mercator
	ProjectionLonLat   = "EPSG:4326"
)

// Map is a styled composition of layers (spec "Map").
type Map struct {
	ID      int64
	OwnerID int64  // 0 when the owner's account is gone
	Owner   string // the owner's login ("contributor")

	Title       string
	Basemap     string
	Description *string // nil when unset (the JSON says null)
	Tags        []string
	Extent      *[4]float64 // west, south, east, north; nil: from the layers, or the world
	Projection  string
	Layers      []Layer
	Permissions []Permission

	CreatedAt time.Time
	UpdatedAt time.Time
}

// Layer is one dataset or external source drawn on a map, addressed by its
// index in the map's list.
type Layer struct {
	Source   string  `json:"source"` // finder:<dataset id> or url:<url>
	Title    string  `json:"title"`
	Subtitle string  `json:"subtitle"`
	Opacity  float64 `json:"opacity"`
	Visible  bool    `json:"visible"`
	Styles   Styles  `json:"styles"`
}

// DatasetID returns the id of the dataset a finder:<id> source names;
// false for any other source.
func (l Layer) DatasetID() (int64, bool) {
	rest, ok := strings.CutPrefix(l.Source, "finder:")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0
}

// DatasetIDs returns the ids of the datasets the map's layers name
// (finder:<id> sources), each once, in the order of the layers.
func (m *Map) DatasetIDs() []int64 {
	var ids []int64
	for _, l := range m.Layers {
		if id, ok := l.DatasetID(); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// Layer types (Styles.Type).
const (
	LayerPoint        = "POINT"
	LayerPrimitive    = "PRIMITIVE"
	LayerGraduated    = "GRADUATED"
	LayerProportional = "PROPORTIONAL"
	LayerChoropleth   = "CHOROPLETH"
)

// How a layer of many points shows its density (Styles.Density, an
// extension of the GeoCommons styles): DensityAuto (also "") clusters a
// layer of plain symbols past the web application's threshold;
// DensityClusters and DensityHeatmap draw it so whatever its size;
// DensityNone draws every point with its own symbol.
const (
	DensityAuto     = "auto"
	DensityClusters = "clusters"
	DensityHeatmap  = "heatmap"
	DensityNone     = "none"
)

// Styles are the drawing options of a layer (spec "Styles"). Pointers and
// zero values mean "not given"; the defaults apply when they are shown.
type Styles struct {
	Type     string    `json:"type"`
	Icon     Icon      `json:"icon"`
	Stroke   Stroke    `json:"stroke"`
	Fill     Fill      `json:"fill"`
	Temporal Temporal  `json:"temporal"`
	Click    string    `json:"click,omitempty"`
	Hover    string    `json:"hover,omitempty"`
	Slider   *Slider   `json:"slider,omitempty"`
	Timeline *Timeline `json:"timeline,omitempty"`
	Density  string    `json:"density,omitempty"`
}

// Classing are the options that class a layer by an attribute.
type Classing struct {
	SelectedAttribute    string      `json:"selectedAttribute,omitempty"`
	ClassificationType   string      `json:"classificationType,omitempty"`
	ClassificationBreaks []float64   `json:"classificationBreaks,omitempty"`
	Categories           int         `json:"categories,omitempty"`
	Range                *[2]float64 `json:"range,omitempty"`
	CriticalValue        *float64    `json:"criticalValue,omitempty"`
}

// Icon options: how points are drawn.
type Icon struct {
	Classing
	Color      *int     `json:"color,omitempty"`
	Symbol     string   `json:"symbol,omitempty"`
	Opacity    *float64 `json:"opacity,omitempty"`
	Dropshadow bool     `json:"dropshadow"`
	LineStyle  string   `json:"lineStyle,omitempty"`
	Size       float64  `json:"size"`
}

// Stroke options: outlines and lines.
type Stroke struct {
	Color  *int     `json:"color,omitempty"`
	Alpha  float64  `json:"alpha"`
	Weight *float64 `json:"weight,omitempty"`
}

// Fill options: interiors, and the colours of classes.
type Fill struct {
	Classing
	Color   *int    `json:"color,omitempty"`
	Colors  []int   `json:"colors,omitempty"`
	Ramp    string  `json:"ramp,omitempty"` // the ramp family the colours came from, when named
	Opacity float64 `json:"opacity"`
}

// Temporal options: the attributes that animate the layer in time.
type Temporal struct {
	Attributes []string `json:"attributes,omitempty"`
}

// Slider is the span the time slider's window covers: milliseconds, or now;
// or, in the object form of the original service's documentation
// ({"period": 86400, "end": "now"}), a range as a Timeline is.
type Slider struct {
	Now    bool
	Millis int64
	Range  *Timeline `json:",omitempty"`
}

// Timeline is the range the time slider covers: two of begin, end, period.
type Timeline struct {
	Begin  *TimeMark
	End    *TimeMark
	Period *int64 // milliseconds
}

// TimeMark is a time element: an instant (milliseconds since the epoch) or
// now. Text is the instant as it was given (milliseconds, or ISO 8601 with
// its offset), so that it is answered as given.
type TimeMark struct {
	Now    bool
	Millis int64
	Text   string `json:",omitempty"`
}

// Default style values (spec "Limits").
const (
	DefaultLayerOpacity = 1.0
	DefaultFillOpacity  = 0.75
	DefaultStrokeAlpha  = 0.75
	DefaultIconSize     = 1.0
	DefaultCategories   = 5
)

// MapService stores maps.
type MapService interface {
	// CreateMap stores m and sets its ID and times.
	CreateMap(ctx context.Context, m *Map) error
	// FindMapByID returns a map with its owner's login; ENOTFOUND when
	// there is none.
	FindMapByID(ctx context.Context, id int64) (*Map, error)
	// UpdateMap loads the map, lets fn change it, and stores the result,
	// all in one transaction (fn's error aborts it). It returns the map as
	// stored.
	UpdateMap(ctx context.Context, id int64, fn func(*Map) error) (*Map, error)
	// DeleteMap removes a map; ENOTFOUND when there is none.
	DeleteMap(ctx context.Context, id int64) error
	// MapsShowing returns the ids of the maps with a finder: layer of
	// the dataset, lowest first, at most limit of them: the maps whose
	// images change with it. It tells nothing of rights.
	MapsShowing(ctx context.Context, datasetID int64, limit int) ([]int64, error)
}
