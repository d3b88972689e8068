package api_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"mapcommons/api"
)

// csvRows is a CSV of n points.
func csvRows(n int) string {
	var b strings.Builder
	b.WriteString("name,lat,lon\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "p%d,%d,%d\n", i, i%80, i%170)
	}
	return b.String()
}

// nothingLeft asserts that the store holds the datasets it held before
// (n) and that no upload, extracted entry, spool or segment is left over.
func nothingLeft(t *testing.T, ts *testServer, segments int) {
	t.Helper()
	if left, _ := os.ReadDir(ts.tmp); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if n := countSegments(t, ts); n != segments {
		t.Fatalf("%d segment files, want %d", n, segments)
	}
}

func countSegments(t *testing.T, ts *testServer) int {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(filepath.Dir(ts.tmp), "features"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return len(ents)
}

// TestMaxFeatures: a dataset may hold at most Config.MaxFeatures features,
// whether they come in an upload, a zipped upload, appended features or a
// fetched URL: past it the answer is 413 naming max-features, and nothing
// is stored.
func TestMaxFeatures(t *testing.T) {
	t.Parallel()
	ts := newServer(t, allowPrivate, func(c *api.Config) { c.MaxFeatures = 10 })
	rm := newRemote(t)
	rm.set("/eleven.csv", remotePage{ctype: "text/csv", body: csvRows(11)})
	rm.set("/ten.csv", remotePage{ctype: "text/csv", body: csvRows(10)})
	t.Run("OKAtTheLimit", func(t *testing.T) {
		must(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: []byte(csvRows(10))}), http.StatusCreated)
	})
	segs := countSegments(t, ts)
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	fw, _ := zw.Create("points.csv")
	fw.Write([]byte(csvRows(11)))
	zw.Close()
	zbody, zct := multipartBodyBytes(t, "dataset[zip]", "points.zip", zipped.Bytes())
	for _, c := range []struct {
		name string
		r    req
	}{
		{"ErrUpload", req{method: "POST", path: "/datasets.json", user: "alice", ctype: "text/csv", body: []byte(csvRows(11))}},
		{"ErrZip", req{method: "POST", path: "/datasets.json", user: "alice", ctype: zct, body: zbody}},
		{"ErrURL", req{method: "POST", path: "/datasets.json?url=" + url.QueryEscape(rm.URL+"/eleven.csv"), user: "alice", ctype: "application/xml"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			errorOf(t, ts.do(c.r), http.StatusRequestEntityTooLarge, "too_large", "max-features")
			nothingLeft(t, ts, segs)
			if _, n := countDatasets(t, ts); n != 1 {
				t.Fatalf("%d datasets, want the first only", n)
			}
		})
	}
	t.Run("ErrAppend", func(t *testing.T) {
		path := ts.createCSV("", csvRows(8))
		segs := countSegments(t, ts)
		body := `[{"name":"a","geometry":{"type":"Point","coordinates":[1,2]}},{"name":"b","geometry":{"type":"Point","coordinates":[1,2]}},{"name":"c","geometry":{"type":"Point","coordinates":[1,2]}}]`
		errorOf(t, ts.do(req{method: "POST", path: path + "/features.json", user: "alice", ctype: "application/json", body: []byte(body)}),
			http.StatusRequestEntityTooLarge, "too_large", "max-features")
		nothingLeft(t, ts, segs)
		if doc := datasetDoc(t, ts, path, "alice"); doc["feature_count"] != 8.0 {
			t.Fatalf("feature_count %v after a refused append", doc["feature_count"])
		}
		// Two more fit.
		body = `[{"name":"a","geometry":{"type":"Point","coordinates":[1,2]}},{"name":"b","geometry":{"type":"Point","coordinates":[1,2]}}]`
		must(t, ts.do(req{method: "POST", path: path + "/features.json", user: "alice", ctype: "application/json", body: []byte(body)}), http.StatusCreated)
	})
	t.Run("ConcurrentAppends", func(t *testing.T) {
		// Appends at once all read the dataset before any is stored: the
		// limit counts what the store holds when each append starts.
		path := ts.createCSV("", csvRows(4))
		body := []byte(`[{"name":"a","geometry":{"type":"Point","coordinates":[1,2]}},{"name":"b","geometry":{"type":"Point","coordinates":[1,2]}}]`)
		var wg sync.WaitGroup
		codes := make([]int, 8)
		for i := range codes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i] = ts.do(req{method: "POST", path: path + "/features.json", user: "alice", ctype: "application/json", body: body}).Code
			}()
		}
		wg.Wait()
		ok := 0
		for _, c := range codes {
			if c == http.StatusCreated {
				ok++
			} else if c != http.StatusRequestEntityTooLarge {
				t.Fatalf("answers %v", codes)
			}
		}
		if doc := datasetDoc(t, ts, path, "alice"); doc["feature_count"] != 10.0 || ok != 3 {
			t.Fatalf("feature_count %v after %d of 8 appends of 2 to 4 features: %v", doc["feature_count"], ok, codes)
		}
	})
	t.Run("ErrRefetch", func(t *testing.T) {
		w := ts.do(req{method: "POST", path: "/datasets.json?url=" + url.QueryEscape(rm.URL+"/ten.csv"), user: "alice", ctype: "application/xml"})
		must(t, w, http.StatusCreated)
		path := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
		rm.set("/ten.csv", remotePage{ctype: "text/csv", body: csvRows(11)})
		segs := countSegments(t, ts)
		errorOf(t, ts.do(req{method: "POST", path: path + "/fetch.json", user: "alice"}), http.StatusRequestEntityTooLarge, "too_large", "max-features")
		nothingLeft(t, ts, segs)
		if doc := datasetDoc(t, ts, path, "alice"); doc["feature_count"] != 10.0 {
			t.Fatalf("feature_count %v after a refused refetch", doc["feature_count"])
		}
	})
}

