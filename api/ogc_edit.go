package api

// OGC API - Features Part 4 (Create, Replace, Update and Delete) on the
// items of a collection: POST items adds a Feature (or each feature of a
// FeatureCollection), PUT items/{featureId} replaces one, PATCH merges a
// JSON Merge Patch (RFC 7396) into it, DELETE removes it. They are the
// native edits (feature_edit.go) under other paths: the same edit right
// checked before the body is read (401 anonymous, 404 to who may not see
// the dataset, 403 to who may see but not change it), the same bounded
// JSON bodies (jsonBody), the same reading of a feature or a patch
// (applyUpdate, editedFeature, newJSONFeatures) and one
// FeatureService.ApplyEdits each, whose new version of the dataset leaves
// every cached answer and ETag of the old behind.
//
// Optimistic concurrency: an item's ETag (datasetETag, as GET
// items/{featureId} sends it) names the dataset's version, which every
// write moves. PUT, PATCH and DELETE honour If-Match: "*" or a tag of the
// dataset at its current version lets the write go on, any other tag is a
// 412 (a 404 when the item does not exist). The tags are weak (the same
// for a plain and a gzip-encoded answer), so If-Match compares them as
// If-None-Match does, weakly: for a write, what matters is that the item
// is the one the client saw, not its bytes. The version a tag names is
// checked again by the store under the dataset's write lock
// (Edits.Version): of two writes sent at once with the same tag, one
// applies and the other is a 412. The answer to a PUT, PATCH or POST of
// one feature carries the item's new ETag, the one a GET of it by the
// same caller gets.

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format/geojson"
)

// ogcItemPath is the path of the item fid of the collection r names, as
// r names it (its number or a readable name): the Location of an item
// created there, whose ETag (ogcItemETag) a GET of it gets.
func ogcItemPath(r *http.Request, fid int64) string {
	return "/ogc/collections/" + r.PathValue("id") + "/items/" + strconv.FormatInt(fid, 10)
}

// handleOGCItemCreate answers POST /ogc/collections/{id}/items: a GeoJSON
// Feature (its id, if any, ignored: the server gives one) is added to the
// dataset, 201 with the Location of the new item, the item and its ETag.
// A FeatureCollection adds each of its features, all or nothing: 201 with
// the Location of the first and a FeatureCollection of them all.
func (s *Server) handleOGCItemCreate(w http.ResponseWriter, r *http.Request) error {
	ds, body, cleanup, err := s.editBody(r, s.collectionToEdit, "no feature: send a GeoJSON Feature, or a FeatureCollection")
	if err != nil {
		return err
	}
	defer cleanup()
	e, single, err := s.readAdds(body, ds.Attributes)
	if err != nil {
		return err
	}
	res, err := s.svc.Features.ApplyEdits(r.Context(), ds.ID, e)
	if err != nil {
		if single && mapcommons.ErrorCode(err) == mapcommons.EINVALID {
			return mapcommons.Errorf(mapcommons.EINVALID, "feature: %s", strings.TrimPrefix(mapcommons.ErrorMessage(err), "adds[0]: "))
		}
		return err
	}
	if len(res.AddIDs) == 0 {
		return mapcommons.Errorf(mapcommons.EINTERNAL, "the store added no feature")
	}
	w.Header().Set("Location", s.baseURL(r)+ogcItemPath(r, res.AddIDs[0]))
	if single {
		return s.ogcWritten(w, r, http.StatusCreated, ds.ID, res.AddIDs[0])
	}
	return s.ogcCreatedCollection(w, r, ds.ID, res.AddIDs)
}

