package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/format"
	csvformat "mapcommons/format/csv"
	"mapcommons/format/geojson"
	"mapcommons/format/shapefile"
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
	Permissions         []any                       `json:"permissions"`
	Pagination          pagination                  `json:"pagination"`
	Stats               map[string]mapcommons.Stats `json:"stats"`
	DataAttributes      []attributeDoc              `json:"data_attributes"`
	CRS                 *string                     `json:"crs"`
	Source              string                      `json:"source"`
	URL                 *string                     `json:"url"`
	URLType             *string                     `json:"url_type"`
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

func (s *Server) datasetJSON(r *http.Request, ds *mapcommons.Dataset, withAttributes bool) *datasetDoc {
	m := ds.Metadata
	d := &datasetDoc{
		ID: ds.ID, Title: m.Title, Name: m.Title, Description: m.Description, Author: m.Author, Tags: m.Tags,
		MetadataURL: m.MetadataURL, CitationURL: m.CitationURL, ContactName: m.ContactName,
		ContactAddress: m.ContactAddress, ContactPhone: m.ContactPhone, ProcessNotes: m.ProcessNotes,
		Link: s.datasetLink(r, ds.ID), Published: isoTime(ds.CreatedAt), CreatedAt: isoTime(ds.CreatedAt),
		UpdatedAt: isoTime(ds.UpdatedAt), DataType: ds.DataType, Type: ds.Type, State: ds.State,
		FeatureCount: ds.FeatureCount, GeometryTypes: ds.GeometryTypes, Permissions: []any{},
		Pagination: pagination{Start: 0, Total: ds.FeatureCount, Limit: ds.FeatureCount},
		Stats:      ds.Stats,
	}
	if ds.Owner != "" {
		d.Contributor = &ds.Owner
	}
	if ds.CRS != "" {
		d.CRS = &ds.CRS
	}
	if ds.URL != "" {
		d.URL, d.URLType = &ds.URL, &ds.URLType
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
	return d
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

// findDataset loads the {id} dataset.
func (s *Server) findDataset(r *http.Request) (*mapcommons.Dataset, error) {
	id, err := datasetID(r)
	if err != nil {
		return nil, err
	}
	return s.svc.Datasets.FindDatasetByID(r.Context(), id)
}

// datasetToEdit loads the {id} dataset for a change: 401 without
// credentials, 404 when it does not exist (or may not be seen), 403 when
// the caller may not change it.
func (s *Server) datasetToEdit(r *http.Request) (*mapcommons.Dataset, error) {
	if caller(r) == nil {
		return nil, mapcommons.Errorf(mapcommons.EUNAUTHORIZED, "authentication required")
	}
	ds, err := s.findDataset(r)
	if err != nil {
		return nil, err
	}
	return ds, s.policy.CanEditDataset(caller(r), ds)
}

// metadataParams reads the metadata fields from plain parameters or from
// under dataset[...] / overlay[...]; the wrapped form wins. NET sends the
// title as "name".
func metadataParams(p Params) (mapcommons.MetadataUpdate, error) {
	var upd mapcommons.MetadataUpdate
	scopes := []Params{p}
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
	var m mapcommons.Metadata
	upd.Apply(&m)
	return upd, m.Validate()
}

func (s *Server) handleDatasetCreate(w http.ResponseWriter, r *http.Request) error {
	me := caller(r)
	if err := s.policy.CanCreateDataset(me); err != nil {
		return err
	}
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	upd, err := metadataParams(q.Params)
	if err != nil {
		return err
	}
	if raw, ok := q.Params.String("url"); ok {
		return s.createFromURL(w, r, me, q.Params, upd, raw)
	}
	up, err := s.openUpload(q)
	if err != nil {
		return err
	}
	defer up.Close()
	ds := &mapcommons.Dataset{OwnerID: me.ID, Owner: me.Login, Type: up.kind, CRS: up.crs, PRJ: up.prj}
	upd.Apply(&ds.Metadata)
	if strings.TrimSpace(ds.Title) == "" {
		ds.Title = up.name
	}
	if strings.TrimSpace(ds.Title) == "" {
		ds.Title = "Untitled"
	}
	if err := s.svc.Datasets.CreateDataset(r.Context(), ds, up.src); err != nil {
		return err
	}
	return s.created(w, r, s.datasetLink(r, ds.ID), s.datasetJSON(r, ds, false))
}

// upload is an opened data upload.
type upload struct {
	src   mapcommons.FeatureSource
	kind  string // the Dataset.Type it gives
	name  string // the file's base name without extension, for the default title
	crs   string
	prj   string
	files []*os.File
	// closers are readers holding files of their own (extracted entries);
	// remove are files the upload owns (a fetched body).
	closers []io.Closer
	remove  []string
}

func (u *upload) Close() {
	for _, c := range u.closers {
		c.Close()
	}
	for _, f := range u.files {
		f.Close()
	}
	for _, p := range u.remove {
		os.Remove(p)
	}
}

func (u *upload) open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err == nil {
		u.files = append(u.files, f)
	}
	return f, err
}

// uploadExt is the extension an upload part names: "shp" for dataset[shp]
// or overlay[shp], else the extension of its file name.
func uploadExt(up Upload) string {
	for _, p := range []string{"dataset[", "overlay["} {
		if strings.HasPrefix(up.Field, p) && strings.HasSuffix(up.Field, "]") {
			return strings.ToLower(up.Field[len(p) : len(up.Field)-1])
		}
	}
	return strings.ToLower(strings.TrimPrefix(filepath.Ext(up.Filename), "."))
}

func baseName(filename string) string {
	return strings.TrimSuffix(filename, filepath.Ext(filename))
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
func (s *Server) openFile(up *upload, kind, path, filename string) error {
	f, err := up.open(path)
	if err != nil {
		return err
	}
	if filename != "" {
		up.name = baseName(filename)
	}
	up.kind = kind
	switch kind {
	case format.KindCSV:
		rd, err := csvformat.Open(f)
		if err != nil {
			return err
		}
		up.src = rd
		return nil
	}
	return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "%s uploads are not available yet", kind)
}

const noDataMessage = "no data: send a file part dataset[csv], or dataset[shp]+dataset[shx]+dataset[dbf], or a text/csv body"

// openUpload finds the data in a create request and opens its reader.
func (s *Server) openUpload(q *Request) (*upload, error) {
	byExt := map[string]Upload{}
	for _, u := range q.Uploads {
		ext := uploadExt(u)
		if _, dup := byExt[ext]; dup {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "dataset[%s]: sent twice", ext)
		}
		byExt[ext] = u
	}
	up := &upload{}
	fail := func(err error) (*upload, error) {
		up.Close()
		return nil, err
	}
	_, hasShp := byExt["shp"]
	_, hasDbf := byExt["dbf"]
	_, hasShx := byExt["shx"]
	switch {
	case hasShp || hasDbf || hasShx:
		for _, need := range []string{"shp", "dbf"} {
			if _, ok := byExt[need]; !ok {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "dataset[%s]: a shapefile needs its .%s part", need, need)
			}
		}
		var opt shapefile.Options
		for ext, dst := range map[string]*string{"cpg": &opt.CPG, "prj": &opt.PRJ} {
			if u, ok := byExt[ext]; ok {
				v, err := readSmall(u.Path, 64<<10)
				if err != nil {
					return nil, err
				}
				*dst = v
			}
		}
		shp, err := up.open(byExt["shp"].Path)
		if err != nil {
			return fail(err)
		}
		dbf, err := up.open(byExt["dbf"].Path)
		if err != nil {
			return fail(err)
		}
		var shx io.ReadSeeker
		if u, ok := byExt["shx"]; ok {
			f, err := up.open(u.Path)
			if err != nil {
				return fail(err)
			}
			shx = f
		}
		rd, err := shapefile.Open(shp, dbf, shx, opt)
		if err != nil {
			return fail(err)
		}
		up.src, up.kind, up.crs, up.prj = rd, format.KindShp, rd.CRS(), opt.PRJ
		up.name = baseName(byExt["shp"].Filename)
		return up, nil
	case len(byExt) > 0:
		for ext, u := range byExt {
			if k := format.PartKind(ext); k != "" && k != format.KindShp {
				if err := s.openFile(up, k, u.Path, u.Filename); err != nil {
					return fail(err)
				}
				return up, nil
			}
		}
		for ext := range byExt {
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
		if err := s.openFile(up, k, q.Body.Path, ""); err != nil {
			return fail(err)
		}
		return up, nil
	}
	return nil, mapcommons.Errorf(mapcommons.EINVALID, noDataMessage)
}

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
		return s.writeDatasetJSON(w, r, ds)
	case "csv", "geojson":
		if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
			return err
		}
		return s.writeDatasetFile(w, r, ds, f)
	default:
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "downloading a dataset as %s is not available yet", f)
	}
}

