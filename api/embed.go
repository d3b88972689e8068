// Maps on other sites: the embed page (/app/maps/{id}/embed, the one page
// other sites may frame), oEmbed (GET /oembed, oembed.com) and the cards
// of a map's page (Open Graph, Twitter). All three are for public maps
// only, decided as for an anonymous caller (publicMap), whoever asks: a
// private map and a missing one give the same answer, so that none of
// them tells that a private map exists.

package api

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"mapcommons"
	"mapcommons/web"
)

// The embed's size when the consumer sets no bound, and the card's image.
const (
	embedWidth, embedHeight = 800, 600
	cardWidth, cardHeight   = 1200, 630
)

// errNoPublicMap is the answer about a map that is not public, or not
// there: the same words for both, and nothing of the map.
func errNoPublicMap() error {
	return mapcommons.Errorf(mapcommons.ENOTFOUND, "no such map, or it is not public: only public maps are embedded")
}

// publicMap is map id when anyone may see it with every layer it draws,
// as GET /maps/{id}.json and its images decide for an anonymous caller
// (mapPublic: the map's view right, its layers' datasets' download
// right); nil for a map that is not public and for one that does not
// exist alike.
func (s *Server) publicMap(r *http.Request, id int64) (*mapcommons.Map, error) {
	m, err := s.svc.Maps.FindMapByID(r.Context(), id)
	if mapcommons.ErrorCode(err) == mapcommons.ENOTFOUND {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !s.mapPublic(r, m, true) {
		return nil, nil
	}
	return m, nil
}

// mapPageURL is the absolute URL of map id's page, and of its embed.
func (s *Server) mapPageURL(r *http.Request, id int64) string {
	return s.baseURL(r) + "/app/maps/" + strconv.FormatInt(id, 10)
}

// mapImageURL is the absolute URL of map id's image at a size.
func (s *Server) mapImageURL(r *http.Request, id int64, width, height int) string {
	return s.baseURL(r) + "/maps/" + strconv.FormatInt(id, 10) + ".png?width=" + strconv.Itoa(width) + "&height=" + strconv.Itoa(height)
}

// mapCards fills the head of public map m's page: its Open Graph and
// Twitter cards and its oEmbed link (html/template escapes them).
func (s *Server) mapCards(r *http.Request, m *mapcommons.Map, p *web.Page) {
	page := s.mapPageURL(r, m.ID)
	image := s.mapImageURL(r, m.ID, cardWidth, cardHeight)
	desc := "A map on " + siteName
	if m.Description != nil && *m.Description != "" {
		desc = *m.Description
	}
	p.Meta = []web.Meta{
		{Property: "og:type", Content: "website"},
		{Property: "og:site_name", Content: siteName},
		{Property: "og:title", Content: m.Title},
		{Property: "og:description", Content: desc},
		{Property: "og:url", Content: page},
		{Property: "og:image", Content: image},
		{Property: "og:image:width", Content: strconv.Itoa(cardWidth)},
		{Property: "og:image:height", Content: strconv.Itoa(cardHeight)},
		{Name: "twitter:card", Content: "summary_large_image"},
		{Name: "twitter:title", Content: m.Title},
		{Name: "twitter:description", Content: desc},
		{Name: "twitter:image", Content: image},
	}
	p.OEmbed = &web.Link{Title: m.Title, Href: s.baseURL(r) + "/oembed?url=" + url.QueryEscape(page) + "&format=json"}
}

// oEmbed is the answer of GET /oembed: a rich embed (oEmbed 1.0, 2.3.4).
type oEmbed struct {
	Version         string `json:"version"`
	Type            string `json:"type"`
	ProviderName    string `json:"provider_name"`
	ProviderURL     string `json:"provider_url"`
	Title           string `json:"title"`
	HTML            string `json:"html"`
	Width           int    `json:"width"`
	Height          int    `json:"height"`
	ThumbnailURL    string `json:"thumbnail_url"`
	ThumbnailWidth  int    `json:"thumbnail_width"`
	ThumbnailHeight int    `json:"thumbnail_height"`
}

// mapPagePath matches the paths of a map's page and of its embed.
var mapPagePath = regexp.MustCompile(`^/app/maps/([1-9][0-9]{0,17})(?:/embed)?(?:\.html)?/?$`)

// oEmbedMap is the map a consumer's url names: this server's page of a
// map, or its embed; ok false for any other URL.
func (s *Server) oEmbedMap(r *http.Request, raw string) (id int64, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return 0, false
	}
	base, err := url.Parse(s.baseURL(r))
	if err != nil || !strings.EqualFold(u.Scheme, base.Scheme) || !strings.EqualFold(u.Host, base.Host) ||
		!strings.HasPrefix(u.Path, strings.TrimSuffix(base.Path, "/")+"/") {
		return 0, false
	}
	sub := mapPagePath.FindStringSubmatch(u.Path[len(strings.TrimSuffix(base.Path, "/")):])
	if sub == nil {
		return 0, false
	}
	id, err = strconv.ParseInt(sub[1], 10, 64)
	return id, err == nil
}

