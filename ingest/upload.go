// Package ingest reads data into feature sources: an upload's files (a
// file of any readable kind, a shapefile's parts, a zip or KMZ archive, a
// GeoPackage layer) and a fetched feed's file, each with its coordinates
// checked as longitude/latitude or reprojected to them, and bounded in what
// it may expand to.
package ingest

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/archive"
	"mapcommons/format/gpkg"
	"mapcommons/format/kml"
	"mapcommons/format/registry"
	"mapcommons/format/shapefile"
	"mapcommons/format/wkb"
	"mapcommons/params"
	"mapcommons/proj"
)

// Uploads: finding the data in a create request (file parts, a raw body, a
// fetched URL), opening the reader of its kind, and, for zipped uploads,
// extracting the entries the reader needs into a directory of their own.

// Opener opens uploads within its bounds.
type Opener struct {
	// TempDir is where zipped entries are extracted ("": the system's).
	TempDir string
	// MaxUpload bounds what a zipped upload may expand to: all its
	// extracted entries together no more than this, the most the same
	// data could have been sent as unzipped.
	MaxUpload int64
}

// Upload is an opened data upload. Close it when done: that closes its
// files and removes those it owns.
type Upload struct {
	Source mapcommons.FeatureSource
	Kind   string // the Dataset.Type it gives
	Name   string // the file's base name without extension, for the default title
	CRS    string
	PRJ    string
	// layer names the table of a GeoPackage to read ("" the first).
	layer string
	ctx   context.Context
	// opened, when set, learns of each file the upload opens (the
	// command line's import shows how far it has read).
	opened func(*os.File)
	// files are opened by the upload; closers are readers holding files of
	// their own; remove are files and dirs the upload owns (a fetched body,
	// extracted entries).
	files   []*os.File
	closers []io.Closer
	remove  []string
	// fetched is the file a feed's fetch wrote and fetchedKind the kind
	// it was opened as: a refetch may read it again (Reopen).
	fetched, fetchedKind string
}

// setSource takes an opened source: a document that says it has no
// features (Empty) is refused, saying why, rather than stored as an empty
// dataset; the document's own name (Name), when it has one, is the
// default title.
func (u *Upload) setSource(src mapcommons.FeatureSource) error {
	if e, ok := src.(interface{ Empty() error }); ok {
		if err := e.Empty(); err != nil {
			return err
		}
	}
	if d, ok := src.(interface{ Name() string }); ok {
		if n := strings.TrimSpace(d.Name()); n != "" {
			u.Name = n
		}
	}
	u.Source = src
	return nil
}

func (u *Upload) Close() {
	for _, c := range u.closers {
		c.Close()
	}
	for _, f := range u.files {
		f.Close()
	}
	for _, p := range u.remove {
		os.RemoveAll(p)
	}
}

func (u *Upload) open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err == nil {
		u.files = append(u.files, f)
		if u.opened != nil {
			u.opened(f)
		}
	}
	return f, err
}

// uploadExt is the extension an upload part names: "shp" for dataset[shp]
// or overlay[shp], else the extension of its file name.
func uploadExt(up params.Upload) string {
	for _, p := range []string{"dataset[", "overlay["} {
		if strings.HasPrefix(up.Field, p) && strings.HasSuffix(up.Field, "]") {
			return strings.ToLower(up.Field[len(p) : len(up.Field)-1])
		}
	}
	return strings.ToLower(strings.TrimPrefix(filepath.Ext(up.Filename), "."))
}

func baseName(filename string) string {
	filename = path.Base(filepath.ToSlash(filename))
	if filename == "." || filename == "/" {
		return ""
	}
	return strings.TrimSuffix(filename, path.Ext(filename))
}

// readSmall reads a sidecar file of at most limit bytes.
func readSmall(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", err
	}
	if int64(len(b)) > limit {
		return "", mapcommons.Errorf(mapcommons.EINVALID, "%s: larger than %d bytes", filepath.Base(path), limit)
	}
	return string(b), nil
}

