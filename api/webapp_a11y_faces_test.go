package api_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

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
	pages := map[string]string{
		"/app" + path + "/embed": `window.mcMap && window.mcMap.loaded()`,
		"/api.html":              `document.querySelector('.swagger-ui .opblock') !== null`,
	}
	for _, size := range [][2]int64{{1280, 800}, {375, 740}} {
		b.do("viewport", chromedp.EmulateViewport(size[0], size[1]))
		for p, drawn := range pages {
			b.do("open "+p, chromedp.Navigate(b.url+p))
			b.wait(p+" drawn", `document.readyState === 'complete' && `+drawn)
			where := fmt.Sprintf("%s at %dx%d", p, size[0], size[1])
			for _, problem := range eval[[]string](b, a11yAudit) {
				t.Errorf("%s: %s", where, problem)
			}
			for i := 0; i < 6; i++ {
				b.do("tab", chromedp.KeyEvent("\t"))
				if bad := eval[string](b, focusVisible); bad != "" {
					t.Errorf("%s: focus not visible on %s", where, bad)
				}
			}
			if size[0] < 400 {
				b.screenshot("phone" + p)
			}
		}
	}
}
