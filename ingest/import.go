package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/params"
)

// NewDataset is the dataset an upload makes for owner: its type and CRS
// are the upload's, its metadata upd's, its title by default the upload's
// (else "Untitled").
func NewDataset(owner *mapcommons.User, up *Upload, upd mapcommons.MetadataUpdate, perms []mapcommons.Permission) *mapcommons.Dataset {
	ds := &mapcommons.Dataset{OwnerID: owner.ID, Owner: owner.Login, Type: up.Kind, CRS: up.CRS, PRJ: up.PRJ, Permissions: perms}
	upd.Apply(&ds.Metadata)
	if strings.TrimSpace(ds.Title) == "" {
		ds.Title = up.Name
	}
	if strings.TrimSpace(ds.Title) == "" {
		ds.Title = "Untitled"
	}
	return ds
}

// Create stores ds (from NewDataset) with up's features, at most
// maxFeatures of them (< 0: no bound). each, when set, is called for every
// feature stored.
func Create(ctx context.Context, datasets mapcommons.DatasetService, ds *mapcommons.Dataset, up *Upload, maxFeatures int64, each func()) error {
	src := LimitFeatures(up.Source, 0, maxFeatures)
	if each != nil {
		src = &countingSource{FeatureSource: src, each: each}
	}
	return datasets.CreateDataset(ctx, ds, src)
}

// Progress follows an Import: Opened learns of each file it opens (to see
// how far it has read), Feature of each feature stored. Either may be nil;
// both are called from the importing goroutine.
type Progress struct {
	Opened  func(*os.File)
	Feature func()
}

// Importer makes datasets of files on this machine, as uploads of them
// would be made (the same readers, checks and limits): for the command
// line's import, which runs where the store is and has decided who the
// data belongs to, with no server and no request to authorize.
type Importer struct {
	Opener
	Datasets    mapcommons.DatasetService
	Policy      mapcommons.Policy
	MaxFeatures int64 // < 0: no bound
}

// Import creates a dataset owned by owner from the file at path (the kind
// from its extension): a CSV, KML, KMZ, GeoJSON, Atom, GeoPackage or zip
// file, or a shapefile's .shp, whose .shx, .dbf, .prj and .cpg are taken
// from beside it. title "" is the upload's default; layer names the table
// of a GeoPackage ("" the first).
func (im Importer) Import(ctx context.Context, owner *mapcommons.User, path, title, layer string, p Progress) (*mapcommons.Dataset, error) {
	if err := im.Policy.CanCreateDataset(owner); err != nil {
		return nil, err
	}
	files, err := UploadFiles(path)
	if err != nil {
		return nil, err
	}
	q := &params.Request{Params: params.Params{}}
	if layer != "" {
		q.Params["layer"] = layer
	}
	for ext, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		q.Uploads = append(q.Uploads, params.Upload{Field: "dataset[" + ext + "]", Filename: filepath.Base(f), Path: f, Size: fi.Size()})
	}
	up, err := im.Open(ctx, q, p.Opened)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	t := strings.TrimSpace(title)
	ds := NewDataset(owner, up, mapcommons.MetadataUpdate{Title: &t}, im.Policy.DefaultDatasetPermissions())
	if err := Create(ctx, im.Datasets, ds, up, im.MaxFeatures, p.Feature); err != nil {
		return nil, err
	}
	return ds, nil
}

// UploadFiles are the files an upload of the file at path sends, by
// extension: the file itself, and for a shapefile's .shp the companion
// files found beside it (.shx, .dbf, .prj, .cpg, in either case). A file
// of a kind that cannot be uploaded is EUNSUPPORTED.
func UploadFiles(path string) (map[string]string, error) {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	kind := format.PartKind(ext)
	if kind == "" {
		return nil, mapcommons.Errorf(mapcommons.EUNSUPPORTED, "%s: .%s files cannot be imported (csv, kml, kmz, geojson, json, atom, rss, gpkg, zip or shp)", path, ext)
	}
	files := map[string]string{ext: path}
	if kind == format.KindShp {
		stem := strings.TrimSuffix(path, filepath.Ext(path))
		for _, side := range format.Sidecars {
			for _, cand := range []string{stem + "." + side, stem + "." + strings.ToUpper(side)} {
				if _, err := os.Stat(cand); err == nil {
					files[side] = cand
					break
				}
			}
		}
	}
	return files, nil
}

// countingSource calls each for every feature read.
type countingSource struct {
	mapcommons.FeatureSource
	each func()
}

func (c *countingSource) Next() (*mapcommons.Feature, error) {
	f, err := c.FeatureSource.Next()
	if err == nil {
		c.each()
	}
	return f, err
}