// openFile opens one file of an upload kind as the upload's source.
// filename, when known, gives the default title.
func (o Opener) openFile(up *Upload, kind, path, filename string) error {
	if filename != "" {
		up.Name = baseName(filename)
	}
	if kind == format.KindZip || kind == format.KindKMZ {
		return o.openArchive(up, kind, path)
	}
	f, err := up.open(path)
	if err != nil {
		return err
	}
	up.Kind = kind
	if kind == format.KindGPKG {
		return o.openGPKG(up, path)
	}
	src, ok, err := registry.Open(kind, f)
	if !ok {
		return mapcommons.Errorf(mapcommons.EUNSUPPORTED, "%s uploads are not supported", kind)
	}
	if err != nil {
		return err
	}
	return up.setSource(src)
}

// archiveLimits bounds what a zipped upload may expand to: all its
// extracted entries together no more than the upload limit, the most the
// same data could have been sent as unzipped.
func (o Opener) archiveLimits() archive.Limits {
	return archive.Limits{MaxEntries: 1000, MaxBytes: o.MaxUpload}
}

// LimitFeatures bounds what src may add to a dataset holding have
// features already (appends; 0 otherwise) to max (< 0: no bound).
func LimitFeatures(src mapcommons.FeatureSource, have, max int64) mapcommons.FeatureSource {
	if max < 0 {
		return src
	}
	return &limitedSource{FeatureSource: src, left: max - have, max: max}
}

// limitedSource fails with ETOOLARGE at the first feature past its limit.
// Appending, it learns from the store how many features the dataset holds
// as the append starts (mapcommons.AppendAware), so that two appends at
// once cannot both pass the limit on an older count.
type limitedSource struct {
	mapcommons.FeatureSource
	left, max int64
}

// AppendingTo implements mapcommons.AppendAware.
func (l *limitedSource) AppendingTo(existing int64) { l.left = l.max - existing }

func (l *limitedSource) Next() (*mapcommons.Feature, error) {
	f, err := l.FeatureSource.Next()
	if err != nil {
		return f, err
	}
	if l.left <= 0 {
		return nil, mapcommons.Errorf(mapcommons.ETOOLARGE, "max-features: a dataset may hold at most %d features on this server", l.max)
	}
	l.left--
	return f, nil
}

// closerFunc is a cleanup function as an io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// openArchive opens a zipped upload: a KMZ (its KML document, chosen by
// the kml package), or a zip holding one shapefile (or else one CSV, KML,
// GeoJSON or Atom file). The entries it needs are extracted into a
// directory of the upload's own.
func (o Opener) openArchive(up *Upload, kind, p string) error {
	f, err := up.open(p)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if kind == format.KindKMZ {
		rd, cleanup, err := kml.OpenKMZ(f, st.Size(), o.archiveLimits(), o.TempDir, kml.Options{})
		if err != nil {
			return err
		}
		up.closers = append(up.closers, closerFunc(cleanup))
		up.Kind = format.KindKMZ
		return up.setSource(rd)
	}
	a, err := archive.Open(f, st.Size(), o.archiveLimits())
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(o.TempDir, "unzip-*")
	if err != nil {
		return err
	}
	up.remove = append(up.remove, dir)
	var entries []*zip.File
	for _, e := range a.Files() {
		if !archive.Hidden(e.Name) {
			entries = append(entries, e)
		}
	}
	// Shallower entries first, then by name.
	sort.SliceStable(entries, func(i, j int) bool {
		di, dj := strings.Count(entries[i].Name, "/"), strings.Count(entries[j].Name, "/")
		if di != dj {
			return di < dj
		}
		return entries[i].Name < entries[j].Name
	})
	extract := func(e *zip.File) (string, error) { return a.Extract(e, dir) }
	var shps []*zip.File
	for _, e := range entries {
		if archive.Ext(e.Name) == "shp" {
			shps = append(shps, e)
		}
	}
	switch {
	case len(shps) > 1:
		names := make([]string, len(shps))
		for i, e := range shps {
			names[i] = e.Name
		}
		return mapcommons.Errorf(mapcommons.EINVALID, "the zip file holds %d shapefiles (%s): upload one at a time", len(shps), strings.Join(names, ", "))
	case len(shps) == 1:
		stem := strings.TrimSuffix(shps[0].Name, path.Ext(shps[0].Name))
		paths := map[string]string{}
		for _, e := range entries {
			ext := archive.Ext(e.Name)
			if !strings.EqualFold(strings.TrimSuffix(e.Name, path.Ext(e.Name)), stem) || ext != "shp" && !format.Sidecar(ext) {
				continue
			}
			if _, dup := paths[ext]; dup {
				return mapcommons.Errorf(mapcommons.EINVALID, "the zip file holds two .%s files for %s", ext, shps[0].Name)
			}
			x, err := extract(e)
			if err != nil {
				return err
			}
			paths[ext] = x
		}
		name := up.Name
		if err := o.openShapefile(up, paths); err != nil {
			return err
		}
		if name == "" {
			up.Name = baseName(shps[0].Name)
		}
		return nil
	}
	for _, e := range entries {
		if k := format.PartKind(archive.Ext(e.Name)); k == format.KindCSV || k == format.KindKML || k == format.KindGeoJSON || k == format.KindAtom || k == format.KindGPKG {
			x, err := extract(e)
			if err != nil {
				return err
			}
			if up.Name == "" {
				up.Name = baseName(e.Name)
			}
			return o.openFile(up, k, x, "")
		}
	}
	return mapcommons.Errorf(mapcommons.EINVALID, "the zip file holds no shapefile (.shp with its .dbf), nor a CSV, KML, GeoJSON, Atom or GeoPackage file")
}

