package api_test

import (
	"testing"

	"mapcommons/api"
)

// TestWebFacesAccessible audits, with TestWebAppAccessible's checks, the
// pages around the application at a desktop's size and a phone's: the
// embed of a public map (as another site frames it, opened on its own
// here) and the API's page (/api.html, Swagger UI).
func TestWebFacesAccessible(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	path := createChoroplethMap(t, ts, "alice", uploadNC(t, ts, ""))
	b := browserOn(t, ts)
	embed := "/app" + path + "/embed"
	auditPages(b, "visitor", []string{embed, "/api.html"}, map[string]string{
		embed:       `window.mcMap && window.mcMap.loaded()`,
		"/api.html": `document.querySelector('.swagger-ui .opblock') !== null`,
	})
}
