// thumbnails.go: the images the lists and feeds show (thumbnails), drawn
// into the tile cache when a dataset or map changes, so that the first
// list that shows them finds them made.
package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"mapcommons"
	"mapcommons/render"
)

// thumbnailQueries are the images of an object drawn when it changes: a
// list's thumbnail (web/src/lib/entries.js thumbSize, at 1x and 2x) and a
// feed's (thumbSide).
var thumbnailQueries = []string{"width=120&height=90", "width=120&height=90&scale=2", "width=256&height=256"}

// warmTimeout bounds the drawing of one thumbnail when QueryTimeout gives
// no bound.
const warmTimeout = 30 * time.Second

// warmer draws the thumbnails of the objects that changed, one at a time,
// in the background: a goroutine runs while there is work and ends when
// there is none.
type warmer struct {
	mu      sync.Mutex
	idle    *sync.Cond
	pending []warmJob
	queued  map[warmJob]bool
	running bool
	closed  bool               // Close was called: nothing more is drawn
	ctx     context.Context    // of the drawing; cancelled by Close
	cancel  context.CancelFunc // cancels ctx
}

// warmJob is a dataset or a map (map true) by id.
type warmJob struct {
	id    int64
	isMap bool
}

// maxWarmPending bounds the objects waiting for their thumbnails; past it
// a change is not warmed (its thumbnail is drawn when first asked).
const maxWarmPending = 256

// maxMapsWarmed bounds the maps whose thumbnails a dataset's change draws
// (the lowest ids); the others are drawn when first asked.
const maxMapsWarmed = 64

// warmAfter notes, after a request that succeeded, the dataset or map it
// changed, from its path (or the Location of what it created), for its
// thumbnails to be drawn. Reads change nothing; nor do failures (an
// object deleted is not found when its turn comes, and skipped).
func (s *Server) warmAfter(w http.ResponseWriter, r *http.Request) {
	if !s.cfg.EagerThumbnails || s.tiles == nil || r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return
	}
	if sw, ok := w.(*statusWriter); ok && sw.status >= 300 {
		return
	}
	p := r.URL.Path
	if loc := w.Header().Get("Location"); loc != "" {
		if u, err := url.Parse(loc); err == nil {
			p = u.Path
		}
	}
	if job, ok := changedObject(p); ok {
		s.warm(job)
	}
}

// changedObject is the dataset or map a path is of: /datasets/{id}…,
// /maps/{id}… or /ogc/collections/{id}/items….
func changedObject(path string) (warmJob, bool) {
	part := func(rest string) string {
		if i := strings.IndexAny(rest, "/."); i >= 0 {
			return rest[:i]
		}
		return rest
	}
	var name string
	var job warmJob
	switch {
	case strings.HasPrefix(path, "/datasets/"):
		name = part(path[len("/datasets/"):])
	case strings.HasPrefix(path, "/maps/"):
		name, job.isMap = part(path[len("/maps/"):]), true
	case strings.HasPrefix(path, "/ogc/collections/"):
		rest := path[len("/ogc/collections/"):]
		i := strings.IndexByte(rest, '/')
		if i < 0 || !strings.HasPrefix(rest[i:], "/items") {
			return job, false
		}
		name = rest[:i]
	default:
		return job, false
	}
	id, ok := mapcommons.ParseReadableName(name)
	job.id = id
	return job, ok
}

// warm queues job's thumbnails, and starts the goroutine drawing them when
// none runs.
func (s *Server) warm(job warmJob) {
	wm := &s.warmer
	wm.mu.Lock()
	defer wm.mu.Unlock()
	if wm.queued == nil {
		wm.queued = map[warmJob]bool{}
		wm.idle = sync.NewCond(&wm.mu)
		wm.ctx, wm.cancel = context.WithCancel(context.Background())
	}
	if wm.closed || wm.queued[job] || len(wm.pending) >= maxWarmPending {
		return
	}
	wm.queued[job] = true
	wm.pending = append(wm.pending, job)
	if !wm.running {
		wm.running = true
		go s.warmLoop()
	}
}

