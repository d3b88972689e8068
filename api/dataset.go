package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format"
	"mapcommons/geocommons"
	"mapcommons/ingest"
	"mapcommons/params"
)

// datasetDoc is the JSON of a dataset: the 2011 shape of wire contract 1.3.
type datasetDoc struct {
	ID                  int64                       `json:"id"`
	Title               string                      `json:"title"`
	Name                string                      `json:"name"`
	Description         string                      `json:"description"`
	Author              string                      `json:"author"`
	Tags                string                      `json:"tags"`
	MetadataURL         string                      `json:"metadata_url"`
	CitationURL         string                      `json:"citation_url"`
	ContactName         string                      `json:"contact_name"`
	ContactAddress      string                      `json:"contact_address"`
	ContactPhone        string                      `json:"contact_phone"`
	ProcessNotes        string                      `json:"process_notes"`
	Link                string                      `json:"link"`
	Contributor         *string                     `json:"contributor"`
	Published           string                      `json:"published"`
	CreatedAt           string                      `json:"created_at"`
	UpdatedAt           string                      `json:"updated_at"`
	DataType            string                      `json:"data_type"`
	Type                string                      `json:"type"`
	State               string                      `json:"state"`
	FeatureCount        int64                       `json:"feature_count"`
	Extent              *[4]float64                 `json:"extent"`
	GeometryTypes       []string                    `json:"geometry_types"`
	Permissions         []permissionDoc             `json:"permissions"`
	Pagination          pagination                  `json:"pagination"`
	Stats               map[string]mapcommons.Stats `json:"stats"`
	DataAttributes      []attributeDoc              `json:"data_attributes"`
	CRS                 *string                     `json:"crs"`
	Source              string                      `json:"source"`
	URL                 *string                     `json:"url"`
	URLType             *string                     `json:"url_type"`
	Key                 string                      `json:"key,omitempty"`
	LastFetchError      *string                     `json:"last_fetch_error"`
	FetchedAt           *string                     `json:"fetched_at"`
	ShortClassification *string                     `json:"short_classification"`
	Classification      *string                     `json:"classification"`
	CalculationParams   *string                     `json:"calculation_params"`
	IconLink            *string                     `json:"icon_link"`
}

type pagination struct {
	Sort  *string `json:"sort"`
	Start int64   `json:"start"`
	Total int64   `json:"total"`
	Limit int64   `json:"limit"`
}

type attributeDoc struct {
	mapcommons.Attribute
	OverlayID int64 `json:"overlay_id"`
}

func isoTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *Server) datasetLink(r *http.Request, id int64) string {
	return s.baseURL(r) + "/datasets/" + strconv.FormatInt(id, 10) + ".json"
}

// datasetJSON is the document of ds as the caller may see it: the names of
// the groups of its sharing list to those who may change the list.
func (s *Server) datasetJSON(r *http.Request, ds *mapcommons.Dataset, withAttributes bool) (*datasetDoc, error) {
	perms, err := s.sharingJSON(r, ds.Permissions, s.policy.CanSetDatasetPermissions(caller(r), ds) == nil)
	if err != nil {
		return nil, err
	}
	m := ds.Metadata
	d := &datasetDoc{
		ID: ds.ID, Title: m.Title, Name: m.Title, Description: m.Description, Author: m.Author, Tags: m.Tags,
		MetadataURL: m.MetadataURL, CitationURL: m.CitationURL, ContactName: m.ContactName,
		ContactAddress: m.ContactAddress, ContactPhone: m.ContactPhone, ProcessNotes: m.ProcessNotes,
		Link: s.datasetLink(r, ds.ID), Published: isoTime(ds.CreatedAt), CreatedAt: isoTime(ds.CreatedAt),
		UpdatedAt: isoTime(ds.UpdatedAt), DataType: ds.DataType, Type: ds.Type, State: ds.State,
		FeatureCount: ds.FeatureCount, GeometryTypes: ds.GeometryTypes, Permissions: perms,
		Pagination: pagination{Start: 0, Total: ds.FeatureCount, Limit: ds.FeatureCount},
	}
	// Minimum, maximum, mean and median tell the values of a small
	// dataset: they are data, shown only to who may download it.
	if s.policy.CanSeeDatasetStats(caller(r), ds) {
		d.Stats = ds.Stats
	}
	if ds.Owner != "" {
		d.Contributor = &ds.Owner
	}
	if ds.CRS != "" {
		d.CRS = &ds.CRS
	}
	if ds.URL != "" {
		d.URL, d.URLType, d.Key = &ds.URL, &ds.URLType, ds.FeedKey
		if ds.LastFetchError != "" {
			d.LastFetchError = &ds.LastFetchError
		}
		if !ds.FetchedAt.IsZero() {
			t := isoTime(ds.FetchedAt)
			d.FetchedAt = &t
		}
	}
	if e := ds.Extent; e != nil {
		d.Extent = &[4]float64{e.MinX, e.MinY, e.MaxX, e.MaxY}
	}
	if d.Stats == nil {
		d.Stats = map[string]mapcommons.Stats{}
	}
	if withAttributes {
		d.DataAttributes = make([]attributeDoc, len(ds.Attributes))
		for i, a := range ds.Attributes {
			d.DataAttributes[i] = attributeDoc{Attribute: a, OverlayID: ds.ID}
		}
	}
	return d, nil
}

