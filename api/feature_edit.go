package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/feature"
	"mapcommons/format"
	"mapcommons/format/geojson"
	"mapcommons/params"
)

// Editing features in place: PUT /datasets/{id}/features/{fid} replaces
// one feature, PATCH on the same path changes only what its body gives (a
// JSON Merge Patch, RFC 7396: OGC API Features Part 4's update), and POST
// /datasets/{id}/edits applies adds, updates and deletes together, all or
// nothing (the shape of ArcGIS applyEdits), its updates whole or partial.
// All are authorized before the body is read, take JSON bodies as feature
// create does (size bounded by ParseRequest, the dataset by
// --max-features), and go through FeatureService.ApplyEdits, whose new
// version of the dataset leaves every cached answer of the old behind.

// editBody authorizes an edit of the dataset toEdit finds (datasetToEdit,
// collectionToEdit), then opens its JSON body (jsonBody); empty is the
// message of a request without one. The caller must call cleanup.
func (s *Server) editBody(r *http.Request, toEdit func(*http.Request) (*mapcommons.Dataset, error), empty string) (ds *mapcommons.Dataset, body *os.File, cleanup func(), err error) {
	if ds, err = toEdit(r); err != nil {
		return nil, nil, nil, err
	}
	if body, cleanup, err = s.jsonBody(r, empty); err != nil {
		return nil, nil, nil, err
	}
	return ds, body, cleanup, nil
}

// jsonBody opens the JSON body of an edit the caller is authorized for,
// spooled by ParseRequest within the upload limit; empty is the message
// of a request without one. The caller must call cleanup.
func (s *Server) jsonBody(r *http.Request, empty string) (body *os.File, cleanup func(), err error) {
	// Only a body declared JSON is read: text/plain (what a page of any
	// site may post without asking) never is.
	if mt, _ := params.ParseContentType(r.Header.Get("Content-Type")); hasBody(r) && !params.IsJSONMediaType(mt) && format.BodyKind(mt) != format.KindGeoJSON {
		return nil, nil, mapcommons.Errorf(mapcommons.EUNSUPPORTED, "features are sent as JSON (Content-Type application/json or application/geo+json), not %q", mt)
	}
	q, err := params.ParseRequest(r, params.ParseOptions{MaxBody: s.cfg.MaxUpload, MaxForm: s.cfg.MaxForm, TempDir: s.cfg.TempDir, SpoolJSON: true, Budget: s.forms})
	if err != nil {
		return nil, nil, err
	}
	if q.Body == nil {
		q.Cleanup()
		return nil, nil, mapcommons.Errorf(mapcommons.EINVALID, "%s", empty)
	}
	f, err := os.Open(q.Body.Path)
	if err != nil {
		q.Cleanup()
		return nil, nil, err
	}
	return f, func() { f.Close(); q.Cleanup() }, nil
}

// maxFeatures is the bound ApplyEdits keeps a dataset to (0: none).
func (s *Server) maxFeatures() int64 { return max(s.cfg.MaxFeatures, 0) }

// featureID reads the {fid} path segment (under /ogc, {featureId}): a
// stable feature id.
func featureID(r *http.Request) (int64, error) {
	v := r.PathValue("fid")
	if ogcPath(r) {
		v = r.PathValue("featureId")
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, mapcommons.Errorf(mapcommons.ENOTFOUND, "no feature %q: feature ids are integers from 1", v)
	}
	return id, nil
}

// editedFeature converts one feature object of an edit, named name in
// errors: a flat object (attributes next to "geometry") or a GeoJSON
// Feature. Its "id" member (a GeoJSON Feature's, or a flat object's when
// the dataset has no attribute of that name) is returned apart, 0 when
// absent. With patch set, the object is a merge patch: the geometry may
// be left out, and patch records what the object gives.
func editedFeature(raw json.RawMessage, attrs []mapcommons.Attribute, name string, patch *mapcommons.Patch) (mapcommons.Feature, int64, error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return mapcommons.Feature{}, 0, mapcommons.Errorf(mapcommons.EINVALID, "%s: expected a feature object", name)
	}
	var id int64
	if rawID, ok := obj["id"]; ok && (featureForm(obj, attrs, patch != nil) || mapcommons.AttrIndex(attrs, "id") < 0) {
		delete(obj, "id")
		if !bytes.Equal(bytes.TrimSpace(rawID), []byte("null")) {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(rawID)), 10, 64)
			if err != nil || n < 1 {
				return mapcommons.Feature{}, 0, mapcommons.Errorf(mapcommons.EINVALID, "%s: id: %s is not a feature id (an integer from 1)", name, rawID)
			}
			id = n
		}
	}
	j := &jsonFeatures{attrs: attrs, name: name, patch: patch}
	if err := j.convert(obj); err != nil {
		return mapcommons.Feature{}, 0, err
	}
	return j.f, id, nil
}