// readAdds reads the features of a create's body (a Feature, a
// FeatureCollection, or the native API's array of features) as the adds
// of an edit, each checked as it is read, as readEdits reads the adds of
// edits.json: at most heldAdds kept in memory, past them all read again
// from the body by the store; ETOOLARGE as soon as there are more than the
// dataset may hold. single reports a body of one Feature.
func (s *Server) readAdds(body io.ReadSeeker, attrs []mapcommons.Attribute) (e *mapcommons.Edits, single bool, err error) {
	src, err := newJSONFeatures(body, attrs)
	if err != nil {
		return nil, false, err
	}
	single = src.single != nil
	e = &mapcommons.Edits{MaxFeatures: s.maxFeatures()}
	var n int64
	for {
		f, err := src.Next()
		if errors.Is(err, mapcommons.EOF) {
			break
		} else if err != nil {
			return nil, false, err
		}
		if n++; e.MaxFeatures > 0 && n > e.MaxFeatures {
			return nil, false, feature.TooManyFeatures(e.MaxFeatures)
		}
		if n <= heldAdds {
			e.Adds = append(e.Adds, *f) // Next makes each feature's values and geometry anew
		}
	}
	if n == 0 {
		return nil, false, mapcommons.Errorf(mapcommons.EINVALID, "no features: the FeatureCollection has none")
	}
	if n > heldAdds {
		if _, err := body.Seek(0, io.SeekStart); err != nil {
			return nil, false, err
		}
		again, err := newJSONFeatures(body, attrs)
		if err != nil {
			return nil, false, err
		}
		e.Adds, e.AddSource, e.AddCount = nil, again, n
	}
	return e, single, nil
}

// ogcCreatedCollection answers the POST of a FeatureCollection: 201 with
// the new items (ids), as a FeatureCollection.
func (s *Server) ogcCreatedCollection(w http.ResponseWriter, r *http.Request, dsID int64, ids []int64) error {
	ds, err := s.svc.Datasets.FindDatasetByID(r.Context(), dsID)
	if err != nil {
		return err
	}
	o := startJSON(w, r)
	if callbackOf(r) == "" {
		w.Header().Set("Content-Type", ogcGeoJSON)
	}
	o.status = http.StatusCreated
	o.buf = append(o.buf, `{"type":"FeatureCollection","features":[`...)
	keys := geojson.Keys(ds.Attributes)
	n := 0
	fq := &mapcommons.FeatureQuery{IDs: ids, Limit: int64(len(ids)), Lazy: true}
	err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, fq, func(ft *mapcommons.Feature) error {
		if n > 0 {
			o.buf = append(o.buf, ',')
		}
		n++
		var err error
		o.buf, err = appendOGCFeature(o.buf, keys, ds.Attributes, ft, outputFor(crsCRS84), nil)
		return err
	})
	if err != nil {
		return err
	}
	o.buf = append(o.buf, `],"numberReturned":`...)
	o.buf = strconv.AppendInt(o.buf, int64(n), 10)
	coll := s.ogcBase(r) + "/collections/" + ds.ReadableName()
	o.buf, err = jsonMember(append(o.buf, ','), "links", []ogcLink{
		{Href: coll + "/items", Rel: "items", Type: ogcGeoJSON, Title: "the items of the collection"},
		{Href: coll, Rel: "collection", Type: ogcJSON, Title: "the collection"}})
	if err != nil {
		return err
	}
	o.buf = append(o.buf, '}')
	return o.Close()
}

// handleOGCItemReplace answers PUT /ogc/collections/{id}/items/{featureId}:
// the body, a GeoJSON Feature, replaces the item's properties and
// geometry (what it leaves out becomes null; an id, if any, must be the
// path's), as PUT /datasets/{id}/features/{fid} does. 200 with the item
// as stored and its new ETag.
func (s *Server) handleOGCItemReplace(w http.ResponseWriter, r *http.Request) error {
	return s.ogcUpdate(w, r, false)
}

// handleOGCItemUpdate answers PATCH /ogc/collections/{id}/items/{featureId}:
// the body, a JSON Merge Patch (application/merge-patch+json, or JSON, or
// a GeoJSON Feature), changes what it gives (null clears a property), as
// PATCH /datasets/{id}/features/{fid} does. 200 with the item as stored
// and its new ETag.
func (s *Server) handleOGCItemUpdate(w http.ResponseWriter, r *http.Request) error {
	return s.ogcUpdate(w, r, true)
}

// ogcUpdate is PUT and, partial, PATCH of an item: authorized, its
// If-Match checked, then the native update (applyUpdate).
func (s *Server) ogcUpdate(w http.ResponseWriter, r *http.Request, partial bool) error {
	ds, fid, version, err := s.ogcItemToEdit(r)
	if err != nil {
		return err
	}
	body, cleanup, err := s.jsonBody(r, updateEmpty(partial))
	if err != nil {
		return err
	}
	defer cleanup()
	if err := s.applyUpdate(r, ds, body, fid, partial, version); err != nil {
		return err
	}
	return s.ogcWritten(w, r, http.StatusOK, ds.ID, fid)
}

