package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"mapcommons"
)

func code(err error) string { return mapcommons.ErrorCode(err) }

func TestPrivate(t *testing.T) {
	for _, c := range []struct {
		addr    string
		private bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true}, {"10.1.2.3", true}, {"172.16.0.1", true},
		{"172.31.255.255", true}, {"192.168.1.1", true}, {"169.254.169.254", true}, {"fe80::1", true},
		{"fd00:ec2::254", true}, {"100.100.100.200", true}, {"0.0.0.0", true}, {"::", true}, {"224.0.0.1", true},
		{"255.255.255.255", true}, {"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true}, {"64:ff9b::a00:1", true},
		{"2002:a00:1::", true}, {"198.18.0.1", true},
		// IPv4-compatible IPv6 (::/96) embeds an IPv4 address: ::127.0.0.1, ::10.0.0.1, ::169.254.169.254.
		{"::7f00:1", true}, {"::a00:1", true}, {"::a9fe:a9fe", true}, {"::808:808", true},
		// Other IANA special-purpose ranges.
		{"100::1", true}, {"5f00::1", true}, {"3fff::1", true}, {"2001:2::1", true}, {"2001:10::1", true},
		{"192.88.99.1", true}, {"fec0::1", true}, {"ff02::1", true}, {"4000::1", true},
		{"8.8.8.8", false}, {"93.184.216.34", false}, {"172.32.0.1", false}, {"2606:4700::1111", false}, {"::ffff:8.8.8.8", false},
	} {
		if got := Private(netip.MustParseAddr(c.addr)); got != c.private {
			t.Errorf("Private(%s) = %v", c.addr, got)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, raw := range []string{"", "ftp://example.com/a", "file:///etc/passwd", "gopher://x", "http://", "/relative/path", "javascript:alert(1)", "http://" + strings.Repeat("a", 5000)} {
		if _, err := Check(raw); code(err) != mapcommons.EINVALID {
			t.Errorf("Check(%q) = %v, want EINVALID", raw, err)
		}
	}
	if u, err := Check(" https://example.com/a.csv?x=1 "); err != nil || u.Host != "example.com" {
		t.Errorf("Check: %v %v", u, err)
	}
}

func TestGet(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/data.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Write([]byte("lat,lon\n1,2\n"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 5000)))
	})
	mux.HandleFunc("/bigdeclared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte("x"))
	})
	mux.HandleFunc("/missing", http.NotFound)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	hops := 0
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		hops++
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/data.csv", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/toftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/x", http.StatusFound)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	ctx := context.Background()
	dir := t.TempDir()
	open := New(Options{AllowPrivate: true, MaxBytes: 1000, Timeout: 500 * time.Millisecond})

	t.Run("OK", func(t *testing.T) {
		res, err := open.Get(ctx, ts.URL+"/hop", dir)
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(res.Path)
		b, _ := os.ReadFile(res.Path)
		if string(b) != "lat,lon\n1,2\n" || res.Size != int64(len(b)) || res.ContentType != "text/csv" || !strings.HasSuffix(res.URL, "/data.csv") {
			t.Errorf("%+v %q", res, b)
		}
	})
	t.Run("ErrRefusesLoopback", func(t *testing.T) {
		strict := New(Options{})
		_, err := strict.Get(ctx, ts.URL+"/data.csv", dir)
		if code(err) != mapcommons.EINVALID || !strings.Contains(err.Error(), "private") {
			t.Errorf("err = %v", err)
		}
	})
	for _, c := range []struct {
		name, path, code, msg string
	}{
		{"ErrTooLarge", "/big", mapcommons.ETOOLARGE, "larger than"},
		{"ErrTooLargeDeclared", "/bigdeclared", mapcommons.ETOOLARGE, "100000 bytes"},
		{"ErrStatus", "/missing", mapcommons.EUPSTREAM, "404"},
		{"ErrSlow", "/slow", mapcommons.EUPSTREAM, "did not answer"},
		{"ErrRedirectLoop", "/loop", mapcommons.EUPSTREAM, "redirects"},
		{"ErrRedirectScheme", "/toftp", mapcommons.EUPSTREAM, "redirected"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := open.Get(ctx, ts.URL+c.path, dir)
			if code(err) != c.code || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err = %v, want %s with %q", err, c.code, c.msg)
			}
		})
	}
	if hops != 6 {
		t.Errorf("%d hops of the redirect loop, want 6 (the first and 5 redirects)", hops)
	}
	t.Run("ErrRefused", func(t *testing.T) {
		l := httptest.NewServer(http.NotFoundHandler())
		addr := l.URL
		l.Close()
		_, err := open.Get(ctx, addr, dir)
		if code(err) != mapcommons.EUPSTREAM {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("ErrNoHost", func(t *testing.T) {
		_, err := open.Get(ctx, "http://no-such-host.invalid/x", dir)
		if code(err) != mapcommons.EUPSTREAM {
			t.Errorf("err = %v", err)
		}
	})
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left %d files behind", len(entries))
	}
}

// TestNormalize: every spelling of one address has one form, and
// different addresses keep different forms.
func TestNormalize(t *testing.T) {
	const want = "http://example.com/data/feed.csv"
	for _, raw := range []string{
		want,
		"HTTP://Example.COM/data/feed.csv",
		"http://example.com:80/data/feed.csv",
		"http://example.com:/data/feed.csv",
		"http://example.com/data/feed.csv?",
		"http://example.com/data/feed.csv#x",
		"http://example.com/data/feed.csv?#",
		"http://example.com/data//feed.csv",
		"http://example.com//data/feed.csv",
		"http://example.com/data/./feed.csv",
		"http://example.com/./data/feed.csv",
		"http://example.com/other/../data/feed.csv",
		"http://example.com/../data/feed.csv",
		"http://example.com/data/%66eed.csv",
		"http://example.com/%64%61%74%61/feed%2ecsv",
		"http://example.com/data/%2E/feed.csv",
	} {
		u, err := Check(raw)
		if err != nil {
			t.Fatalf("Check(%q): %v", raw, err)
		}
		if got := u.String(); got != want {
			t.Errorf("Check(%q) = %q, want %q", raw, got, want)
		}
	}
	for raw, want := range map[string]string{
		"https://Example.com:443":               "https://example.com/",
		"https://example.com:8443/a":            "https://example.com:8443/a",
		"http://example.com:443/a":              "http://example.com:443/a",
		"http://[::1]:80/a":                     "http://[::1]/a",
		"http://example.com/a/":                 "http://example.com/a/", // a trailing slash names another resource
		"http://example.com/a/b/..":             "http://example.com/a/",
		"http://example.com/a%2fb":              "http://example.com/a%2Fb", // a reserved character stays escaped
		"http://example.com/a%20b":              "http://example.com/a%20b",
		"http://example.com/a?y=2&x=1":          "http://example.com/a?y=2&x=1", // the order of parameters is kept
		"http://example.com/a?q=%7e%2f":         "http://example.com/a?q=~%2F",
		"http://example.com/A.csv":              "http://example.com/A.csv", // the path keeps its case
		"http://user:pw@Example.com:80/x.csv#f": "http://user:pw@example.com/x.csv",
	} {
		u, err := Check(raw)
		if err != nil {
			t.Fatalf("Check(%q): %v", raw, err)
		}
		if got := u.String(); got != want {
			t.Errorf("Check(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestGetGzipBounded: a body sent with Content-Encoding: gzip is bounded by
// MaxBytes after decoding, and one under it is saved decoded.
func TestGetGzipBounded(t *testing.T) {
	gz := func(n int) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(bytes.Repeat([]byte("1,1\n"), n/4))
		zw.Close()
		return b.Bytes()
	}
	bomb, small := gz(1<<20), gz(2000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := small
		if r.URL.Path == "/bomb.csv" {
			body = bomb
		}
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	c := New(Options{AllowPrivate: true, MaxBytes: 4096})
	if _, err := c.Get(context.Background(), srv.URL+"/bomb.csv", dir); code(err) != mapcommons.ETOOLARGE {
		t.Fatalf("a gzip body expanding to 1 MiB under a limit of 4 KiB: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("left %d files", len(left))
	}
	res, err := c.Get(context.Background(), srv.URL+"/small.csv", dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(res.Path); res.Size != 2000 || string(b[:8]) != "1,1\n1,1\n" {
		t.Fatalf("saved %d bytes: %q", res.Size, b[:min(len(b), 8)])
	}
}
