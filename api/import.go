package api

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"mapcommons"
	"mapcommons/format"
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
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	kind := format.PartKind(ext)
	if kind == "" {
		return nil, mapcommons.Errorf(mapcommons.EUNSUPPORTED, "%s: .%s files cannot be imported (csv, kml, kmz, geojson, json, atom, rss, gpkg, zip or shp)", path, ext)
	}
	q := &Request{Params: Params{}}
	if layer != "" {
		q.Params["layer"] = layer
	}
	add := func(ext, p string) error {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		q.Uploads = append(q.Uploads, Upload{Field: "dataset[" + ext + "]", Filename: filepath.Base(p), Path: p, Size: fi.Size()})
		return nil
	}
	if err := add(ext, path); err != nil {
		return nil, err
	}
	if kind == format.KindShp {
		stem := strings.TrimSuffix(path, filepath.Ext(path))
		for _, side := range []string{"shx", "dbf", "prj", "cpg"} {
			for _, cand := range []string{stem + "." + side, stem + "." + strings.ToUpper(side)} {
				if _, err := os.Stat(cand); err == nil {
					if err := add(side, cand); err != nil {
						return nil, err
					}
					break
				}
			}
		}
	}
	up, err := s.openUploadWith(ctx, q, p.Opened)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	ds := &mapcommons.Dataset{OwnerID: owner.ID, Owner: owner.Login, Type: up.kind, CRS: up.crs, PRJ: up.prj,
		Permissions: s.policy.DefaultDatasetPermissions(), Metadata: mapcommons.Metadata{Title: strings.TrimSpace(title)}}
	if ds.Title == "" {
		ds.Title = up.name
	}
	if strings.TrimSpace(ds.Title) == "" {
		ds.Title = "Untitled"
	}
	var src mapcommons.FeatureSource = s.limitFeatures(up.src, 0)
	if p.Feature != nil {
		src = &countingSource{FeatureSource: src, each: p.Feature}
	}
	if err := s.svc.Datasets.CreateDataset(ctx, ds, src); err != nil {
		return nil, err
	}
	return ds, nil
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
