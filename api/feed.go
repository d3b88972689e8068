package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"mapcommons"
	"mapcommons/fetch"
	"mapcommons/format"
	"mapcommons/format/archive"
	"mapcommons/ingest"
	"mapcommons/params"
)

// Datasets registered from a URL (spec "Create from URL", "Update feed";
// wire contract 1.2, 1.6): the server fetches the URL, reads it like an
// upload, and refetches it on request or periodically.

// urlTypes maps the type parameter of a URL registration to an upload
// kind; wms and tile register a service without features.
var urlTypes = map[string]string{
	"csv": format.KindCSV, "kml": format.KindKML, "kmz": format.KindKMZ, "atom": format.KindAtom,
	"rss": format.KindAtom, "georss": format.KindAtom, "geojson": format.KindGeoJSON, "json": format.KindGeoJSON,
	"zip": format.KindZip, "shp": format.KindZip, "shapefile": format.KindZip,
	"wms": "wms", "tile": "tile", "tiles": "tile",
}

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
		if kind = urlTypes[strings.ToLower(strings.TrimSpace(t))]; kind == "" {
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
	var src mapcommons.FeatureSource = emptySource{}
	switch kind {
	case "wms", "tile":
		ds.Type, ds.URLType = kind, kind
		ds.DataType = map[string]string{"wms": mapcommons.DataTypeWMS, "tile": mapcommons.DataTypeTiles}[kind]
	default:
		up, err := s.fetchSource(r.Context(), link, kind)
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
	return s.created(w, r, s.datasetLink(r, ds.ID), s.datasetJSON(r, ds, false))
}

// existing answers a registration of a URL registered already: the
// dataset, when the caller may see it; else only that the URL is taken (a
// URL is registered once, and a private dataset does not show itself).
func (s *Server) existing(w http.ResponseWriter, r *http.Request, ds *mapcommons.Dataset) error {
	if err := s.policy.CanViewDataset(caller(r), ds); err != nil {
		return mapcommons.Errorf(mapcommons.ECONFLICT, "url: %s is registered already, as a dataset not shared with you", ds.URL)
	}
	w.Header().Set("Location", s.datasetLink(r, ds.ID))
	return s.writeJSON(w, r, http.StatusOK, s.datasetJSON(r, ds, false))
}

// emptySource is a source without attributes or features.
type emptySource struct{}

func (emptySource) Attributes() []mapcommons.Attribute { return nil }
func (emptySource) Next() (*mapcommons.Feature, error) { return nil, io.EOF }

// fetchSource fetches url and opens it as an upload of kind (guessed from
// the content when ""): the caller closes it, which removes the file.
func (s *Server) fetchSource(ctx context.Context, link, kind string) (*ingest.Upload, error) {
	res, err := s.fetcher.Get(ctx, link, s.cfg.TempDir)
	if err != nil {
		return nil, err
	}
	if kind == "" {
		if kind, err = guessKind(res); err != nil {
			os.Remove(res.Path)
			return nil, err
		}
	}
	up, err := s.opener().OpenFetched(ctx, kind, res.Path, path.Base(urlPath(res.URL)))
	if err != nil {
		if mapcommons.ErrorCode(err) == mapcommons.EINVALID {
			// Bad data at the remote is the remote's failure.
			return nil, mapcommons.Errorf(mapcommons.EUPSTREAM, "url: the data at %s cannot be read as %s: %s", link, kind, mapcommons.ErrorMessage(err))
		}
		return nil, err
	}
	return up, nil
}

func urlPath(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Path
	}
	return ""
}

// guessKind decides what a fetched body is: from its Content-Type when
// that names a format, else from the URL's extension, else from its first
// bytes.
func guessKind(res *fetch.Result) (string, error) {
	if k := format.BodyKind(res.ContentType); k != "" {
		return k, nil
	}
	switch ext := strings.ToLower(strings.TrimPrefix(path.Ext(urlPath(res.URL)), ".")); ext {
	case "csv", "kml", "kmz", "zip", "geojson":
		return format.PartKind(ext), nil
	case "rss", "atom":
		return format.KindAtom, nil
	}
	return sniffKind(res.Path)
}