// multipartBodyBytes is a multipart body of one file part.
func multipartBodyBytes(t *testing.T, field, filename string, data []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile(field, filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// TestZipExpansionLimit: a zipped upload may expand to no more than the
// upload limit (it used to be eight times as much): a small zip of a CSV
// past it is refused with 413 and nothing is stored or left over.
func TestZipExpansionLimit(t *testing.T) {
	t.Parallel()
	ts := newServer(t, func(c *api.Config) { c.MaxUpload = 64 << 10 })
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	fw, _ := zw.Create("points.csv")
	fw.Write([]byte("name,lat,lon\n" + strings.Repeat("a,1,1\n", 30000))) // 180 KB, under 8 × 64 KiB
	zw.Close()
	if zipped.Len() > 8<<10 {
		t.Fatalf("the zip is %d bytes", zipped.Len())
	}
	body, ct := multipartBodyBytes(t, "dataset[zip]", "bomb.zip", zipped.Bytes())
	errorOf(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body}),
		http.StatusRequestEntityTooLarge, "too_large", "expands to more than")
	nothingLeft(t, ts, 0)
	if _, n := countDatasets(t, ts); n != 0 {
		t.Fatalf("%d datasets", n)
	}
}

// TestGzipFeedLimit: a URL body sent with Content-Encoding: gzip is bounded
// by the upload limit after decompression: a small gzip of a CSV past it is
// refused with 413 and nothing is stored or left over.
func TestGzipFeedLimit(t *testing.T) {
	t.Parallel()
	ts := newServer(t, allowPrivate, func(c *api.Config) { c.MaxUpload = 64 << 10 })
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("name,lat,lon\n" + strings.Repeat("a,1,1\n", 30000)))
	zw.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	}))
	defer srv.Close()
	errorOf(t, ts.do(req{method: "POST", path: "/datasets.json?url=" + url.QueryEscape(srv.URL+"/points.csv"), user: "alice", ctype: "application/xml"}),
		http.StatusRequestEntityTooLarge, "too_large", "limit")
	nothingLeft(t, ts, 0)
	if _, n := countDatasets(t, ts); n != 0 {
		t.Fatalf("%d datasets", n)
	}
}
