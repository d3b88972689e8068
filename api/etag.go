package api

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"mapcommons"
)

// Validators and caching of answers about datasets.
//
// An answer's ETag is weak (W/"…"): the same answer goes out plain or
// gzip-encoded, and a weak tag stays the same across content codings, so
// a client that cached one form revalidates it whatever Accept-Encoding
// it sends next. The tag is the dataset's id and version (which grows with
// every change of the dataset or its features) and a hash of everything
// else the answer depends on: the format, the path (a tile's z/x/y), the
// query string (callback
// included), the caller and their rights on the dataset, the sharing list,
// the base URL of links, and this process (an upgrade may change the
// answer for the same data; a restart costs one refetch).
//
// Cache-Control: "public" only for an anonymous request for something
// anyone may see (a shared cache may give it to anyone); "private" for
// everything answered to a caller who identified themselves or shared
// with groups, so a shared cache never hands one user's answer to another.
// Both say max-age=0, must-revalidate: the answer changes whenever the
// dataset does, so every use is revalidated (a cheap 304). Errors are
// no-store.

// processTag tells this process's answers from another's.
var processTag = func() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// requestParts appends to b what every validator hashes besides its
// object: this process, the format f, the path, the query string, the
// caller and the base URL of links. ok is false when the answer depends on
// a request body, which no tag covers. Every read makes a validator, so
// its parts are appended, not formatted.
func (s *Server) requestParts(b []byte, r *http.Request, f string) (_ []byte, ok bool) {
	if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
		return b, false
	}
	b = append(b, processTag...)
	b = append(append(b, 0), f...)
	b = append(append(b, 0), r.URL.Path...)
	b = append(append(b, 0), r.URL.RawQuery...)
	b = append(b, 0)
	if u := caller(r); u != nil {
		b = strconv.AppendInt(b, u.ID, 10)
		b = append(append(b, ':'), u.Login...)
		b = append(b, ':')
		b = appendBools(b, u.Admin)
		for _, g := range u.GroupIDs {
			b = strconv.AppendInt(append(b, ','), g, 10)
		}
	}
	b = append(append(b, 0), s.baseURL(r)...)
	return append(b, 0), true
}

// appendBools appends a letter per flag: t or f.
func appendBools(b []byte, flags ...bool) []byte {
	for _, v := range flags {
		if v {
			b = append(b, 't')
		} else {
			b = append(b, 'f')
		}
	}
	return b
}

// appendRights appends a caller's rights to a validator's parts.
func appendRights(b []byte, r mapcommons.Rights) []byte {
	return append(appendBools(b, r.View, r.Download, r.Edit), 0)
}

// appendPermissions appends a sharing list to a validator's parts.
func appendPermissions(b []byte, perms []mapcommons.Permission) []byte {
	for _, p := range perms {
		b = append(append(b, p.Group...), ':')
		b = append(appendBools(b, p.View, p.Download, p.Edit), ';')
	}
	return b
}

// fnv64a is the 64-bit FNV-1a hash of b (hash/fnv's, without its
// allocation).
func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

// datasetETag is the weak validator of an answer about ds in format f.
// It is "" when the answer depends on a request body, which no tag covers.
func (s *Server) datasetETag(r *http.Request, ds *mapcommons.Dataset, f string) string {
	var buf [512]byte
	b, ok := s.requestParts(buf[:0], r, f)
	if !ok {
		return ""
	}
	b = appendRights(b, s.policy.DatasetRights(caller(r), ds))
	b = append(appendPermissions(b, ds.Permissions), 0)
	b = strconv.AppendInt(b, ds.UpdatedAt.UnixNano(), 10)
	sum := fnv64a(b)
	tag := append(buf[:0], `W/"d`...)
	tag = strconv.AppendInt(tag, ds.ID, 10)
	tag = strconv.AppendInt(append(tag, '-'), ds.Version, 10)
	tag = strconv.AppendUint(append(tag, '-'), sum, 16)
	return string(append(tag, '"'))
}

