package api

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// Compression of answers. Text answers (JSON, GeoJSON, CSV, KML, Atom and
// other XML, HTML, JavaScript, MVT) go out gzip-encoded when the request's
// Accept-Encoding takes gzip; binary and already compressed ones (KMZ, zip,
// GeoPackage, SpatiaLite) and small answers of a known length do not.
// Streaming answers stay streaming: the encoder writes through as it is
// fed and keeps only its window.

// minCompress is the smallest answer of a known length worth compressing.
const minCompress = 1 << 10

// gzipLevel trades ratio for speed: the large downloads are CPU-bound at
// higher levels (BenchmarkGeoJSONDownload: on 1M points level 1 takes
// 0.7 s for 203 MB to 34 MB, the default level 3.7 s to 28 MB). The
// encoder is klauspost/compress's: at level 1 it gives the standard
// library's sizes (4,472 bytes of a bbox page to 1,773 with either; a
// 149 KB page to 54 KB against 56 KB) in a third of the time (28 µs
// against 90 µs for the page, measured here), which is a fifth of what
// a page of 30 features costs the server in all.
const gzipLevel = gzip.BestSpeed

var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return zw
}}

// acceptsGzip reports whether an Accept-Encoding header value takes gzip
// (RFC 9110 12.5.3): "gzip" or "x-gzip" with a q above 0, or "*" above 0
// when gzip is not named.
func acceptsGzip(header string) bool {
	named, star := -1.0, -1.0
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(p, "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					f = 0
				}
				q = f
			}
		}
		switch coding {
		case "gzip", "x-gzip":
			named = max(named, q)
		case "*":
			star = max(star, q)
		}
	}
	if named >= 0 {
		return named > 0
	}
	return star > 0
}

// compressible reports whether answers of a Content-Type gain from gzip.
func compressible(contentType string) bool {
	// The media type alone, without mime.ParseMediaType's parse of the
	// parameters (two allocations an answer; the types are this server's
	// own). ToLower returns a type already in lower case as it is.
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/javascript", mt == "application/xml",
		mt == "application/vnd.mapbox-vector-tile", mt == "application/x-protobuf":
		return true
	case strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
		// GeoJSON, KML, Atom, OpenSearch descriptions
		return true
	}
	return false
}

// encodeWriter compresses the answer when the client takes gzip and the
// answer is worth it. It decides when the header is written.
type encodeWriter struct {
	http.ResponseWriter
	head    bool // a HEAD request: headers as a GET would have, no body
	gzipOK  bool // the client takes gzip
	decided bool
	// headGzip: a HEAD answer said gzip; what the handler writes of
	// its body is dropped.
	headGzip bool
	// plain: the handler sends this answer as it is (a cached answer
	// that gzip does not make smaller, see sendPlain).
	plain bool
	zw    *gzip.Writer // non-nil when compressing
}

// sendPlain tells the encoder under w, if any, to leave the answer about
// to be written uncompressed. It must come before the header is written.
func sendPlain(w http.ResponseWriter) {
	for w != nil {
		if ew, ok := w.(*encodeWriter); ok {
			ew.plain = true
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

func newEncodeWriter(w http.ResponseWriter, r *http.Request) *encodeWriter {
	return &encodeWriter{ResponseWriter: w, head: r.Method == http.MethodHead, gzipOK: acceptsGzip(r.Header.Get("Accept-Encoding"))}
}

func (w *encodeWriter) decide(code int) {
	if w.decided {
		return
	}
	w.decided = true
	h := w.Header()
	if !compressible(h.Get("Content-Type")) {
		return
	}
	// Whether or not this answer is compressed, another request for it
	// may be: caches must keep the forms apart.
	h.Add("Vary", "Accept-Encoding")
	if !w.gzipOK || w.plain || code < 200 || code == http.StatusNoContent || code == http.StatusNotModified || h.Get("Content-Encoding") != "" {
		return
	}
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n < minCompress {
			return
		}
	}
	h.Del("Content-Length")
	h.Set("Content-Encoding", "gzip")
	if w.head {
		w.headGzip = true
		return
	}
	w.zw = gzipWriters.Get().(*gzip.Writer)
	w.zw.Reset(w.ResponseWriter)
}

func (w *encodeWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.decide(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *encodeWriter) Write(b []byte) (int, error) {
	if !w.decided {
		w.WriteHeader(http.StatusOK)
	}
	if w.zw != nil {
		return w.zw.Write(b)
	}
	if w.headGzip {
		// The plain bytes must not pass for gzip (net/http drops the
		// body of a HEAD answer anyway).
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush sends what the encoder holds, then flushes the connection.
func (w *encodeWriter) Flush() {
	if w.zw != nil {
		_ = w.zw.Flush()
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// finish ends the compressed stream of a complete answer. An answer cut
// by an error after it began is not finished: its stream stays truncated,
// which the client's decoder reports.
func (w *encodeWriter) finish() {
	if w.zw == nil {
		return
	}
	_ = w.zw.Close()
	w.zw.Reset(nil)
	gzipWriters.Put(w.zw)
	w.zw = nil
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *encodeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
