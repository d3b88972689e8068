package ingest

// Datasets registered from a URL: the URL fetched and read like an
// upload, refetched on request or periodically (Feeds.RefreshDue), a feed
// with a key brought to its rows by one edit (feedsync.go).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"mapcommons"
	"mapcommons/fetch"
	"mapcommons/format"
	"mapcommons/format/archive"
)

// Feeds fetches and refetches the datasets registered from a URL. One per
// server: it holds the lock of each feed's refetch in this process.
type Feeds struct {
	Fetcher *fetch.Client
	Opener  Opener
	// The store's services the refetches use.
	Datasets mapcommons.DatasetService
	Features mapcommons.FeatureService
	Claims   mapcommons.FeedClaimService
	// MaxFeatures bounds a feed's features (< 0: no bound).
	MaxFeatures int64
	// SyncLimits bound a keyed refetch (zero: DefaultSyncLimits).
	SyncLimits SyncLimits
	// FetchTimeout is the longest fetch, of which a refresh's claim lasts
	// twice (at least 10 minutes).
	FetchTimeout time.Duration
	Logger       *slog.Logger
	// Refreshed, when set, is told of each feed RefreshDue refreshed.
	Refreshed func(datasetID int64)

	// locks holds a chan struct{} (of one) per dataset id: one refetch of
	// a feed at a time in this process (lock).
	locks sync.Map
}

// URLTypes maps the type parameter of a URL registration to an upload
// kind; wms and tile register a service without features.
var URLTypes = map[string]string{
	"csv": format.KindCSV, "kml": format.KindKML, "kmz": format.KindKMZ, "atom": format.KindAtom,
	"rss": format.KindAtom, "georss": format.KindAtom, "geojson": format.KindGeoJSON, "json": format.KindGeoJSON,
	"zip": format.KindZip, "shp": format.KindZip, "shapefile": format.KindZip,
	"wms": "wms", "tile": "tile", "tiles": "tile",
}

// EmptySource is a source without attributes or features.
type EmptySource struct{}

func (EmptySource) Attributes() []mapcommons.Attribute { return nil }
func (EmptySource) Next() (*mapcommons.Feature, error) { return nil, io.EOF }

