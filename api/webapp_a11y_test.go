package api_test

// Accessibility and layout of every page, in headless Chromium, at a
// desktop size (1280×800) and a phone's (375×740), as a visitor and signed
// in: every control has an accessible name, images have alternatives, no
// page scrolls sideways, text has a contrast of at least 4.5:1 (3:1 when
// large), and keyboard focus is visible.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"mapcommons/api"
)

// a11yAudit is evaluated in a page: the problems it finds, as strings.
const a11yAudit = `(() => {
  const problems = [];
  const visible = (e) => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const desc = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '');
  // Names of controls.
  for (const e of document.querySelectorAll('input, select, textarea, button, a[href], [role=button], [tabindex]')) {
    if (!visible(e) || e.type === 'hidden' || e.closest('.maplibregl-map')) continue;
    const labelled = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || e.getAttribute('title') ||
      (e.labels && e.labels.length > 0) || (['BUTTON', 'A'].includes(e.tagName) && e.textContent.trim()) ||
      (e.type === 'submit' && e.value) || (e.tagName === 'A' && e.querySelector('img[alt]'));
    if (!labelled) problems.push('no accessible name: ' + desc(e));
  }
  for (const e of document.querySelectorAll('img')) {
    if (!e.hasAttribute('alt') && !e.closest('.maplibregl-map')) problems.push('image without alt: ' + e.src);
  }
  // Sideways scrolling.
  if (document.documentElement.scrollWidth > innerWidth + 1) {
    const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1 &&
      !e.closest('.table-wrap, .maplibregl-map, pre') && getComputedStyle(e).position !== 'absolute').slice(0, 3).map(desc);
    problems.push('scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + innerWidth + ' (' + wide.join(', ') + ')');
  }
  // Contrast of text against its background.
  const rgb = (c) => { const m = c.match(/[\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (e) => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length < 4 || c[3] > 0.9) return c; } return [255, 255, 255]; };
  for (const e of document.querySelectorAll('body *')) {
    if (!visible(e) || e.closest('.maplibregl-map, svg') || e.disabled) continue;
    const text = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!text) continue;
    const s = getComputedStyle(e);
    const fg = rgb(s.color), bg = background(e);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    const size = parseFloat(s.fontSize), bold = Number(s.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < need) problems.push('contrast ' + ratio.toFixed(2) + ' < ' + need + ': ' + desc(e) + ' "' + e.textContent.trim().slice(0, 30) + '"');
  }
  return problems;
})()`

// focusVisible tabs through the page's first controls and returns those
// whose focus draws no outline or shadow.
const focusVisible = `(() => {
  const e = document.activeElement;
  if (!e || e === document.body) return '';
  const s = getComputedStyle(e);
  const drawn = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
  return drawn ? '' : (e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + ' ' + e.textContent.trim().slice(0, 20));
})()`

