// Package kml reads uploaded KML and KMZ files as features and writes
// datasets (and, through the Encoder, styled maps) as KML and KMZ.
//
// # Reading
//
// The Reader reads its input twice, like the CSV reader: pass 1 (in Open)
// walks the whole document, finds the attributes, infers their types and
// validates every Placemark, so that a bad file is refused before the caller
// stores anything; pass 2 (Next) streams the features. Both passes stream
// tokens from encoding/xml; only one Placemark is held in memory at a time.
//
// Reading rules:
//
//   - Every Placemark is a feature, wherever it is: under Document, in
//     nested Folders, directly under kml, or as the root element. Elements
//     are matched by local name, so any namespace prefix (or none) works and
//     KML 2.0, 2.1 and 2.2 read alike; unknown elements (gx extensions,
//     styles, views, NetworkLinks …) are skipped.
//   - Attributes: name and description (strings, first when present), then
//     in order of first appearance ExtendedData values (Data name="x" with
//     its value, SchemaData/SimpleData name="x"), TimeStamp/when as
//     "timestamp" and TimeSpan/begin and end as "begin" and "end" (strings).
//     A Data's displayName becomes the attribute's description. Names are
//     made unique by mapcommons.NormalizeAttributes (a later "name" gets
//     "name_2"). Values are trimmed; an empty or missing value is null. The
//     types of ExtendedData attributes are inferred from their values with
//     package infer (integer, float, else string); a Schema SimpleField
//     declared as string keeps its attribute a string (zip codes, FIPS
//     codes). When one Placemark gives the same attribute twice, the last
//     one counts.
//   - Geometry: Point, LineString, LinearRing (a closed LineString), Polygon
//     (outerBoundaryIs, innerBoundaryIs holes), MultiGeometry (MultiPoint,
//     MultiLineString or MultiPolygon when its members are all of one kind,
//     else GeometryCollection; nested MultiGeometry is flattened), gx:Track
//     (a LineString, a Point when it has one coordinate) and gx:MultiTrack.
//     A Placemark with several geometries is read as if they were in one
//     MultiGeometry; one with none (or only empty ones) has a nil geometry.
//   - coordinates: tuples lon,lat[,alt] separated by white space; white
//     space next to the commas is allowed. Altitudes are dropped. Longitudes
//     must be in [-180, 180] and latitudes in [-90, 90]. A Point has one
//     tuple, a LineString at least 2, a ring at least 4 once it is closed
//     (an open ring is closed).
//   - Text is UTF-8 unless the XML declaration names another encoding:
//     ISO-8859-1, US-ASCII and windows-1252 are all read as windows-1252 (as
//     browsers do), ISO-8859-15 as itself; other encodings, UTF-16 and
//     undeclared non-UTF-8 text are refused with a clear error. HTML named
//     entities (&nbsp; …) are accepted.
//   - Limits (see Options), each an EINVALID error naming the line: a
//     DOCTYPE that declares entities (entity expansion attacks), element
//     nesting, attributes, the length of a value, the coordinates of one
//     Placemark, the length of any XML token (a tag at most 64 KiB).
//
// Errors are *mapcommons.Error with code EINVALID and say where:
// "kml: line 12: Placemark 3: coordinates: latitude 91 out of range".
// Errors of the underlying reader are returned wrapped, not EINVALID.
//
// # Writing
//
// Encoder writes a KML document piece by piece (styles, folders,
// placemarks, network links); Write and WriteKMZ write a whole dataset
// with it. Strings are escaped and characters XML 1.0 does not allow are
// dropped; numbers are written in the shortest form that reads back
// exactly.
package kml

import "mapcommons"

// Options bound what a KML document may hold. Zero fields take the
// defaults.
type Options struct {
	// MaxAttributes bounds the distinct attributes of the document;
	// default and upper bound mapcommons.MaxAttributes (1000).
	MaxAttributes int
	// MaxValueBytes bounds one value (name, description, Data value …)
	// and one attribute name; default 1 MiB.
	MaxValueBytes int
	// MaxDepth bounds the nesting of elements; default 100.
	MaxDepth int
	// MaxCoords bounds the coordinate tuples of one Placemark; default
	// 10,000,000.
	MaxCoords int
	// MaxCoordBytes bounds the text of one coordinates element; default
	// 512 MiB.
	MaxCoordBytes int64
}

// Defaults of Options.
const (
	DefaultMaxValueBytes = 1 << 20
	DefaultMaxDepth      = 100
	DefaultMaxCoords     = 10_000_000
	DefaultMaxCoordBytes = 512 << 20
)

// maxTagBytes bounds one start or end tag with its attributes, which
// encoding/xml holds as many small strings.
const maxTagBytes = 64 << 10

// maxPlacemarkBytes bounds the text of all values of one Placemark together.
const maxPlacemarkBytes = 16 << 20

func (o Options) withDefaults() Options {
	if o.MaxAttributes <= 0 || o.MaxAttributes > mapcommons.MaxAttributes {
		o.MaxAttributes = mapcommons.MaxAttributes
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxCoords <= 0 {
		o.MaxCoords = DefaultMaxCoords
	}
	if o.MaxCoordBytes <= 0 {
		o.MaxCoordBytes = DefaultMaxCoordBytes
	}
	return o
}