// datasetID parses the {id} path segment.
func datasetID(r *http.Request) (int64, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset %q not found", raw)
	}
	return id, nil
}

// findDataset loads the {id} dataset; a missing one is refused as a
// private one would be (Policy.NotFound).
func (s *Server) findDataset(r *http.Request) (*mapcommons.Dataset, error) {
	id, err := datasetID(r)
	if err != nil {
		return nil, s.policy.NotFound(caller(r), mapcommons.ModelOverlay, err)
	}
	ds, err := s.svc.Datasets.FindDatasetByID(r.Context(), id)
	return ds, s.policy.NotFound(caller(r), mapcommons.ModelOverlay, err)
}

// datasetToEdit loads the {id} dataset for a change: 401 without
// credentials, 404 when it does not exist (or may not be seen), 403 when
// the caller may not change it.
func (s *Server) datasetToEdit(r *http.Request) (*mapcommons.Dataset, error) {
	return s.datasetFor(r, s.findDataset, s.policy.CanEditDataset)
}

// collectionToEdit loads the {id} collection's dataset (by number or
// readable name, findCollection) for a change, as datasetToEdit does.
func (s *Server) collectionToEdit(r *http.Request) (*mapcommons.Dataset, error) {
	return s.datasetFor(r, s.findCollection, s.policy.CanEditDataset)
}

// datasetFor loads the dataset find finds for an action the rule allows;
// 401 without credentials whether it exists or not.
func (s *Server) datasetFor(r *http.Request, find func(*http.Request) (*mapcommons.Dataset, error), rule func(*mapcommons.User, *mapcommons.Dataset) error) (*mapcommons.Dataset, error) {
	if caller(r) == nil {
		return nil, mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "authentication required")
	}
	ds, err := find(r)
	if err != nil {
		return nil, err
	}
	return ds, rule(caller(r), ds)
}

// newDatasetPermissions is the sharing list of a dataset the caller
// creates: the one asked for (checked), or the instance's default.
func (s *Server) newDatasetPermissions(r *http.Request, me *mapcommons.User, upd mapcommons.MetadataUpdate) ([]mapcommons.Permission, error) {
	if upd.Permissions == nil {
		return s.policy.DefaultDatasetPermissions(), nil
	}
	if err := s.policy.CanSetDatasetPermissions(me, &mapcommons.Dataset{OwnerID: me.ID}); err != nil {
		return nil, err
	}
	return *upd.Permissions, s.checkGroups(r, *upd.Permissions)
}

// metadataParams reads the metadata fields and the sharing list from plain
// parameters or from under dataset[...] / overlay[...]; the wrapped form
// wins. NET sends the title as "name".
func metadataParams(p params.Params) (mapcommons.MetadataUpdate, error) {
	var upd mapcommons.MetadataUpdate
	scopes := []params.Params{p}
	for _, k := range []string{"dataset", "overlay"} {
		if m, ok := p.Map(k); ok {
			scopes = append(scopes, m)
		}
	}
	for _, f := range upd.Fields() {
		for _, sc := range scopes {
			if v, ok := sc.String(f.Name); ok {
				v := v
				*f.Ptr = &v
			}
		}
	}
	if upd.Title == nil {
		for _, sc := range scopes {
			if v, ok := sc.String("name"); ok {
				v := v
				upd.Title = &v
			}
		}
	}
	if upd.Title != nil && strings.TrimSpace(*upd.Title) == "" {
		upd.Title = nil // a blank title keeps the one there is (or the default)
	}
	if upd.Tags != nil {
		t := mapcommons.NormalizeTags(*upd.Tags)
		upd.Tags = &t
	}
	for _, sc := range scopes {
		if n := geocommons.Root(sc).Child("permissions"); n.Given() {
			perms, err := geocommons.Permissions(n)
			if err != nil {
				return upd, err
			}
			upd.Permissions = &perms
		}
	}
	var m mapcommons.Metadata
	upd.Apply(&m)
	return upd, m.Validate()
}

