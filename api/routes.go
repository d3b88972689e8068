package api

import (
	"net/http"

	"mapcommons"
)

// routes registers every route of the API: this is the one place to read
// what the server answers. Paths are matched after normalizePath, so
// "/overlays/7.json" arrives here as "/datasets/7" with format json.
// Routes that query features, download, classify or search run bounded
// (Config.QueryTimeout). Each pattern is recorded (s.patterns): the
// OpenAPI document served at /api (api/openapi/) must describe every
// route with a method, and a test holds them to each other.
func (s *Server) routes() {
	m := &routeTable{mux: s.mux}
	defer func() { s.patterns = m.patterns }()
	m.Handle("GET /healthz", s.handle(s.handleHealth))
	m.Handle("GET /api", s.handle(s.handleOpenAPI))

	m.Handle("POST /users", s.handle(s.handleUserCreate))
	m.Handle("GET /users/{user}", s.handle(s.handleUserGet))
	m.Handle("PUT /users/{user}", s.handle(s.handleUserUpdate))
	m.Handle("DELETE /users/{user}", s.handle(s.handleUserDelete))
	m.Handle("POST /users/{user}/second_factor", s.handle(s.handleSecondFactorStart))
	m.Handle("PUT /users/{user}/second_factor", s.handle(s.handleSecondFactorConfirm))
	m.Handle("DELETE /users/{user}/second_factor", s.handle(s.handleSecondFactorDelete))
	m.Handle("POST /users/{user}/sign_in_link", s.handle(s.handleSignInLinkCreate))

	m.Handle("GET /setup", s.handle(s.handleSetupGet))
	m.Handle("POST /setup", s.handle(s.handleSetupCreate))

	m.Handle("POST /session", s.handle(s.handleSessionCreate))
	m.Handle("GET /session", s.handle(s.handleSessionGet))
	m.Handle("DELETE /session", s.handle(s.handleSessionDelete))

	m.Handle("GET /groups", s.handle(s.handleGroupList))
	m.Handle("POST /groups", s.handle(s.handleGroupCreate))
	m.Handle("GET /groups/{id}", s.handle(s.handleGroupGet))
	m.Handle("DELETE /groups/{id}", s.handle(s.handleGroupDelete))
	m.Handle("GET /groups/{id}/users", s.handle(s.handleGroupUsers))
	m.Handle("POST /groups/{id}/users", s.handle(s.handleGroupUserAdd))
	m.Handle("DELETE /groups/{id}/users/{login}", s.handle(s.handleGroupUserRemove))

	m.Handle("GET /datasets", s.handle(s.handleDatasetList))
	m.Handle("POST /datasets", s.handle(s.handleDatasetCreate))
	m.Handle("GET /datasets/{id}", s.handle(s.bounded(s.handleDatasetGet)))
	m.Handle("PUT /datasets/{id}", s.handle(s.handleDatasetUpdate))
	m.Handle("DELETE /datasets/{id}", s.handle(s.handleDatasetDelete))

	m.Handle("GET /datasets/{id}/fetch", s.handle(s.handleDatasetFetch))
	m.Handle("PUT /datasets/{id}/fetch", s.handle(s.handleDatasetFetch))
	m.Handle("POST /datasets/{id}/fetch", s.handle(s.handleDatasetFetch))
	m.Handle("GET /datasets/{id}/features", s.handle(s.bounded(s.handleFeatureList)))
	m.Handle("POST /datasets/{id}/features", s.handle(s.handleFeatureCreate))
	m.Handle("DELETE /datasets/{id}/features", s.handle(s.handleFeatureDelete))
	// The spec's delete example: an ignored segment after features/, and /maps.
	m.Handle("DELETE /datasets/{id}/features/{ignored}", s.handle(s.handleFeatureDelete))
	m.Handle("DELETE /maps/{id}/features/{ignored}", s.handle(s.handleFeatureDelete))
	// Editing in place: one feature by its stable id, replaced (PUT) or
	// merge-patched (PATCH), or a batch of adds, updates and deletes all
	// or nothing (ArcGIS applyEdits).
	m.Handle("PUT /datasets/{id}/features/{fid}", s.handle(s.handleFeatureUpdate))
	m.Handle("PATCH /datasets/{id}/features/{fid}", s.handle(s.handleFeaturePatch))
	m.Handle("POST /datasets/{id}/edits", s.handle(s.handleEdits))

	m.Handle("POST /maps", s.handle(s.bounded(s.handleMapCreate)))
	m.Handle("GET /maps/{id}", s.handle(s.bounded(s.handleMapGet)))
	m.Handle("GET /maps/{id}/tiles/{z}/{x}/{y}", s.handle(s.bounded(s.handleMapTileXYZ)))
	m.Handle("GET /maps/{id}/styles", s.handle(s.bounded(s.handleMapStyles)))
	m.Handle("GET /maps/{id}/legend", s.handle(s.bounded(s.handleMapLegend)))
	m.Handle("GET /maps/{id}/styles/{style}", s.handle(s.bounded(s.handleMapStyle)))
	m.Handle("PUT /maps/{id}", s.handle(s.bounded(s.handleMapUpdate)))
	m.Handle("DELETE /maps/{id}", s.handle(s.handleMapDelete))
	m.Handle("POST /maps/{id}/layers", s.handle(s.handleLayerCreate))
	m.Handle("POST /maps/{id}/preview", s.handle(s.bounded(s.handleLayerPreview)))
	m.Handle("GET /ramps", s.handle(s.handleRamps))
	m.Handle("/ramps", s.handle(methodNotAllowed))
	m.Handle("GET /maps/{id}/layers/{index}", s.handle(s.bounded(s.handleLayerGet)))
	m.Handle("PUT /maps/{id}/layers/{index}", s.handle(s.bounded(s.handleLayerUpdate)))
	m.Handle("DELETE /maps/{id}/layers/{index}", s.handle(s.handleLayerDelete))
	m.Handle("GET /maps/{id}/layers/{index}/features", s.handle(s.bounded(s.handleLayerFeatures)))

	s.tileRoutes(m)
	s.mapTileRoutes(m)
	s.basemapRoutes(m)

	m.Handle("GET /search", s.handle(s.bounded(s.handleSearch)))
	m.Handle("GET /search/opensearch", s.handle(s.bounded(s.handleOpenSearch)))
	m.Handle("/search", s.handle(methodNotAllowed))
	m.Handle("/search/opensearch", s.handle(methodNotAllowed))

	s.ogcRoutes(m)
	// WMS 1.3.0 (wms.go): every operation is a GET of /wms, bounded
	// within handleWMS, which answers the deadline's end as a WMS report.
	m.Handle("GET /wms", s.handle(s.handleWMS))
	m.Handle("/wms", s.handle(methodNotAllowed))
	s.pageRoutes(m)
	// oEmbed of the public maps' pages (embed.go).
	m.Handle("GET /oembed", s.handle(s.handleOEmbed))
	m.Handle("/oembed", s.handle(methodNotAllowed))
	// The same paths with any other method: 405 with a JSON body.
	for _, p := range []string{"/maps", "/maps/{id}", "/maps/{id}/layers", "/maps/{id}/layers/{index}", "/maps/{id}/layers/{index}/features", "/maps/{id}/preview", "/maps/{id}/tiles/{z}/{x}/{y}", "/maps/{id}/styles", "/maps/{id}/styles/{style}", "/maps/{id}/legend", "/healthz", "/api", "/users", "/users/{user}", "/users/{user}/second_factor", "/users/{user}/sign_in_link", "/session", "/setup", "/datasets", "/datasets/{id}", "/datasets/{id}/features", "/datasets/{id}/fetch", "/datasets/{id}/edits",
		"/datasets/{id}/features/{ignored}", "/maps/{id}/features/{ignored}",
		"/groups", "/groups/{id}", "/groups/{id}/users", "/groups/{id}/users/{login}"} {
		m.Handle(p, s.handle(methodNotAllowed))
	}
	m.Handle("/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "no such resource: %s", info(r).path)
	}))
}

// routeTable registers routes on the mux and records their patterns, so
// that the OpenAPI document can be checked against what is served.
type routeTable struct {
	mux      *http.ServeMux
	patterns []string
}

// Handle registers h for pattern on the mux and records the pattern.
func (t *routeTable) Handle(pattern string, h http.Handler) {
	t.patterns = append(t.patterns, pattern)
	t.mux.Handle(pattern, h)
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	return mapcommons.Errorf(codeMethod, "%s is not allowed on %s", r.Method, info(r).path)
}

// handleHealth answers GET /healthz: 200 when the store answers.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkBody(r); err != nil {
		return err
	}
	if s.svc.Health != nil {
		if err := s.svc.Health.Ping(r.Context()); err != nil {
			return err
		}
	}
	return s.writeJSON(w, r, http.StatusOK, map[string]string{"status": "ok"})
}