// writeDatasetJSON writes the dataset's JSON; with include_features=1 its
// features stream after the metadata.
func (s *Server) writeDatasetJSON(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset) error {
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
	doc := s.datasetJSON(r, ds, withAttrs)
	if !withFeatures {
		return s.writeJSON(w, r, http.StatusOK, doc)
	}
	if err := s.policy.CanDownloadDataset(caller(r), ds); err != nil {
		return err
	}
	fq, err := pageParams(p, -1)
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
	mode := geomNone
	if withGeometry {
		mode = geomGeoJSON
		if hex {
			mode = geomHex
		}
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

// writeDatasetFile streams every feature of ds in a download format.
func (s *Server) writeDatasetFile(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset, ext string) error {
	ct, _ := format.ContentType(ext)
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Disposition", `attachment; filename="`+downloadName(ds, ext)+`"`)
	bw := bufio.NewWriterSize(w, 64<<10)
	all := &mapcommons.FeatureQuery{Limit: -1}
	var err error
	switch ext {
	case "csv":
		cw := csvformat.NewWriter(bw, ds.Attributes, ds.OnlyPoints())
		if err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, all, cw.Write); err == nil {
			err = cw.Flush()
		}
	case "geojson":
		gw := geojson.NewWriter(bw, ds.Attributes)
		gw.Begin(nil)
		if err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, all, gw.Write); err == nil {
			err = gw.End()
		}
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func (s *Server) handleDatasetUpdate(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.datasetToEdit(r)
	if err != nil {
		return err
	}
	q, err := s.parseRequest(r)
	if err != nil {
		return err
	}
	defer q.Cleanup()
	upd, err := metadataParams(q.Params)
	if err != nil {
		return err
	}
	if _, err := s.svc.Datasets.UpdateDataset(r.Context(), ds.ID, upd); err != nil {
		return err
	}
	return empty(w, http.StatusCreated)
}

func (s *Server) handleDatasetDelete(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.datasetToEdit(r)
	if err != nil {
		return err
	}
	if err := s.svc.Datasets.DeleteDataset(r.Context(), ds.ID); err != nil {
		return err
	}
	return empty(w, http.StatusNoContent)
}
