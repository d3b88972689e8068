package api

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"net/http"
	"strconv"
	"sync"
)

// responseCache keeps recent feature-query answers, so that the same query
// on the same version of a dataset (the viewport every map client opens
// with, a popular grouping) is answered without running it again. Keys
// carry the dataset's version, which grows with every change of it, so an
// entry is never stale; permissions are checked before the cache is asked.
// Least recently used entries go first when the total passes its size.
type responseCache struct {
	mu      sync.Mutex
	max     int64
	maxBody int // the largest body kept
	size    int64
	order   *list.List // most recent first
	entries map[string]*list.Element
}

type cachedResponse struct {
	key         string
	contentType string
	body        []byte
	// gz is body gzip-encoded (nil when body is too small to gain): a
	// client that takes gzip gets it with its length, without compressing
	// the answer again on every hit.
	gz []byte
}

// size is what the entry counts against the cache's total.
func (c *cachedResponse) size() int64 { return int64(len(c.body) + len(c.gz) + len(c.key)) }

// maxCachedBody is the largest answer kept.
const maxCachedBody = 256 << 10

func newResponseCache(max int64) *responseCache {
	return &responseCache{max: max, maxBody: maxCachedBody, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *responseCache) get(key string) (*cachedResponse, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedResponse), true
}

// write answers with a cached response: its gzip form, with its length,
// when the client takes gzip (the encoder leaves an answer already encoded
// alone), else the plain body.
func (c *cachedResponse) write(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", c.contentType)
	body := c.body
	if c.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		body = c.gz
	} else if c.gz == nil {
		// No gzip form: gzip did not make it smaller (put), and the
		// encoder would only compress it again, to more bytes, on
		// every hit.
		sendPlain(w)
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, err := w.Write(body)
	return err
}

// cacheGzipWriters compress the answers the caches keep: once, to be
// sent many times. They are the standard library's, at level 1, not
// klauspost/compress's (encoding.go): on vector tiles the latter's
// choices are uneven (a zoom 1 tile of Natural Earth's countries, 5,775
// bytes, comes out 4,811 bytes at its level 1 but 5,800 at its level 5;
// another of 9,431 bytes, 9,456 at level 1), where the standard
// library's shrink every tile the tests make.
var cacheGzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return zw
}}

// put keeps a copy of body as the answer for key.
func (c *responseCache) put(key, contentType string, body []byte) {
	if c == nil || len(body) > c.maxBody || int64(len(body)) > c.max {
		return
	}
	body = bytes.Clone(body) // the caller's buffer serves again
	e := &cachedResponse{key: key, contentType: contentType, body: body}
	if len(body) >= minCompress && compressible(contentType) {
		// Compressed once, outside the lock, and kept when it is smaller.
		var buf bytes.Buffer
		zw := cacheGzipWriters.Get().(*gzip.Writer)
		zw.Reset(&buf)
		if _, err := zw.Write(body); err == nil && zw.Close() == nil && buf.Len() < len(body) {
			e.gz = buf.Bytes()
		}
		zw.Reset(nil)
		cacheGzipWriters.Put(zw)
	}
	if e.size() > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return
	}
	c.entries[key] = c.order.PushFront(e)
	c.size += e.size()
	for c.size > c.max {
		last := c.order.Back()
		old := last.Value.(*cachedResponse)
		c.order.Remove(last)
		delete(c.entries, old.key)
		c.size -= old.size()
	}
}