// openShapefile opens a shapefile from its files by extension (shp and dbf
// required; shx, prj, cpg optional). A projected .prj is reprojected to
// lon/lat as the features are read.
func (o Opener) openShapefile(up *Upload, paths map[string]string) error {
	for _, need := range []string{"shp", "dbf"} {
		if _, ok := paths[need]; !ok {
			return mapcommons.Errorf(mapcommons.EINVALID, "dataset[%s]: a shapefile needs its .%s part", need, need)
		}
	}
	var cpg, prj string
	for ext, dst := range map[string]*string{"cpg": &cpg, "prj": &prj} {
		if p, ok := paths[ext]; ok {
			v, err := readSmall(p, 64<<10)
			if err != nil {
				return err
			}
			*dst = v
		}
	}
	// Geographic coordinates are taken as they are, on their own datum (for
	// NAD27 lon/lat that is tens of metres off WGS84); projected ones are
	// reprojected to WGS84 lon/lat, datum shift included.
	var tr *proj.Transform
	crs := ""
	if strings.TrimSpace(prj) != "" {
		name, geographic, err := shapefile.ClassifyPRJ(prj)
		if err != nil {
			return err
		}
		crs = name
		if !geographic {
			if tr, err = proj.Parse(prj); err != nil {
				return err
			}
			crs = tr.Name()
		}
	}
	shp, err := up.open(paths["shp"])
	if err != nil {
		return err
	}
	dbf, err := up.open(paths["dbf"])
	if err != nil {
		return err
	}
	var shx io.ReadSeeker
	if p, ok := paths["shx"]; ok {
		f, err := up.open(p)
		if err != nil {
			return err
		}
		shx = f
	}
	// The transform has read the .prj; the reader is given none, so that it
	// reads the coordinates as they are.
	rd, err := shapefile.Open(shp, dbf, shx, shapefile.Options{CPG: cpg})
	if err != nil {
		return err
	}
	up.Source, up.Kind, up.PRJ, up.CRS = rd, format.KindShp, prj, crs
	if tr != nil && !tr.Identity() {
		up.Source = &reprojected{src: rd, t: tr}
	} else if strings.TrimSpace(prj) == "" {
		up.Source = &lonLatOnly{src: rd}
	}
	return nil
}

