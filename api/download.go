package api

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/format/registry"
)

// Downloads of a whole dataset in a file format (spec "Download"; wire
// contract 1.4). Text formats stream as the features are read; the
// database formats are built in a scratch file first, so that a failure
// answers with an error instead of half a file.

// downloadName is a safe file name for a download of ds.
func downloadName(ds *mapcommons.Dataset, ext string) string {
	var b strings.Builder
	for _, c := range ds.Title {
		if c < 0x80 && (c == '-' || c == '_' || c == '.' || c == ' ' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			b.WriteRune(c)
		}
	}
	name := strings.TrimSpace(b.String())
	if name == "" || len(name) > 100 {
		name = "dataset-" + strconv.FormatInt(ds.ID, 10)
	}
	return name + "." + ext
}

// safeName is a name of [A-Za-z0-9_] for the files, tables and layers
// inside a download.
func safeName(ds *mapcommons.Dataset) string {
	var b strings.Builder
	for _, c := range ds.Title {
		switch {
		case c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_':
			b.WriteRune(c)
		case c == ' ' || c == '-' || c == '.':
			b.WriteByte('_')
		}
		if b.Len() >= 60 {
			break
		}
	}
	name := strings.Trim(b.String(), "_")
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "dataset_" + strconv.FormatInt(ds.ID, 10)
	}
	return name
}

// meta describes ds to the writers.
func (s *Server) meta(r *http.Request, ds *mapcommons.Dataset) format.Meta {
	author := ds.Author
	if author == "" {
		author = ds.Owner
	}
	return format.Meta{
		Name: safeName(ds), Title: ds.Title, Description: ds.Description, Author: author,
		Link: s.datasetLink(r, ds.ID), Updated: ds.UpdatedAt, Attributes: ds.Attributes,
		GeometryMask: ds.GeometryMask, Extent: ds.Extent, Count: ds.FeatureCount,
	}
}

// scanAll streams every feature of ds.
func (s *Server) scanAll(ctx context.Context, ds *mapcommons.Dataset) format.Scan {
	return func(fn func(*mapcommons.Feature) error) error {
		return s.svc.Features.ScanFeatures(ctx, ds.ID, &mapcommons.FeatureQuery{Limit: -1}, fn)
	}
}

// writeDatasetFile answers with every feature of ds in a download format
// (one of format.DatasetDownload's), written as the format registry says.
func (s *Server) writeDatasetFile(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset, ext string) error {
	d, ok := registry.DownloadOf(ext)
	if !ok {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "datasets do not download as .%s", ext)
	}
	m, scan := s.meta(r, ds), s.scanAll(r.Context(), ds)
	if d.Build != nil {
		return s.writeBuilt(w, r, ds, d, m, scan)
	}
	w.Header().Set("Content-Type", d.ContentType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+downloadName(ds, d.Format)+`"`)
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := d.Stream(bw, m, scan, s.cfg.TempDir); err != nil {
		return err
	}
	return bw.Flush()
}

// writeBuilt builds a download in a scratch file, then sends it with its
// length.
func (s *Server) writeBuilt(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset, d registry.Download, m format.Meta, scan format.Scan) error {
	dir, err := os.MkdirTemp(s.cfg.TempDir, "download-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := dir + "/" + m.Name + "." + d.Format
	if err := d.Build(r.Context(), path, m, scan); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", d.ContentType)
	w.Header().Set("Content-Disposition", `attachment; filename="`+downloadName(ds, d.Format)+`"`)
	w.Header().Set("Content-Length", strconv.FormatInt(st.Size(), 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err = io.Copy(w, f)
	return err
}
