package api

import (
	"context"
	"net/http"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/fetch"
	"mapcommons/ingest"
	"mapcommons/params"
)

// Datasets registered from a URL (spec "Create from URL", "Update feed";
// wire contract 1.2, 1.6): the server fetches the URL, reads it like an
// upload, and refetches it on request or periodically.

// createFromURL registers a dataset from a URL: a URL registered already
// answers 200 with the existing dataset's Location (wire contract section
// 9: clients break on a redirect here).
func (s *Server) createFromURL(w http.ResponseWriter, r *http.Request, me *mapcommons.User, p params.Params, upd mapcommons.MetadataUpdate,
	perms []mapcommons.Permission, raw string) error {
	u, err := fetch.Check(raw)
	if err != nil {
		return err
	}
	link := u.String()
	kind := ""
	if t, ok := p.String("type"); ok && strings.TrimSpace(t) != "" {
		if kind = ingest.URLTypes[strings.ToLower(strings.TrimSpace(t))]; kind == "" {
			return mapcommons.Errorf(mapcommons.EINVALID, "type: %q is not one of csv, kml, kmz, atom, rss, geojson, zip, wms, tile", t)
		}
	}
	key, keyGiven := p.String("key")
	key = strings.TrimSpace(key)
	if keyGiven && key != "" && (kind == "wms" || kind == "tile") {
		return mapcommons.Errorf(mapcommons.EINVALID, "key: a %s registration has no rows to identify", kind)
	}
	if ds, err := s.svc.Datasets.FindDatasetByURL(r.Context(), link); err == nil {
		return s.existing(w, r, ds)
	} else if mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND {
		return err
	}
	ds := &mapcommons.Dataset{OwnerID: me.ID, Owner: me.Login, URL: link, DataType: mapcommons.DataTypeFeed, Permissions: perms}
	upd.Apply(&ds.Metadata)
	var src mapcommons.FeatureSource = ingest.EmptySource{}
	switch kind {
	case "wms", "tile":
		ds.Type, ds.URLType = kind, kind
		ds.DataType = map[string]string{"wms": mapcommons.DataTypeWMS, "tile": mapcommons.DataTypeTiles}[kind]
	default:
		up, err := s.feeds.Fetch(r.Context(), link, kind)
		if err != nil {
			return err
		}
		defer up.Close()
		if key != "" {
			if err := ingest.CheckFeedKey(key, up.Source.Attributes()); err != nil {
				return err
			}
			ds.FeedKey = key
		}
		src, ds.Type, ds.URLType, ds.CRS, ds.PRJ = s.limitFeatures(up.Source, 0), up.Kind, up.Kind, up.CRS, up.PRJ
		if strings.TrimSpace(ds.Title) == "" {
			ds.Title = up.Name
		}
	}
	if strings.TrimSpace(ds.Title) == "" {
		ds.Title = "Untitled"
	}
	if err := s.svc.Datasets.CreateDataset(r.Context(), ds, src); err != nil {
		if mapcommons.ErrorCode(err) == mapcommons.ECONFLICT {
			// Registered meanwhile by another request.
			if old, ferr := s.svc.Datasets.FindDatasetByURL(r.Context(), link); ferr == nil {
				return s.existing(w, r, old)
			}
		}
		return err
	}
	doc, err := s.datasetJSON(r, ds, false)
	if err != nil {
		return err
	}
	return s.created(w, r, s.datasetLink(r, ds.ID), doc)
}

// existing answers a registration of a URL registered already: the
// dataset, when the caller may see it; else only that the URL is taken (a
// URL is registered once, and a private dataset does not show itself).
func (s *Server) existing(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset) error {
	if err := s.policy.CanViewDataset(caller(r), ds); err != nil {
		return mapcommons.Errorf(mapcommons.ECONFLICT, "url: %s is registered already, as a dataset not shared with you", ds.URL)
	}
	w.Header().Set("Location", s.datasetLink(r, ds.ID))
	doc, err := s.datasetJSON(r, ds, false)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, http.StatusOK, doc)
}

// handleDatasetFetch answers PUT /datasets/{id}/fetch (spec "Update
// feed"), GET /datasets/{id}/fetch as its documented example does, and
// POST /datasets/{id}/fetch: it refetches a dataset registered from a
// URL. A failed refetch keeps the old features and records the error on
// the dataset.
func (s *Server) handleDatasetFetch(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkOrigin(r); err != nil {
		return err // the GET changes the dataset too: not for other sites' pages
	}
	if err := s.checkCSRF(r); err != nil {
		return err // nor for a link followed by a signed-in browser
	}
	if r.Method == http.MethodGet {
		// Nor for any page's request at all, this server's own included (a
		// map's url: layer names any URL here): browsers say where their
		// requests come from, API clients send no Sec-Fetch-Site.
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "none" {
			return mapcommons.Errorf(mapcommons.EFORBIDDEN, "a refetch by GET is not made from a page: POST /datasets/{id}/fetch")
		}
	}
	ds, err := findNoBody(s, r, s.datasetToEdit)
	if err != nil {
		return err
	}
	if ds.DataType != mapcommons.DataTypeFeed || ds.URL == "" {
		return mapcommons.Errorf(mapcommons.EINVALID, "dataset %d was not registered from a URL: there is nothing to fetch", ds.ID)
	}
	fresh, err := s.feeds.Refetch(r.Context(), ds)
	if err != nil {
		return err
	}
	doc, err := s.datasetJSON(r, fresh, false)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, http.StatusOK, doc)
}

// RefreshFeeds refetches, one after the other, the feeds due for a
// refresh (ingest.Feeds.RefreshDue); cmd calls it every interval
// (--refresh-interval), which must be more than 0.
func (s *Server) RefreshFeeds(ctx context.Context, interval time.Duration) {
	s.feeds.RefreshDue(ctx, interval)
}