// openGPKG opens a feature table of a GeoPackage (up.layer, or the first):
// coordinates in WGS 84 (or an undefined geographic SRS) are taken as they
// are, other geographic ones on their own datum (as a shapefile's), and
// projected ones reprojected to lon/lat from the SRS's WKT definition.
func (o Opener) openGPKG(up *Upload, path string) error {
	ctx := up.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	rd, err := gpkg.Open(ctx, path, up.layer)
	if err != nil {
		return err
	}
	up.closers = append(up.closers, rd)
	up.Kind = format.KindGPKG
	if up.Name == "" {
		up.Name = rd.Identifier()
	}
	srs := rd.SRS()
	up.Source = rd
	switch {
	case srs.LonLat():
		up.CRS = "WGS 84"
	case srs.ID == -1:
		return mapcommons.Errorf(mapcommons.EINVALID, "gpkg: layer %q has an undefined Cartesian coordinate system (srs_id -1): its coordinates cannot be placed on the earth", rd.Table())
	default:
		name, geographic, err := shapefile.ClassifyPRJ(srs.Definition)
		if err != nil {
			return mapcommons.Errorf(mapcommons.EINVALID, "gpkg: layer %q: its coordinate system %q (srs_id %d): %s", rd.Table(), srs.Name, srs.ID, mapcommons.ErrorMessage(err))
		}
		up.CRS, up.PRJ = name, srs.Definition
		if !geographic {
			tr, err := proj.Parse(srs.Definition)
			if err != nil {
				return mapcommons.Errorf(mapcommons.EINVALID, "gpkg: layer %q: %s", rd.Table(), mapcommons.ErrorMessage(err))
			}
			up.CRS = tr.Name()
			if !tr.Identity() {
				up.Source = &reprojected{src: rd, t: tr}
			}
		}
	}
	up.Source = &lonLatOnly{src: up.Source, why: "the GeoPackage layer's coordinates are not longitude/latitude although its SRS says so"}
	return nil
}

// lonLatOnly checks that a source's coordinates are longitude/latitude,
// as those of a shapefile sent without its .prj are taken to be: one
// outside -180..180, -90..90 means they are projected, and only the .prj
// can say how. why says so when it does not hold. An overshoot of
// floating-point size (wkb.LonLatTolerance) is clamped instead.
type lonLatOnly struct {
	src mapcommons.FeatureSource
	n   int64
	why string
	buf []byte // a geometry clamped onto the ranges (wkb.ClampLonLatWKB)
}

func (r *lonLatOnly) Attributes() []mapcommons.Attribute { return r.src.Attributes() }

func (r *lonLatOnly) Next() (*mapcommons.Feature, error) {
	f, err := r.src.Next()
	if err != nil {
		return nil, err
	}
	r.n++
	if f.Geometry != nil {
		b, ok, err := wkb.BoundsOf(f.Geometry)
		if err != nil {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", r.n, err)
		}
		var in bool
		if ok {
			var g []byte
			if g, in, err = wkb.ClampLonLatWKB(r.buf, f.Geometry, b); err != nil {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: %v", r.n, err)
			}
			if in && !b.InLonLat() { // clamped: a copy in r.buf
				r.buf, f.Geometry = g, g
			}
		}
		if ok && !in {
			why, fix := r.why, ""
			if why == "" {
				why = "the shapefile has no .prj and its coordinates are not longitude/latitude"
				fix = ": send its .prj (dataset[prj], or in the zip beside the .shp) so that they can be reprojected"
			}
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s (feature %d spans x %g to %g, y %g to %g)%s",
				why, r.n, b.MinX, b.MaxX, b.MinY, b.MaxY, fix)
		}
	}
	return f, nil
}

// reprojected reads a source in a projected CRS as lon/lat.
type reprojected struct {
	src mapcommons.FeatureSource
	t   *proj.Transform
	out mapcommons.Feature
	buf []byte
	n   int64
}

func (r *reprojected) Attributes() []mapcommons.Attribute { return r.src.Attributes() }

func (r *reprojected) Next() (*mapcommons.Feature, error) {
	f, err := r.src.Next()
	if err != nil {
		return nil, err
	}
	r.n++
	r.out = *f
	if f.Geometry != nil {
		if r.buf, err = r.t.WKB(f.Geometry, r.buf[:0]); err != nil {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "feature %d: reprojecting from %s: %v", r.n, r.t.Name(), mapcommons.ErrorMessage(err))
		}
		r.out.Geometry = r.buf
	}
	return &r.out, nil
}