// sniffKind looks at the start of a file: a zip (a KMZ when it holds a
// .kml, else a zipped shapefile), XML (KML or a feed by its root element),
// JSON, or else CSV.
func sniffKind(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = bytes.TrimPrefix(head[:n], []byte("\xef\xbb\xbf"))
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) {
		st, err := f.Stat()
		if err != nil {
			return "", err
		}
		a, err := archive.Open(f, st.Size(), archive.Limits{})
		if err != nil {
			return "", err
		}
		for _, e := range a.Files() {
			if !archive.Hidden(e.Name) && archive.Ext(e.Name) == "kml" {
				return format.KindKMZ, nil
			}
		}
		return format.KindZip, nil
	}
	t := bytes.TrimLeft(head, " \t\r\n")
	switch {
	case len(t) > 0 && (t[0] == '{' || t[0] == '['):
		return format.KindGeoJSON, nil
	case len(t) > 0 && t[0] == '<':
		switch rootElement(t) {
		case "kml":
			return format.KindKML, nil
		case "feed", "rss", "rdf":
			return format.KindAtom, nil
		}
		return "", mapcommons.Errorf(mapcommons.EUPSTREAM, "url: the remote sent XML that is neither KML nor an Atom or RSS feed")
	}
	return format.KindCSV, nil
}

// rootElement is the lower-cased local name of the first element of an
// XML prefix, past the declaration, comments and a DOCTYPE.
func rootElement(b []byte) string {
	for {
		i := bytes.IndexByte(b, '<')
		if i < 0 || i+1 >= len(b) {
			return ""
		}
		b = b[i+1:]
		if b[0] == '?' || b[0] == '!' {
			continue
		}
		end := bytes.IndexAny(b, " \t\r\n/>")
		if end < 0 {
			return ""
		}
		name := string(b[:end])
		if j := strings.IndexByte(name, ':'); j >= 0 {
			name = name[j+1:]
		}
		return strings.ToLower(name)
	}
}

// handleDatasetFetch refetches a dataset registered from a URL (spec
// "Update feed": PUT, and GET as the documented example does). A failed
// refetch keeps the old features and records the error on the dataset.
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
	ds, err := s.datasetToEdit(r)
	if err != nil {
		return err
	}
	if err := s.checkBody(r); err != nil {
		return err
	}
	if ds.DataType != mapcommons.DataTypeFeed || ds.URL == "" {
		return mapcommons.Errorf(mapcommons.EINVALID, "dataset %d was not registered from a URL: there is nothing to fetch", ds.ID)
	}
	fresh, err := s.refetch(r.Context(), ds)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, http.StatusOK, s.datasetJSON(r, fresh, false))
}