// handleDatasetCreate answers POST /datasets: a dataset from an upload (a file, a
// shapefile's parts, a zip, a body of a data type) or from a URL to fetch.
func (s *Server) handleDatasetCreate(w http.ResponseWriter, r *http.Request) error {
	me := caller(r)
	if err := s.policy.CanCreateDataset(me); err != nil {
		return err
	}
	q, err := params.ParseRequest(r, params.ParseOptions{MaxBody: s.cfg.MaxUpload, MaxForm: s.cfg.MaxForm, TempDir: s.cfg.TempDir, SpoolJSON: true, Budget: s.forms})
	if err != nil {
		return err
	}
	defer q.Cleanup()
	if err := s.jsonBodyParams(q); err != nil {
		return err
	}
	upd, err := metadataParams(q.Params)
	if err != nil {
		return err
	}
	perms, err := s.newDatasetPermissions(r, me, upd)
	if err != nil {
		return err
	}
	if raw, ok := q.Params.String("url"); ok {
		return s.createFromURL(w, r, me, q.Params, upd, perms, raw)
	}
	up, err := s.opener().Open(r.Context(), q, nil)
	if err != nil {
		return err
	}
	defer up.Close()
	ds := ingest.NewDataset(me, up, upd, perms)
	if err := ingest.Create(r.Context(), s.svc.Datasets, ds, up, s.cfg.MaxFeatures, nil); err != nil {
		return err
	}
	doc, err := s.datasetJSON(r, ds, false)
	if err != nil {
		return err
	}
	return s.created(w, r, s.datasetLink(r, ds.ID), doc)
}

// opener opens uploads within the server's bounds.
func (s *Server) opener() ingest.Opener {
	return ingest.Opener{TempDir: s.cfg.TempDir, MaxUpload: s.cfg.MaxUpload}
}

// limitFeatures bounds what src may add to a dataset holding have features
// already (appends; 0 otherwise) to the server's --max-features.
func (s *Server) limitFeatures(src mapcommons.FeatureSource, have int64) mapcommons.FeatureSource {
	return ingest.LimitFeatures(src, have, s.cfg.MaxFeatures)
}

// handleDatasetGet answers GET /datasets/{id}: the dataset's metadata, or
// its features in a download format by the path's suffix.
func (s *Server) handleDatasetGet(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.findDataset(r)
	if err != nil {
		return err
	}
	if err := s.policy.CanViewDataset(caller(r), ds); err != nil {
		return err
	}
	switch f := info(r).format; f {
	case "json":
		if notModified(w, r, s.datasetETag(r, ds, f), cacheControl(r, s.policy.CanViewDataset(nil, ds) == nil)) {
			return nil
		}
		return s.writeDatasetJSON(w, r, ds)
	case "png":
		return s.writeDatasetImage(w, r, ds)
	default:
		ext, ok := format.DatasetDownload(f)
		if !ok {
			return mapcommons.Errorf(mapcommons.ENOTFOUND, "datasets do not download as .%s (try json, csv, geojson, kml, kmz, atom, zip, sqlite or gpkg)", f)
		}
		if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
			return err
		}
		if err := s.checkBody(r); err != nil {
			return err
		}
		// Before a feature is read: a client holding this version of the
		// file gets a 304 at once.
		if notModified(w, r, s.datasetETag(r, ds, f), cacheControl(r, s.policy.CanDownloadDataset(nil, ds) == nil)) {
			return nil
		}
		return s.writeDatasetFile(w, r, ds, ext)
	}
}

// writeDatasetJSON writes the dataset's JSON; with include_features=1 its
// features stream after the metadata.
func (s *Server) writeDatasetJSON(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset) error {
	// Features asked for in the query string need download before the
	// body is read (the flag may also come in the body: checked below).
	var qp params.Params = params.Params{}
	if qp.ParseQuery(r.URL.RawQuery) == nil {
		if yes, _, _ := qp.Bool("include_features"); yes {
			if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
				return err
			}
		}
	}
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	p := q.Params
	withAttrs, _, err := p.Bool("include_attributes")
	if err != nil {
		return err
	}
	withFeatures, _, err := p.Bool("include_features")
	if err != nil {
		return err
	}
	withGeometry, _, err := p.Bool("include_geometry")
	if err != nil {
		return err
	}
	hex, _, err := p.Bool("hex_geometry")
	if err != nil {
		return err
	}
	doc, err := s.datasetJSON(r, ds, withAttrs)
	if err != nil {
		return err
	}
	if !withFeatures {
		return s.writeJSON(w, r, http.StatusOK, doc)
	}
	if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
		return err
	}
	fq, err := geocommons.Page(p, -1)
	if err != nil {
		return err
	}
	doc.Pagination.Start, doc.Pagination.Limit = fq.Offset, fq.Limit
	if fq.Limit < 0 {
		doc.Pagination.Limit = ds.FeatureCount
	}
	head, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	// hex_geometry=1 alone asks for the geometry as well (as hex WKB).
	mode := geomNone
	switch {
	case hex:
		mode = geomHex
	case withGeometry:
		mode = geomGeoJSON
	}
	out := startJSON(w, r)
	fw := newFlatWriter(out, ds.Attributes, mode, append(head[:len(head)-1], `,"features":[`...))
	if err := s.svc.Features.ScanFeatures(r.Context(), ds.ID, &fq, fw.Write); err != nil {
		return err
	}
	if err := fw.End("]}"); err != nil {
		return err
	}
	return out.Close()
}