// cacheControl is the Cache-Control of an answer that public says anyone
// may have.
func cacheControl(r *http.Request, public bool) string {
	if public && caller(r) == nil {
		return "public, max-age=0, must-revalidate"
	}
	return "private, max-age=0, must-revalidate"
}

// perCaller is the Cache-Control of an answer that depends on who asks
// and has no validator: only the caller's own cache keeps it, and asks
// again before each use.
const perCaller = "private, no-cache"

// privateAnswer marks an answer that depends on the caller (what they may
// see), also when anonymous: a shared cache keeps none of them, so that
// it never hands one caller's answer to another.
func privateAnswer(w http.ResponseWriter) {
	if h := w.Header(); h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", perCaller)
	}
}

// notModified sets the ETag and Cache-Control of an answer and, when the
// request's If-None-Match holds the tag, answers 304 and reports true:
// the handler then does no work. An empty etag sets Cache-Control only.
func notModified(w http.ResponseWriter, r *http.Request, etag, cacheControl string) bool {
	h := w.Header()
	h.Set("Cache-Control", cacheControl)
	if etag == "" {
		return false
	}
	h.Set("ETag", etag)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	inm := r.Header.Values("If-None-Match")
	if len(inm) == 0 || !etagMatch(inm, etag) {
		return false
	}
	// The 304 varies as the 200 would.
	h.Add("Vary", "Accept-Encoding")
	w.WriteHeader(http.StatusNotModified)
	return true
}

// etagMatch is the weak comparison of If-None-Match (RFC 9110 13.1.2):
// "*" or any listed tag with the same opaque part.
func etagMatch(values []string, etag string) bool {
	opaque := strings.TrimPrefix(etag, "W/")
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == opaque {
				return true
			}
		}
	}
	return false
}

// mapETag is the weak validator of an answer about m in format f. Maps
// have no version: the tag hashes the whole stored map (layers, sharing,
// times) and the id, version and sharing of each layer's dataset, which
// the map's answers show, with the request's parts (requestParts).
func (s *Server) mapETag(r *http.Request, m *mapcommons.Map, f string) string {
	b, ok := s.requestParts(nil, r, f)
	if !ok {
		return ""
	}
	doc, err := json.Marshal(m)
	if err != nil {
		return ""
	}
	b = append(appendRights(b, s.policy.MapRights(caller(r), m)), doc...)
	for _, l := range m.Layers {
		ds := s.layerDataset(r.Context(), l.Source)
		if b = appendLayerVersion(b, ds); ds != nil {
			b = appendPermissions(append(b, ':'), ds.Permissions)
		}
	}
	tag := strconv.AppendInt([]byte(`W/"m`), m.ID, 10)
	tag = strconv.AppendUint(append(tag, '-'), fnv64a(b), 16)
	return string(append(tag, '"'))
}

// appendLayerVersion appends what a map's tags and image keys take of a
// layer's dataset: its id, version and time of change, or "-" for none
// (left out, or not a dataset).
func appendLayerVersion(b []byte, ds *mapcommons.Dataset) []byte {
	if ds == nil {
		return append(b, 0, '-')
	}
	b = strconv.AppendInt(append(b, 0), ds.ID, 10)
	b = strconv.AppendInt(append(b, ':'), ds.Version, 10)
	return strconv.AppendInt(append(b, ':'), ds.UpdatedAt.UnixNano(), 10)
}

// mapPublic reports whether anyone may have the answers about m: the map
// and, when data is shown, every layer's dataset.
func (s *Server) mapPublic(r *http.Request, m *mapcommons.Map, data bool) bool {
	if s.policy.CanViewMap(nil, m) != nil {
		return false
	}
	if data {
		for _, l := range m.Layers {
			if ds := s.layerDataset(r.Context(), l.Source); ds != nil && s.policy.CanDownloadDataset(nil, ds) != nil {
				return false
			}
		}
	}
	return true
}