// jsonKind names the kind of the JSON value raw (well formed) starts.
func jsonKind(raw []byte) string {
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func isGeoJSONFeature(obj map[string]json.RawMessage) bool {
	t, ok := obj["type"]
	return ok && bytes.Equal(bytes.TrimSpace(t), []byte(`"Feature"`))
}

// handleFeatureUpdate answers PUT /datasets/{id}/features/{fid}: the body,
// one feature as feature create takes it, replaces the attributes and
// geometry of the feature with stable id fid, which keeps its id and
// position. 200 with the feature as a GeoJSON Feature; 404 when the
// dataset has no such feature.
func (s *Server) handleFeatureUpdate(w http.ResponseWriter, r *http.Request) error {
	return s.updateFeature(w, r, false)
}

// handleFeaturePatch answers PATCH /datasets/{id}/features/{fid}: the
// body, a JSON Merge Patch of the feature (a flat object of attributes,
// "geometry" among them if it changes, or a GeoJSON Feature), changes the
// attributes it gives (null clears one) and the geometry if given; the
// rest is kept. Answered as PUT is.
func (s *Server) handleFeaturePatch(w http.ResponseWriter, r *http.Request) error {
	return s.updateFeature(w, r, true)
}

// updateFeature is PUT (a whole feature) and, with partial, PATCH (a
// merge patch) of one feature: one edit through ApplyEdits either way.
func (s *Server) updateFeature(w http.ResponseWriter, r *http.Request, partial bool) error {
	ds, body, cleanup, err := s.editBody(r, s.datasetToEdit, updateEmpty(partial))
	if err != nil {
		return err
	}
	defer cleanup()
	fid, err := featureID(r)
	if err != nil {
		return err
	}
	if err := s.applyUpdate(r, ds, body, fid, partial, 0); err != nil {
		return err
	}
	// The feature as it is now stored.
	var out []byte
	err = s.svc.Features.ScanFeatures(r.Context(), ds.ID, &mapcommons.FeatureQuery{Limit: 1, IDs: []int64{fid}}, func(g *mapcommons.Feature) error {
		var err error
		out, err = geojson.AppendFeature(nil, geojson.Keys(ds.Attributes), ds.Attributes, g, "")
		return err
	})
	if err != nil {
		return err
	}
	if out == nil {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset %d has no feature %d", ds.ID, fid) // deleted meanwhile
	}
	return s.writeJSON(w, r, http.StatusOK, json.RawMessage(out))
}

// updateEmpty is the message of a PUT (or, partial, a PATCH) of one
// feature without a body.
func updateEmpty(partial bool) string {
	if partial {
		return `no patch: send a JSON object of what changes, {"name": "x"}`
	}
	return "no feature: send one feature as JSON"
}

// applyUpdate reads body, one feature (or, partial, a merge patch of
// one), and replaces (merges into) the feature fid of ds with it: the
// update of PUT and PATCH, native and OGC API alike. ENOTFOUND when ds
// has no feature fid; a version above zero is the one ds must still be
// at (Edits.Version), else codePrecondition.
func (s *Server) applyUpdate(r *http.Request, ds *mapcommons.Dataset, body io.Reader, fid int64, partial bool, version int64) error {
	dec := json.NewDecoder(body)
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: one feature object, and nothing after it")
	}
	var patch *mapcommons.Patch
	if partial {
		// RFC 7396 lets a patch that is not an object replace the whole
		// document: no feature is anything but an object.
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] != '{' {
			return mapcommons.Errorf(mapcommons.EINVALID, "feature: a patch is a JSON object of what changes (attributes, geometry), not %s", jsonKind(t))
		}
		patch = &mapcommons.Patch{}
	}
	f, id, err := editedFeature(raw, ds.Attributes, "feature", patch)
	if err != nil {
		return err
	}
	if id != 0 && id != fid {
		return mapcommons.Errorf(mapcommons.EINVALID, "feature: id %d is not the feature %d of the path", id, fid)
	}
	f.ID = fid
	e := &mapcommons.Edits{Updates: []mapcommons.Feature{f}, MaxFeatures: s.maxFeatures(), Version: version}
	if patch != nil {
		e.Patches = []*mapcommons.Patch{patch}
	}
	_, err = s.svc.Features.ApplyEdits(r.Context(), ds.ID, e)
	return s.oneEditError(ds, fid, "updates", err)
}