// Fetch fetches link and opens it as an upload of kind (guessed from
// the content when ""): the caller closes it, which removes the file.
func (f *Feeds) Fetch(ctx context.Context, link, kind string) (*Upload, error) {
	res, err := f.Fetcher.Get(ctx, link, f.Opener.TempDir)
	if err != nil {
		return nil, err
	}
	if kind == "" {
		if kind, err = GuessKind(res); err != nil {
			os.Remove(res.Path)
			return nil, err
		}
	}
	up, err := f.Opener.OpenFetched(ctx, kind, res.Path, path.Base(urlPath(res.URL)))
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

// GuessKind decides what a fetched body is: from its Content-Type when
// that names a format, else from the URL's extension, else from its first
// bytes.
func GuessKind(res *fetch.Result) (string, error) {
	if k := format.BodyKind(res.ContentType); k != "" {
		return k, nil
	}
	if k := format.URLKind(strings.TrimPrefix(path.Ext(urlPath(res.URL)), ".")); k != "" {
		return k, nil
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

// Refetch fetches a feed again and replaces its features (only those that
// changed, for a feed with a key: feedsync.go), or records why it could
// not.
func (f *Feeds) Refetch(ctx context.Context, ds *mapcommons.Dataset) (*mapcommons.Dataset, error) {
	unlock, err := f.lock(ctx, ds.ID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	kind := ds.URLType
	if _, known := URLTypes[kind]; !known {
		kind = ""
	}
	up, err := f.Fetch(ctx, ds.URL, kind)
	if err == nil {
		defer func() { up.Close() }()
		var fresh *mapcommons.Dataset
		if ds.FeedKey != "" {
			// Only what changed, by key (feedsync.go); or else a replace,
			// of the file read again from its start when some was read.
			var read bool
			fresh, read, err = f.syncer().Sync(ctx, ds, LimitFeatures(up.Source, 0, f.MaxFeatures))
			if fb, ok := IsFallback(err); ok {
				f.logger().LogAttrs(ctx, slog.LevelInfo, "a feed refreshed by key is replaced whole", slog.Int64("dataset", ds.ID),
					slog.String("why", fb.Reason))
				err = nil
				if read {
					var again *Upload
					if again, err = f.Opener.Reopen(up); err == nil {
						up = again
					}
				}
			}
		}
		if err == nil && fresh == nil {
			fresh, err = f.Datasets.ReplaceFeatures(ctx, ds.ID, LimitFeatures(up.Source, 0, f.MaxFeatures))
		}
		if err == nil {
			return fresh, nil
		}
	}
	if code := mapcommons.ErrorCode(err); code == mapcommons.EINTERNAL || code == mapcommons.ENOTFOUND || errors.Is(err, context.Canceled) {
		return nil, err
	}
	if rerr := f.Datasets.RecordFetchError(context.WithoutCancel(ctx), ds.ID, mapcommons.ErrorMessage(err)); rerr != nil {
		f.logger().Error("recording a fetch error", "dataset", ds.ID, "err", rerr)
	}
	return nil, err
}

// lock waits until no other refetch of dataset id runs in this
// process, and returns the function that lets the next one go: two keyed
// refetches at once would each add the same new rows. (Servers sharing a
// store refresh a feed one at a time by claims, FeedClaimService; two
// refetches asked of two servers at once may still both add a new row,
// which the next refetch notices, the key being repeated, and mends by
// replacing.)
func (f *Feeds) lock(ctx context.Context, id int64) (func(), error) {
	v, _ := f.locks.LoadOrStore(id, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// syncer brings keyed feeds to their fetched rows.
func (f *Feeds) syncer() Syncer {
	lim := f.SyncLimits
	if lim == (SyncLimits{}) {
		lim = DefaultSyncLimits
	}
	return Syncer{Features: f.Features, Datasets: f.Datasets, Limits: lim, MaxFeatures: max(f.MaxFeatures, 0), Logger: f.logger()}
}

// logger is the Logger, or one that discards.
func (f *Feeds) logger() *slog.Logger {
	if f.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return f.Logger
}

// RefreshDue refetches, one after the other, the feeds due for a
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
func (f *Feeds) RefreshDue(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		return
	}
	lease := 2 * f.FetchTimeout
	if lease < 10*time.Minute {
		lease = 10 * time.Minute
	}
	var start time.Time // of this pass, by the store's clock
	for ctx.Err() == nil {
		c, err := f.Claims.ClaimDueFeed(ctx, interval/2, lease)
		if err != nil || c.ID == 0 {
			if err != nil && ctx.Err() == nil {
				f.logger().Error("claiming a feed to refresh", "err", err)
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
		if err := f.refreshFeed(ctx, c.ID); err != nil {
			f.logger().LogAttrs(ctx, slog.LevelWarn, "refreshing a feed failed", slog.Int64("dataset", c.ID), slog.String("err", err.Error()))
			if ctx.Err() != nil {
				due = c.At // stopping: another server may take it at once
			}
		} else {
			f.logger().LogAttrs(ctx, slog.LevelInfo, "refreshed a feed", slog.Int64("dataset", c.ID))
			if f.Refreshed != nil {
				f.Refreshed(c.ID)
			}
		}
		if err := f.Claims.ReleaseFeed(context.WithoutCancel(ctx), c, due); err != nil {
			f.logger().Error("releasing a refreshed feed", "dataset", c.ID, "err", err)
			return
		}
	}
}

// refreshFeed refetches the feed of dataset id for RefreshDue; a feed
// deleted since its claim is no error.
func (f *Feeds) refreshFeed(ctx context.Context, id int64) error {
	ds, err := f.Datasets.FindDatasetByID(ctx, id)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.Refetch(ctx, ds)
	return err
}