// TestWebAppAccessible audits every page at two sizes, as a visitor and
// as a signed-in user.
func TestWebAppAccessible(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"title": "North Carolina counties", "tags": "nc, counties"})
	must(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body}), 201)
	// alice's sharing panel lists a group by its name (a long one) and
	// one she is not in by its number.
	mine := ts.createGroup(t, form, "name=North Carolina county survey field team")
	other := ts.createGroup(t, form, "name=Auditors")
	must(t, ts.do(req{method: "POST", path: "/groups/" + itoa(mine) + "/users.json", user: "admin", ctype: form, body: []byte("login=alice")}), 200)
	must(t, ts.do(req{method: "PUT", path: "/datasets/1.json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions":[{"group_id":"everyone","permissions":{"view":true,"download":true}},{"group_id":` + itoa(mine) + `,"permissions":{"edit":true}},{"group_id":` + itoa(other) + `,"permissions":{"view":true}}]}`)}), 200)
	b := browserOn(t, ts)
	pages := []string{"/", "/app/search?q=counties", "/app/datasets/1", "/app/maps/1", "/app/editor", "/app/upload",
		"/app/signin", "/app/signup", "/app/account", "/app/groups", "/app/setup"}
	// The audit finds what it looks for: a grey text on white, a button
	// without a name, an element wider than the window.
	b.do("home", chromedp.Navigate(b.url+"/"))
	b.wait("home loaded", `document.readyState === 'complete'`)
	found := strings.Join(eval[[]string](b, `(() => {
	  const p = document.createElement('p'); p.textContent = 'faint'; p.style.color = '#bbb'; document.body.append(p);
	  const bt = document.createElement('button'); document.body.append(bt);
	  const w = document.createElement('div'); w.style.width = '3000px'; w.style.height = '1px'; document.body.append(w);
	  return `+a11yAudit+`; })()`), "\n")
	for _, want := range []string{"contrast 1.9", "no accessible name: button", "scrolls sideways: 30"} {
		if !strings.Contains(found, want) {
			t.Errorf("the audit missed %q in a page made to fail it:\n%s", want, found)
		}
	}
	auditPages(b, "visitor", pages, nil)
	signInAs(b, "alice", "secret1")
	auditPages(b, "alice", pages, nil)
}

// TestWebOGCAccessible audits the OGC API's HTML documents, those with a
// map of the features among them, at the same two sizes, as a visitor and
// signed in: on a phone their tables scroll in their own box, not the
// page.
func TestWebOGCAccessible(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	id := uploadNC(t, ts, "?title=North+Carolina+counties")
	must(t, ts.do(req{method: "PUT", path: "/datasets/" + id + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions":[{"group_id":"everyone","permissions":{"view":true,"download":true}}]}`)}), 200)
	coll := "/ogc/collections/" + id
	pages := []string{"/ogc?f=html", "/ogc/conformance?f=html", "/ogc/collections?f=html", coll + "?f=html",
		coll + "/items?f=html", coll + "/items/3?f=html", coll + "/queryables?f=html", coll + "/schema?f=html", "/ogc/functions?f=html"}
	b := browserOn(t, ts)
	auditPages(b, "visitor", pages, nil)
	signInAs(b, "alice", "secret1")
	auditPages(b, "alice", pages, nil)
}

// auditPages opens each page at a desktop's size and a phone's, waits for
// its scripts to have drawn it (and for ready's condition of it, when it
// has one), and reports what a11yAudit finds and the first controls whose
// focus is not drawn; who names the visitor.
func auditPages(b *browserTest, who string, pages []string, ready map[string]string) {
	t := b.t
	t.Helper()
	for _, size := range [][2]int64{{1280, 800}, {375, 740}} {
		b.do("viewport", chromedp.EmulateViewport(size[0], size[1]))
		for _, p := range pages {
			b.do("open "+p, chromedp.Navigate(b.url+p))
			// The page's scripts have drawn it: no status says it is
			// loading, and a map of the OGC pages has drawn its features.
			b.wait(p+" loaded", `document.readyState === 'complete' && ![...document.querySelectorAll('[role=status]')].some((e) => /Loading|Searching/.test(e.textContent)) &&
			  [...document.querySelectorAll('#ogc-map')].every((m) => m.dataset.state === 'idle')`)
			if cond, ok := ready[p]; ok {
				b.wait(p+" drawn", cond)
			}
			where := fmt.Sprintf("%s %s at %dx%d", who, p, size[0], size[1])
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
				b.screenshot("phone-" + who + p)
			}
		}
	}
}

// signInAs signs the browser in as login, by the API (the sign-in page is
// audited, not used), from a document that asks the server nothing else:
// a page's request still under way with the previous session's cookie
// would be answered with that cookie's clearing (the session it names is
// gone), which could come after the new cookie and drop it.
func signInAs(b *browserTest, login, password string) {
	b.t.Helper()
	b.do("sign in", chromedp.Navigate(b.url+"/app/assets/favicon.svg"))
	status, err := chromedp.Run(b.ctx, chromedp.Evaluate[float64](`fetch('/session.json', {method: 'POST', credentials: 'same-origin',
		headers: {'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest'},
		body: JSON.stringify({login: '`+login+`', password: '`+password+`'})}).then((r) => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != 201 {
		b.t.Fatalf("sign-in as %s: %v %v", login, status, err)
	}
}