// typeUpdate reads a dataset update's type (plain, or under dataset[] or
// overlay[]): for a dataset registered from a URL, how its feed is read
// from the next fetch on (nil when unchanged); for an upload, whose type
// is its file's, anything but its own type is a 400 (clients echo the
// whole dataset back).
func typeUpdate(p params.Params, ds *mapcommons.Dataset) (*string, error) {
	t, given := p.String("type")
	for _, k := range []string{"dataset", "overlay"} {
		if m, ok := p.Map(k); ok {
			if v, ok := m.String("type"); ok {
				t, given = v, true
			}
		}
	}
	t = strings.ToLower(strings.TrimSpace(t))
	if !given || t == "" || t == ds.Type || ds.URL != "" && t == ds.URLType {
		return nil, nil
	}
	if ds.URL == "" {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "type: the type of an uploaded dataset is that of its file (%s): upload the data again to change it", ds.Type)
	}
	kind := ingest.URLTypes[t]
	switch {
	case kind == "":
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "type: %q is not one of csv, kml, kmz, atom, rss, geojson, zip", t)
	case kind == "wms" || kind == "tile" || ds.URLType == "wms" || ds.URLType == "tile":
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "type: a %s registration cannot become %s: register the URL again", ds.URLType, t)
	}
	return &kind, nil
}

// keyUpdate reads a dataset update's key (plain, or under dataset[] or
// overlay[]): for a dataset registered from a URL, the attribute that
// identifies the rows of its feed from the next fetch on ("" for none),
// which must be one of the dataset's attributes; nil when unchanged.
func keyUpdate(p params.Params, ds *mapcommons.Dataset) (*string, error) {
	k, given := p.String("key")
	for _, m := range []string{"dataset", "overlay"} {
		if m, ok := p.Map(m); ok {
			if v, ok := m.String("key"); ok {
				k, given = v, true
			}
		}
	}
	k = strings.TrimSpace(k)
	if !given || k == ds.FeedKey {
		return nil, nil
	}
	switch {
	case ds.URL == "" || ds.DataType != mapcommons.DataTypeFeed:
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "key: only a dataset registered from a feed's URL has a key")
	case k == "":
		return &k, nil
	}
	if err := ingest.CheckFeedKey(k, ds.Attributes); err != nil {
		return nil, err
	}
	return &k, nil
}

// handleDatasetUpdate answers PUT /datasets/{id}: metadata and, with
// permissions, the sharing list (replaced whole). An update of metadata
// alone answers 201 as the spec's example does; one that carries
// permissions answers 200 (spec "Permissions": "200 OK whether
// permissions were created, changed or removed"). Both with an empty
// body and the Status header.
func (s *Server) handleDatasetUpdate(w http.ResponseWriter, r *http.Request) error {
	ds, q, err := parseFor(s, r, s.datasetToEdit)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	upd, err := metadataParams(q.Params)
	if err != nil {
		return err
	}
	if upd.URLType, err = typeUpdate(q.Params, ds); err != nil {
		return err
	}
	if upd.FeedKey, err = keyUpdate(q.Params, ds); err != nil {
		return err
	}
	status := http.StatusCreated
	if upd.Permissions != nil {
		status = http.StatusOK
		if err := s.policy.CanShareDataset(caller(r), ds, *upd.Permissions); err != nil {
			return err
		}
		if err := s.checkGroups(r, *upd.Permissions); err != nil {
			return err
		}
	}
	if _, err := s.svc.Datasets.UpdateDataset(r.Context(), ds.ID, upd); err != nil {
		return err
	}
	return empty(w, status)
}

// handleDatasetDelete answers DELETE /datasets/{id}: the owner or an
// administrator deletes the dataset and its features.
func (s *Server) handleDatasetDelete(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.datasetFor(r, s.findDataset, s.policy.CanDeleteDataset)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	if err := s.svc.Datasets.DeleteDataset(r.Context(), ds.ID); err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}