// oneEditError is the error of an edit of the one feature fid of ds
// (list: "updates" or "deletes"), as a request naming it in its path
// tells it: ENOTFOUND for a missing feature, codePrecondition for a
// dataset no longer at the version the edit was made against (its
// If-Match), and an invalid one named as the body rather than as an item
// of a batch.
func (s *Server) oneEditError(ds *mapcommons.Dataset, fid int64, list string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, feature.ErrMissingFeature):
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "dataset %d has no feature %d", ds.ID, fid)
	case errors.Is(err, feature.ErrStaleVersion):
		return staleItem(ds, fid)
	case mapcommons.ErrorCode(err) == mapcommons.EINVALID:
		// The store names the item as in a batch: here it is the body.
		return mapcommons.Errorf(mapcommons.EINVALID, "feature: %s", strings.TrimPrefix(mapcommons.ErrorMessage(err), list+"[0]: "))
	}
	return err
}

// editResult is one item of an applyEdits answer, as ArcGIS clients read it.
type editResult struct {
	ID       int64 `json:"id"`
	ObjectID int64 `json:"objectId"`
	Success  bool  `json:"success"`
}

// handleEdits answers POST /datasets/{id}/edits: {"adds": [features],
// "updates": [features with "id"], "deletes": [ids]}, any member missing,
// applied all or nothing. 200 with addResults, updateResults and
// deleteResults; a bad item is a 400 (or 422) naming it, nothing applied.
func (s *Server) handleEdits(w http.ResponseWriter, r *http.Request) error {
	ds, body, cleanup, err := s.editBody(r, s.datasetToEdit, `no edits: send {"adds": [...], "updates": [...], "deletes": [...]} as JSON`)
	if err != nil {
		return err
	}
	defer cleanup()
	e, err := s.readEdits(body, ds.Attributes)
	if mapcommons.ErrorCode(err) == mapcommons.EINVALID {
		// A body that is not JSON at all is told as such, rather than by
		// what the reader met before the fault.
		if _, serr := body.Seek(0, io.SeekStart); serr == nil {
			if jerr := wellFormedJSON(body); jerr != nil {
				return mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: %v", jerr)
			}
		}
		return err
	} else if err != nil {
		return err
	}
	res, err := s.svc.Features.ApplyEdits(r.Context(), ds.ID, e)
	if err != nil {
		return err
	}
	out := struct {
		Adds    []editResult `json:"addResults"`
		Updates []editResult `json:"updateResults"`
		Deletes []editResult `json:"deleteResults"`
	}{[]editResult{}, []editResult{}, []editResult{}}
	for _, id := range res.AddIDs {
		out.Adds = append(out.Adds, editResult{id, id, true})
	}
	for _, f := range e.Updates {
		out.Updates = append(out.Updates, editResult{f.ID, f.ID, true})
	}
	for _, id := range e.Deletes {
		out.Deletes = append(out.Deletes, editResult{id, id, true})
	}
	return s.writeJSON(w, r, http.StatusOK, out)
}

// heldAdds is the most adds readEdits keeps in memory: past it, the
// store reads them from the spooled body again (editAdds).
const heldAdds = 1024

