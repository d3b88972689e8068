// Package registry picks the reader of an upload's kind and the writer of
// a download's suffix among the format packages, so that what reads and
// what writes each format is said in one table (format.go keeps the
// suffixes, content types and upload kinds; the readers and writers live
// in the format packages themselves).
package registry

import (
	"context"
	"io"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/atom"
	"mapcommons/format/csv"
	"mapcommons/format/geojson"
	"mapcommons/format/gpkg"
	"mapcommons/format/kml"
	"mapcommons/format/shapefile"
	"mapcommons/format/spatialite"
)

// A stream reader opens a file of its kind as a feature source. What a
// reader knows beyond the features, its source tells through optional
// methods: Empty() error, when a document without features is refused
// (saying why) rather than stored empty; Name() string, the document's
// own name, a default title.
type streamReader func(rs io.ReadSeeker) (mapcommons.FeatureSource, error)

// readers are the upload kinds read from one stream. Shapefiles (parts
// read together), zips and KMZ (archives) and GeoPackages (databases,
// one layer of them) are opened by the ingest rules of their own.
var readers = map[string]streamReader{
	format.KindCSV:     func(rs io.ReadSeeker) (mapcommons.FeatureSource, error) { return csv.Open(rs) },
	format.KindKML:     func(rs io.ReadSeeker) (mapcommons.FeatureSource, error) { return kml.Open(rs, kml.Options{}) },
	format.KindAtom:    func(rs io.ReadSeeker) (mapcommons.FeatureSource, error) { return atom.Open(rs) },
	format.KindGeoJSON: func(rs io.ReadSeeker) (mapcommons.FeatureSource, error) { return geojson.Open(rs) },
}

// Open opens rs as a feature source of the upload kind; ok is false when
// the kind is not read from one stream.
func Open(kind string, rs io.ReadSeeker) (src mapcommons.FeatureSource, ok bool, err error) {
	open, ok := readers[kind]
	if !ok {
		return nil, false, nil
	}
	src, err = open(rs)
	return src, true, err
}

// A Download is how a dataset is written in one download format.
type Download struct {
	Format      string // the format written: csv, geojson, kml, kmz, atom, zip, sqlite, gpkg
	ContentType string
	// Stream writes the features to w as they come; tmp is a directory for
	// scratch files. Nil for the formats built in a file.
	Stream func(w io.Writer, m format.Meta, scan format.Scan, tmp string) error
	// Build writes the file at path: the formats that are databases, sent
	// with their length once complete.
	Build func(ctx context.Context, path string, m format.Meta, scan format.Scan) error
}

var downloads = map[string]Download{
	"csv": {Stream: func(w io.Writer, m format.Meta, scan format.Scan, _ string) error {
		cw := csv.NewWriter(w, m.Attributes, m.GeometryMask == 1<<1)
		if err := scan(cw.Write); err != nil {
			return err
		}
		return cw.Flush()
	}},
	"geojson": {Stream: func(w io.Writer, m format.Meta, scan format.Scan, _ string) error {
		gw := geojson.NewWriter(w, m.Attributes)
		gw.Begin(nil)
		if err := scan(gw.Write); err != nil {
			return err
		}
		return gw.End()
	}},
	"kml":  {Stream: func(w io.Writer, m format.Meta, scan format.Scan, _ string) error { return kml.Write(w, m, scan) }},
	"kmz":  {Stream: func(w io.Writer, m format.Meta, scan format.Scan, _ string) error { return kml.WriteKMZ(w, m, scan) }},
	"atom": {Stream: func(w io.Writer, m format.Meta, scan format.Scan, _ string) error { return atom.Write(w, m, scan) }},
	// WriteZip builds the shapefiles in scratch files and writes nothing
	// until they are complete, so a failure is still an error answer.
	"zip":    {Stream: shapefile.WriteZip},
	"sqlite": {Build: spatialite.WriteFile},
	"gpkg":   {Build: gpkg.WriteFile},
}

// DownloadOf returns how a dataset downloads as the suffix ext (one of
// format.DatasetDownload's: spatialite is sqlite, rss is atom), and
// whether it does.
func DownloadOf(ext string) (Download, bool) {
	f, ok := format.DatasetDownload(ext)
	if !ok {
		return Download{}, false
	}
	d, ok := downloads[f]
	if !ok {
		return Download{}, false
	}
	d.Format = f
	d.ContentType, _ = format.ContentType(f)
	return d, true
}