// refetch fetches a feed again and replaces its features (only those that
// changed, for a feed with a key: ingest/feedsync.go), or records why it could
// not.
func (s *Server) refetch(ctx context.Context, ds *mapcommons.Dataset) (*mapcommons.Dataset, error) {
	unlock, err := s.lockFeed(ctx, ds.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	kind := ds.URLType
	if _, known := urlTypes[kind]; !known {
		kind = ""
	}
	up, err := s.fetchSource(ctx, ds.URL, kind)
	if err == nil {
		defer func() { up.Close() }()
		var fresh *mapcommons.Dataset
		if ds.FeedKey != "" {
			// Only what changed, by key (ingest/feedsync.go); or else a replace,
			// of the file read again from its start when some was read.
			var read bool
			fresh, read, err = s.syncer().Sync(ctx, ds, s.limitFeatures(up.Source, 0))
			if fb, ok := ingest.IsFallback(err); ok {
				s.logger.LogAttrs(ctx, slog.LevelInfo, "a feed refreshed by key is replaced whole", slog.Int64("dataset", ds.ID),
					slog.String("why", fb.Reason))
				err = nil
				if read {
					var again *ingest.Upload
					if again, err = s.opener().Reopen(up); err == nil {
						up = again
					}
				}
			}
		}
		if err == nil && fresh == nil {
			fresh, err = s.svc.Datasets.ReplaceFeatures(ctx, ds.ID, s.limitFeatures(up.Source, 0))
		}
		if err == nil {
			return fresh, nil
		}
	}
	if code := mapcommons.ErrorCode(err); code == mapcommons.EINTERNAL || code == mapcommons.ENOTFOUND || errors.Is(err, context.Canceled) {
		return nil, err
	}
	if rerr := s.svc.Datasets.RecordFetchError(context.WithoutCancel(ctx), ds.ID, mapcommons.ErrorMessage(err)); rerr != nil {
		s.logger.Error("recording a fetch error", "dataset", ds.ID, "err", rerr)
	}
	return nil, err
}

// lockFeed waits until no other refetch of dataset id runs in this
// process, and returns the function that lets the next one go: two keyed
// refetches at once would each add the same new rows. (Servers sharing a
// store refresh a feed one at a time by claims, FeedClaimService; two
// refetches asked of two servers at once may still both add a new row,
// which the next refetch notices, the key being repeated, and mends by
// replacing.)
func (s *Server) lockFeed(ctx context.Context, id int64) (func(), error) {
	v, _ := s.feedLocks.LoadOrStore(id, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// syncer brings keyed feeds to their fetched rows through the server's
// store, within its bounds.
func (s *Server) syncer() ingest.Syncer {
	lim := ingest.DefaultSyncLimits
	if s.syncLimits != nil {
		lim = *s.syncLimits
	}
	return ingest.Syncer{Features: s.svc.Features, Datasets: s.svc.Datasets, Limits: lim, MaxFeatures: s.maxFeatures(), Logger: s.logger}
}

// RefreshFeeds refetches, one after the other, the feeds due for a
// refresh; cmd calls it every interval (--refresh-interval), which must be
// more than 0. Each feed is claimed in the store first, for longer than a
// refresh can take, so that of several servers sharing the store one
// refreshes it; a claim left by a server that died is taken over once its
// lease is over.
//
// When its refresh ends, successfully or not, the feed's claim is released
// and the feed made due again at the next call, by this server or another:
// a tenth of an interval before this pass's start plus the interval, since
// the next call comes an interval after this one's start, with the feeds
// before it in that pass to refresh first. A feed never claimed (just
// registered, or refetched by hand in the meantime) is due half an
// interval after its fetch, at the first call from then. A failed refresh
// leaves the feed's fetch time as it was: it is tried again at the next
// call, not again in this pass (nor before half an interval, when a pass
// takes longer than its interval).
func (s *Server) RefreshFeeds(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	lease := 2 * s.cfg.FetchTimeout
	if lease < 10*time.Minute {
		lease = 10 * time.Minute
	}
	var start time.Time // of this pass, by the store's clock
	for ctx.Err() == nil {
		c, err := s.svc.FeedClaims.ClaimDueFeed(ctx, interval/2, lease)
		if err != nil || c.ID == 0 {
			if err != nil && ctx.Err() == nil {
				s.logger.Error("claiming a feed to refresh", "err", err)
			}
			return
		}
		if start.IsZero() {
			start = c.At
		}
		due := start.Add(interval - interval/10)
		if soonest := c.At.Add(interval / 2); due.Before(soonest) {
			due = soonest
		}
		if err := s.refreshFeed(ctx, c.ID); err != nil {
			s.logger.LogAttrs(ctx, slog.LevelWarn, "refreshing a feed failed", slog.Int64("dataset", c.ID), slog.String("err", err.Error()))
			if ctx.Err() != nil {
				due = c.At // stopping: another server may take it at once
			}
		} else {
			s.logger.LogAttrs(ctx, slog.LevelInfo, "refreshed a feed", slog.Int64("dataset", c.ID))
		}
		if err := s.svc.FeedClaims.ReleaseFeed(context.WithoutCancel(ctx), c, due); err != nil {
			s.logger.Error("releasing a refreshed feed", "dataset", c.ID, "err", err)
			return
		}
	}
}

// refreshFeed refetches the feed of dataset id for RefreshFeeds; a feed
// deleted since its claim is no error.
func (s *Server) refreshFeed(ctx context.Context, id int64) error {
	ds, err := s.svc.Datasets.FindDatasetByID(ctx, id)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.refetch(ctx, ds)
	return err
}