// readEdits reads an edits body, streaming, and stops with ETOOLARGE as
// soon as it names more features than the dataset may. Every add is
// checked as it is read; more than heldAdds of them are left in the body,
// which the edit's AddSource reads again for the store.
func (s *Server) readEdits(body io.ReaderAt, attrs []mapcommons.Attribute) (*mapcommons.Edits, error) {
	e := &mapcommons.Edits{MaxFeatures: s.maxFeatures()}
	var adds int64      // the adds read
	addsAt := int64(-1) // the offset of the adds' array in the body
	size := int64(1) << 62
	dec := json.NewDecoder(io.NewSectionReader(body, 0, size))
	dec.UseNumber()
	bad := func(err error) error {
		return mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: %v", err)
	}
	if t, err := dec.Token(); err != nil {
		return nil, bad(err)
	} else if t != json.Delim('{') {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, `expected an object: {"adds": [...], "updates": [...], "deletes": [...]}`)
	}
	seen := map[string]bool{}
	// "merge" says whether the updates are merge patches (true) or whole
	// features (false); without it, an update that gives no geometry (an
	// error before patches were taken) is a patch and one that does is
	// whole, as it always was. It may come after the updates: each is read
	// as a patch, and settled at the end.
	var merge *bool
	var patches []*mapcommons.Patch
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		key, _ := kt.(string)
		if seen[key] {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s: given twice", key)
		}
		seen[key] = true
		switch key {
		case "adds", "updates", "deletes":
		case "rollbackOnFailure": // ArcGIS's: edits here are always all or nothing
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, bad(err)
			}
			if b, ok := v.(bool); !ok || !b {
				return nil, params.Invalid("rollbackOnFailure", "edits are applied all or nothing: only true is accepted")
			}
			continue
		case "merge":
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, bad(err)
			}
			b, ok := v.(bool)
			if !ok {
				return nil, params.Invalid("merge", "true (every update a merge patch) or false (every update a whole feature)")
			}
			merge = &b
			continue
		default:
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "%q: not a member of an edit (adds, updates, deletes, merge)", key)
		}
		if t, err := dec.Token(); err != nil {
			return nil, bad(err)
		} else if t == nil {
			continue // null: none
		} else if t != json.Delim('[') {
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s: expected an array", key)
		}
		if key == "adds" {
			addsAt = dec.InputOffset() - 1 // at its '['
		}
		for i := 0; dec.More(); i++ {
			name := fmt.Sprintf("%s[%d]", key, i)
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s: %v", name, err)
			}
			if key == "deletes" {
				id, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
				if err != nil || id < 1 {
					return nil, mapcommons.Errorf(mapcommons.EINVALID, "%s: %s is not a feature id (an integer from 1)", name, raw)
				}
				e.Deletes = append(e.Deletes, id)
				continue
			}
			// A dataset holds at most MaxFeatures: more adds, or more
			// updates, than that can never apply; refused before they
			// are all held in memory.
			if n := max(adds, int64(len(e.Updates))); e.MaxFeatures > 0 && n >= e.MaxFeatures {
				return nil, mapcommons.Errorf(mapcommons.ETOOLARGE, "max-features: a dataset may hold at most %d features on this server", e.MaxFeatures)
			}
			var patch *mapcommons.Patch
			if key == "updates" {
				patch = &mapcommons.Patch{}
			}
			f, id, err := editedFeature(raw, attrs, name, patch)
			if err != nil {
				return nil, err
			}
			if key == "adds" {
				if adds++; adds <= heldAdds {
					e.Adds = append(e.Adds, f) // an id given is not the store's to take
				} else {
					e.Adds = nil // read again, for the store
				}
				continue
			}
			if id == 0 {
				return nil, mapcommons.Errorf(mapcommons.EINVALID, `%s: no "id": an update names the feature it replaces by its id`, name)
			}
			f.ID = id
			e.Updates = append(e.Updates, f)
			patches = append(patches, patch)
		}
		if _, err := dec.Token(); err != nil { // the array's end
			return nil, bad(err)
		}
	}
	if _, err := dec.Token(); err != nil { // the object's end
		return nil, bad(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "malformed JSON body: one object, and nothing after it")
	}
	for i, p := range patches {
		switch {
		case merge != nil && *merge:
		case merge != nil && !p.Geometry:
			return nil, mapcommons.Errorf(mapcommons.EINVALID, "updates[%d]: no geometry: a feature needs a GeoJSON geometry (or null), or say \"merge\": true", i)
		case !p.Geometry:
			continue // a patch
		default:
			patches[i] = nil // whole: what it leaves out becomes null
		}
	}
	if slices.ContainsFunc(patches, func(p *mapcommons.Patch) bool { return p != nil }) {
		e.Patches = patches
	}
	if adds > heldAdds {
		e.AddCount = adds
		e.AddSource = &editAdds{r: io.NewSectionReader(body, addsAt, size-addsAt), attrs: attrs}
	}
	return e, nil
}

// editAdds reads the adds of an edits body again, from the array's '['
// (readEdits read and checked them all once).
type editAdds struct {
	r     io.Reader
	attrs []mapcommons.Attribute
	dec   *json.Decoder
	i     int
	f     mapcommons.Feature
}

func (a *editAdds) Attributes() []mapcommons.Attribute { return a.attrs }

func (a *editAdds) Next() (*mapcommons.Feature, error) {
	if a.dec == nil {
		a.dec = json.NewDecoder(a.r)
		a.dec.UseNumber()
		if t, err := a.dec.Token(); err != nil || t != json.Delim('[') {
			return nil, mapcommons.Errorf(mapcommons.EINTERNAL, "adds read again: no array")
		}
	}
	if !a.dec.More() {
		return nil, mapcommons.EOF
	}
	var raw json.RawMessage
	if err := a.dec.Decode(&raw); err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "adds[%d]: %v", a.i, err)
	}
	f, _, err := editedFeature(raw, a.attrs, fmt.Sprintf("adds[%d]", a.i), nil)
	if err != nil {
		return nil, err
	}
	a.i++
	a.f = f
	return &a.f, nil
}

// wellFormedJSON checks, streaming, that r holds one JSON value.
func wellFormedJSON(r io.Reader) error {
	dec := json.NewDecoder(r)
	depth, values := 0, 0
	for {
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			switch {
			case depth > 0:
				return io.ErrUnexpectedEOF
			case values != 1:
				return fmt.Errorf("%d values, not one", values)
			}
			return nil
		} else if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			values++
		}
	}
}