const noDataMessage = "no data: send a file part dataset[csv], dataset[kml], dataset[kmz], dataset[atom], dataset[geojson], dataset[gpkg], dataset[zip], " +
	"or dataset[shp]+dataset[shx]+dataset[dbf], or a body of one of those types"

// Open finds the data in a create request and opens its reader, telling
// opened (when not nil) of each file it opens.
func (o Opener) Open(ctx context.Context, q *params.Request, opened func(*os.File)) (*Upload, error) {
	byExt := map[string]params.Upload{}
	for _, u := range q.Uploads {
		ext := uploadExt(u)
		if _, dup := byExt[ext]; dup {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "dataset[%s]: sent twice", ext)
		}
		byExt[ext] = u
	}
	up := &Upload{ctx: ctx, opened: opened}
	up.layer, _ = q.Params.String("layer")
	fail := func(err error) (*Upload, error) {
		up.Close()
		return nil, err
	}
	_, hasShp := byExt["shp"]
	_, hasDbf := byExt["dbf"]
	_, hasShx := byExt["shx"]
	switch {
	case hasShp || hasDbf || hasShx:
		paths := map[string]string{}
		for ext, u := range byExt {
			if ext == "shp" || format.Sidecar(ext) {
				paths[ext] = u.Path
			}
		}
		if err := o.openShapefile(up, paths); err != nil {
			return fail(err)
		}
		up.Name = baseName(byExt["shp"].Filename)
		return up, nil
	case len(byExt) > 0:
		exts := make([]string, 0, len(byExt))
		for ext := range byExt {
			exts = append(exts, ext)
		}
		sort.Strings(exts)
		for _, ext := range exts {
			u := byExt[ext]
			if k := format.PartKind(ext); k != "" && k != format.KindShp {
				if err := o.openFile(up, k, u.Path, u.Filename); err != nil {
					return fail(err)
				}
				return up, nil
			}
		}
		for _, ext := range exts {
			if !format.Sidecar(ext) {
				return nil, mapcommons.Errorf(mapcommons.EUNSUPPORTED, "dataset[%s]: unsupported upload type %q", ext, ext)
			}
		}
		return nil, mapcommons.Errorf(mapcommons.EINVALID, noDataMessage)
	case q.Body != nil:
		k := format.BodyKind(q.Body.ContentType)
		if k == "" {
			return nil, mapcommons.Errorf(mapcommons.EUNSUPPORTED, "unsupported upload Content-Type %q", q.Body.ContentType)
		}
		if err := o.openFile(up, k, q.Body.Path, ""); err != nil {
			return fail(err)
		}
		return up, nil
	}
	return nil, mapcommons.Errorf(mapcommons.EINVALID, noDataMessage)
}

// OpenFetched opens the file a feed's fetch wrote at path, of upload kind,
// as an upload that owns the file (Close removes it, also after an error
// here) and can read it again (Reopen).
func (o Opener) OpenFetched(ctx context.Context, kind, path, filename string) (*Upload, error) {
	up := &Upload{ctx: ctx, remove: []string{path}, fetched: path, fetchedKind: kind}
	if err := o.openFile(up, kind, path, filename); err != nil {
		up.Close()
		return nil, err
	}
	return up, nil
}

// Reopen opens the file an OpenFetched upload read, again from its start,
// and closes up (which then removes nothing: the new upload owns its
// files). On an error up stays as it was.
func (o Opener) Reopen(up *Upload) (*Upload, error) {
	again := &Upload{ctx: up.ctx, opened: up.opened}
	again.fetched, again.fetchedKind = up.fetched, up.fetchedKind
	if err := o.openFile(again, up.fetchedKind, up.fetched, ""); err != nil {
		again.Close()
		return nil, err
	}
	again.remove = append(again.remove, up.remove...)
	up.remove = nil
	up.Close()
	return again, nil
}