// handleOGCItemDelete answers DELETE /ogc/collections/{id}/items/{featureId}:
// the item is removed (the others keep their ids). 204.
func (s *Server) handleOGCItemDelete(w http.ResponseWriter, r *http.Request) error {
	ds, fid, version, err := s.ogcItemToEdit(r)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	_, err = s.svc.Features.ApplyEdits(r.Context(), ds.ID, &mapcommons.Edits{Deletes: []int64{fid}, MaxFeatures: s.maxFeatures(), Version: version})
	if err := s.oneEditError(ds, fid, "deletes", err); err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}

// ogcItemToEdit authorizes a change of the item {featureId} of the {id}
// dataset and checks the request's If-Match against it, before any body
// is read. version is the dataset's version the If-Match named (0: none,
// or "*"), which the edit must still find under the store's write lock.
func (s *Server) ogcItemToEdit(r *http.Request) (ds *mapcommons.Dataset, fid, version int64, err error) {
	if ds, err = s.collectionToEdit(r); err != nil {
		return nil, 0, 0, err
	}
	if fid, err = featureID(r); err != nil {
		return nil, 0, 0, err
	}
	if version, err = s.checkIfMatch(r, ds, fid); err != nil {
		return nil, 0, 0, err
	}
	return ds, fid, version, nil
}

// checkIfMatch checks the If-Match of a write of the item fid of ds (RFC
// 9110 13.1.1): none or "*" lets the write go on (version 0), as does a
// tag of ds at its current version (see the top of this file), whose
// version the edit then checks again under the store's write lock. Any
// other is a 412 when the item exists, a 404 when it does not: the answer
// the write would have without the condition.
func (s *Server) checkIfMatch(r *http.Request, ds *mapcommons.Dataset, fid int64) (version int64, err error) {
	values := r.Header.Values("If-Match")
	if len(values) == 0 {
		return 0, nil
	}
	current := `"d` + strconv.FormatInt(ds.ID, 10) + "-" + strconv.FormatInt(ds.Version, 10) + "-"
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			switch {
			case t == "*":
				return 0, nil
			case strings.HasPrefix(t, current) && len(t) > len(current)+1 && strings.HasSuffix(t, `"`):
				return ds.Version, nil
			}
		}
	}
	found := false
	err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, &mapcommons.FeatureQuery{IDs: []int64{fid}, Limit: 1, Lazy: true},
		func(*mapcommons.Feature) error { found = true; return nil })
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset %d has no feature %d", ds.ID, fid)
	}
	return 0, staleItem(ds, fid)
}

// staleItem is the 412 of a write whose If-Match names another version
// of the item fid of ds than its current one.
func staleItem(ds *mapcommons.Dataset, fid int64) error {
	return mapcommons.Errorf(codePrecondition, "If-Match: feature %d of collection %d has changed since that ETag was given (or the tag is none of its): GET it again", fid, ds.ID)
}

// ogcWritten answers a write of the item fid of the dataset dsID with
// status: the item as now stored (in CRS84, as GET answers it without crs)
// and the ETag a GET of it by the caller gets.
func (s *Server) ogcWritten(w http.ResponseWriter, r *http.Request, status int, dsID, fid int64) error {
	ds, err := s.svc.Datasets.FindDatasetByID(r.Context(), dsID) // its new version
	if err != nil {
		return err
	}
	body, err := s.ogcItemJSON(r, ds, fid, outputFor(crsCRS84), s.ogcItemLinks(r, ds, strconv.FormatInt(fid, 10), url.Values{}, "json"))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Crs", "<"+crsCRS84+">")
	if tag := s.ogcItemETag(r, ds, fid); tag != "" {
		h.Set("ETag", tag)
	}
	o := startJSON(w, r)
	if callbackOf(r) == "" {
		h.Set("Content-Type", ogcGeoJSON)
	}
	o.status = status
	o.buf = append(o.buf, body...)
	return o.Close()
}

// ogcItemETag is the ETag a GET of the item fid of ds (in JSON, without
// parameters) by the caller of r gets.
func (s *Server) ogcItemETag(r *http.Request, ds *mapcommons.Dataset, fid int64) string {
	g := r.Clone(r.Context())
	g.Method = http.MethodGet
	g.Body, g.ContentLength, g.TransferEncoding = http.NoBody, 0, nil
	g.URL.Path, g.URL.RawPath, g.URL.RawQuery = ogcItemPath(r, fid), "", ""
	return s.datasetETag(g, ds, "ogc-item.json")
}
