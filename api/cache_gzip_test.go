package api

import (
	"math/rand/v2"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestCachedIncompressibleStaysPlain: an answer the cache keeps without a
// gzip form (it did not get smaller) goes out plain, with its length, to
// a client that takes gzip: the encoder must not compress it again on
// every hit (at a lower level, to more bytes than the plain answer).
func TestCachedIncompressibleStaysPlain(t *testing.T) {
	c := newResponseCache(1 << 20)
	body := make([]byte, 8<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	c.put("k", mvtType, body)
	e, ok := c.get("k")
	if !ok {
		t.Fatal("not cached")
	}
	if e.gz != nil {
		t.Fatalf("random bytes compressed to %d of %d", len(e.gz), len(body))
	}
	r := httptest.NewRequest("GET", "/tile", nil)
	r.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	ew := newEncodeWriter(rec, r)
	if err := e.write(ew, r); err != nil {
		t.Fatal(err)
	}
	ew.finish()
	if ce := rec.Header().Get("Content-Encoding"); ce != "" || rec.Body.Len() != len(body) ||
		rec.Header().Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("cached incompressible answer: Content-Encoding %q, %d bytes (plain %d), Content-Length %q",
			ce, rec.Body.Len(), len(body), rec.Header().Get("Content-Length"))
	}
}