// warmLoop draws the queued objects' thumbnails until none is left.
func (s *Server) warmLoop() {
	wm := &s.warmer
	for {
		wm.mu.Lock()
		if len(wm.pending) == 0 {
			wm.running = false
			wm.idle.Broadcast()
			wm.mu.Unlock()
			return
		}
		job, ctx := wm.pending[0], wm.ctx
		wm.pending = wm.pending[1:]
		delete(wm.queued, job) // a change from now on warms it again
		wm.mu.Unlock()
		if err := s.warmImages(ctx, job); err != nil && mapcommons.ErrorCode(err) != mapcommons.ENOTFOUND && ctx.Err() == nil {
			s.logger.Warn("drawing thumbnails", "map", job.isMap, "id", job.id, "err", err)
		}
	}
}

// Close stops the server's background work, the thumbnails: the one being
// drawn is cancelled, those waiting are dropped, no change queues more,
// and it returns once none is being drawn, so that the store may be
// closed after it (a drawing reads the store's mapped files).
func (s *Server) Close() {
	wm := &s.warmer
	wm.mu.Lock()
	defer wm.mu.Unlock()
	wm.closed, wm.pending = true, nil
	if wm.cancel != nil {
		wm.cancel()
	}
	for wm.running {
		wm.idle.Wait()
	}
}

// waitWarm waits until no thumbnail is waiting or being drawn.
func (s *Server) waitWarm() {
	wm := &s.warmer
	wm.mu.Lock()
	defer wm.mu.Unlock()
	for wm.running {
		wm.idle.Wait()
	}
}

// warmImages draws job's thumbnails that the tile cache lacks, under the
// keys the image routes look for: a dataset's as anyone who may download
// it sees it, a map's as its owner sees it (mapImageKey: shared by
// everyone who sees those layers).
func (s *Server) warmImages(ctx context.Context, job warmJob) error {
	timeout := s.cfg.QueryTimeout
	if timeout <= 0 {
		timeout = warmTimeout
	}
	type image struct {
		key string
		req render.Request
	}
	var images []image
	if job.isMap {
		if s.svc.Maps == nil {
			return nil
		}
		m, err := s.svc.Maps.FindMapByID(ctx, job.id)
		if err != nil {
			return err
		}
		var owner *mapcommons.User
		if m.OwnerID != 0 {
			if owner, err = s.svc.Users.FindUserByID(ctx, m.OwnerID); err != nil {
				return err
			}
		}
		layers, _ := s.mapLayers(ctx, owner, m)
		for _, q := range thumbnailQueries {
			req, err := mapImageRequest(q, m, layers)
			if err != nil {
				return err
			}
			images = append(images, image{mapImageKey(m, req), req})
		}
	} else {
		ds, err := s.svc.Datasets.FindDatasetByID(ctx, job.id)
		if err != nil {
			return err
		}
		for _, q := range thumbnailQueries {
			req, err := imageRequestOf(q, datasetExtent(ds), render.CRSMercator)
			if err != nil {
				return err
			}
			req.Layers = append(req.Layers, datasetLayer(ds))
			images = append(images, image{datasetImageKey(ds, req), req})
		}
		// The maps that draw it change with it: theirs after its own.
		if s.svc.Maps != nil {
			ids, err := s.svc.Maps.MapsShowing(ctx, job.id, maxMapsWarmed)
			if err != nil {
				return err
			}
			defer func() {
				for _, id := range ids {
					s.warm(warmJob{id: id, isMap: true})
				}
			}()
		}
	}
	for _, im := range images {
		if _, ok := s.tiles.get(im.key); ok {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		body, err := s.drawPNG(ctx, im.req)
		cancel()
		if err != nil {
			return err
		}
		s.tiles.put(im.key, pngType, body)
	}
	return nil
}
