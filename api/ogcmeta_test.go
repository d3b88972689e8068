package api_test

// Tests of the OGC documents about the service and its collections
// against abstract tests of the classes /ogc/conformance declares.

import (
	"strings"
	"testing"
)

// TestOGCLandingServiceDoc: /req/oas30/definition-1 wants the landing page
// to link the API definition (service-desc) and its HTML view
// (service-doc), and the service-doc link to answer HTML.
func TestOGCLandingServiceDoc(t *testing.T) {
	t.Parallel()
	ts := newServer(t)
	landing := decode[struct{ Links []ogcLink }](t, must(t, ts.get("/ogc", ""), 200))
	href := link(landing.Links, "service-doc", "text/html")
	if href != base+"/api.html" {
		t.Fatalf("service-doc link %q, want %s/api.html; links %+v", href, base, landing.Links)
	}
	w := ts.get(pathOf(t, href), "")
	if body := string(must(t, w, 200)); !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") || !strings.Contains(body, "<html") {
		t.Errorf("service-doc answered %s: %.200s", w.Header().Get("Content-Type"), body)
	}
}
