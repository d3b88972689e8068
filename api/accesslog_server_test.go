package api_test

import (
	"bytes"
	"regexp"
	"testing"

	"mapcommons/api"
)

// TestAccessLogWritten checks that a server given Config.AccessLog writes
// each request's line there, one whole line a request.
func TestAccessLogWritten(t *testing.T) {
	var buf bytes.Buffer
	ts := newServer(t, func(c *api.Config) { c.AccessLog = &buf })
	must(t, ts.get("/datasets/999.json", "alice"), 404)
	must(t, ts.get("/a%20b.json", ""), 404)
	line := regexp.MustCompile(`^time=\S+ level=INFO msg=request method=GET path=/datasets/999\.json status=404 bytes=\d+ ms=[0-9.e-]+ user=alice client=192\.0\.2\.1\n` +
		`time=\S+ level=INFO msg=request method=GET path="/a b\.json" status=404 bytes=\d+ ms=[0-9.e-]+ user="" client=192\.0\.2\.1\n$`)
	if !line.Match(buf.Bytes()) {
		t.Fatalf("access log:\n%s", buf.String())
	}
}