// oEmbedBound reads maxwidth or maxheight: the side def, or less when the
// consumer bounds it (a whole number of pixels from 1).
func oEmbedBound(q url.Values, name string, def int) (int, error) {
	v := strings.TrimSpace(q.Get(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, mapcommons.Errorf(mapcommons.EINVALID, "%s: a whole number of pixels from 1, not %q", name, v)
	}
	return min(n, def), nil
}

// handleOEmbed answers GET /oembed?url=…&format=json: the embed of a
// public map's page as oEmbed's rich type, an <iframe> of its embed page
// within maxwidth and maxheight, and its image as the thumbnail. Any URL
// but a public map's page is a 404, a private map's as a missing one's;
// format=xml is not served (501, as the specification says).
func (s *Server) handleOEmbed(w http.ResponseWriter, r *http.Request) error {
	if err := s.checkBody(r); err != nil {
		return err
	}
	q := r.URL.Query()
	switch f := strings.ToLower(q.Get("format")); {
	case info(r).format != "json":
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "oEmbed is served as json only (GET /oembed)")
	case f == "xml":
		return mapcommons.Errorf(mapcommons.ENOTIMPLEMENTED, "format: oEmbed is served as json only")
	case f != "" && f != "json":
		return mapcommons.Errorf(mapcommons.EINVALID, "format: json (the default) or xml, not %q", q.Get("format"))
	}
	width, err := oEmbedBound(q, "maxwidth", embedWidth)
	if err != nil {
		return err
	}
	height, err := oEmbedBound(q, "maxheight", embedHeight)
	if err != nil {
		return err
	}
	raw := strings.TrimSpace(q.Get("url"))
	if raw == "" {
		return mapcommons.Errorf(mapcommons.EINVALID, "url: missing (the URL of a map's page)")
	}
	id, ok := s.oEmbedMap(r, raw)
	if !ok {
		return mapcommons.Errorf(mapcommons.ENOTFOUND, "url: not a map's page on this server (%s/app/maps/{id})", s.baseURL(r))
	}
	m, err := s.publicMap(r, id)
	if err != nil {
		return err
	}
	if m == nil {
		return errNoPublicMap()
	}
	src := s.mapPageURL(r, m.ID) + "/embed"
	frame := `<iframe src="` + html.EscapeString(src) + `" width="` + strconv.Itoa(width) + `" height="` + strconv.Itoa(height) +
		`" style="border:0" loading="lazy" allowfullscreen title="` + html.EscapeString(m.Title) + `"></iframe>`
	w.Header().Set("Cache-Control", cacheControl(r, true))
	return s.writeJSON(w, r, http.StatusOK, oEmbed{Version: "1.0", Type: "rich", ProviderName: siteName,
		ProviderURL: s.baseURL(r) + "/", Title: m.Title, HTML: frame, Width: width, Height: height,
		ThumbnailURL: s.mapImageURL(r, m.ID, width, height), ThumbnailWidth: width, ThumbnailHeight: height})
}
