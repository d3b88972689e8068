package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/params"
)

// ImportProgress follows an Import: Opened learns of each file it opens
// (to see how far it has read), Feature of each feature stored. Either may
// be nil; both are called from the importing goroutine.
type ImportProgress struct {
	Opened  func(*os.File)
	Feature func()
}

// Import creates a dataset owned by owner from a file on this machine, as
// an upload of it would be made (the same readers, checks and limits; the
// kind from its extension): a CSV, KML, KMZ, GeoJSON, Atom, GeoPackage or
// zip file, or a shapefile's .shp, whose .shx, .dbf, .prj and .cpg are
// taken from beside it. title "" is the upload's default. For the command
// line's import, which runs where the store is and has decided who the
// data belongs to: there is no request to authorize.
func (s *Server) Import(ctx context.Context, owner *mapcommons.User, path, title, layer string, p ImportProgress) (*mapcommons.Dataset, error) {
	if err := s.policy.CanCreateDataset(owner); err != nil {
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
	up, err := s.opener().Open(ctx, q, p.Opened)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	t := strings.TrimSpace(title)
	return s.createUploaded(ctx, owner, up, mapcommons.MetadataUpdate{Title: &t}, s.policy.DefaultDatasetPermissions(), p.Feature)
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
