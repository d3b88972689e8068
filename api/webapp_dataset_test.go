package api_test

// The dataset and search pages in a real headless Chromium: the query
// builder (an attribute filter, a radius, group_by with its bar chart)
// checked against the API it shows, the owner's editing, deletion and
// sharing, the search page's filters and box, and the time a big dataset's
// page takes to become interactive. Helpers here (signInViaAPI, setField,
// mapColours, openDataset) are for the other browser tests too.

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
)

// signInViaAPI gives the browser a session of login: it opens a page of
// the server when the browser is elsewhere, then POSTs /session.json from
// it with fetch (the server sets the session cookie), and checks the
// answer is 201. It does not use the sign-in form.
func signInViaAPI(b *browserTest, login, password string) {
	b.t.Helper()
	if href := eval[string](b, `location.href`); !strings.HasPrefix(href, b.url) {
		b.load("open the server", chromedp.Navigate(b.url+"/app/search"))
	}
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	code, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`fetch('/session.json', {method: 'POST', credentials: 'same-origin',
		headers: {'Content-Type': 'application/json', Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest'},
		body: JSON.stringify({login: %s, password: %s})}).then(r => r.status)`, strconv.Quote(login), strconv.Quote(password)), chromedp.EvalAwaitPromise))
	if err != nil || code != http.StatusCreated {
		b.t.Fatalf("signing in %s from the page: status %d, %v", login, code, err)
	}
}

// signOutViaAPI ends the browser's session (DELETE /session.json with its
// CSRF token, read from GET /session.json).
func signOutViaAPI(b *browserTest) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[int](`(async () => {
		const h = {Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest'};
		const s = await fetch('/session.json', {headers: h, credentials: 'same-origin'}).then(r => r.ok ? r.json() : null);
		if (!s) return 204;
		return (await fetch('/session.json', {method: 'DELETE', credentials: 'same-origin', headers: {...h, 'X-CSRF-Token': s.csrf_token}})).status;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatal(err)
	}
}

// setField sets the value of the form control matched by the CSS selector
// and sends it input and change events, as a person's typing would.
func setField(b *browserTest, selector, value string) {
	b.t.Helper()
	ok := eval[bool](b, fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false;
		e.value = %s; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`,
		strconv.Quote(selector), strconv.Quote(value)))
	if !ok {
		b.t.Fatalf("no control %s", selector)
	}
}

// click clicks the element matched by a CSS selector.
func click(b *browserTest, selector string) {
	b.t.Helper()
	b.do("click "+selector, chromedp.Click(chromedp.CSS(selector)))
}

// text is the text of the element matched by a CSS selector ("" when none).
func text(b *browserTest, selector string) string {
	b.t.Helper()
	return eval[string](b, fmt.Sprintf(`document.querySelector(%s)?.textContent ?? ''`, strconv.Quote(selector)))
}

// groupChoices are the group names the sharing panel in container offers
// (its datalist).
func groupChoices(b *browserTest, container string) []string {
	b.t.Helper()
	return eval[[]string](b, fmt.Sprintf(`[...document.querySelectorAll(%s)].map((o) => o.value)`, strconv.Quote(container+" datalist option")))
}

// addGroupByTyping types a group's name (or number) into the sharing
// panel's group field, as a person picking it would, presses Add group and
// waits for the group's row (id).
func addGroupByTyping(b *browserTest, container, field, typed, id string) {
	b.t.Helper()
	setField(b, container+" "+field, "")
	b.do("type "+typed, chromedp.SendKeys(chromedp.CSS(container+" "+field), typed))
	click(b, container+" .share-add")
	b.wait("the row of group "+id, fmt.Sprintf(`document.querySelector(%s) !== null`, strconv.Quote(container+` tr[data-group="`+id+`"]`)))
}

// mapColours counts the pixels of the map's canvas that are the dataset's
// orange and the query's purple (the basemap has neither).
func mapColours(b *browserTest) (orange, purple, total int) {
	b.t.Helper()
	u := eval[string](b, `document.querySelector('#map canvas').toDataURL('image/png')`)
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(u, "data:image/png;base64,"))
	if err != nil {
		b.t.Fatal(err)
	}
	img, err := png.Decode(strings.NewReader(string(raw)))
	if err != nil {
		b.t.Fatal(err)
	}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			R, G, B := int(cr>>8), int(cg>>8), int(cb>>8)
			switch {
			case R > G+40 && R > B+60:
				orange++
			case R > G+50 && B > G+50:
				purple++
			}
		}
	}
	return orange, purple, r.Dx() * r.Dy()
}

// openDataset opens the page of the dataset at path (/datasets/N) and
// waits for its map and table.
func openDataset(b *browserTest, path string) {
	b.t.Helper()
	b.load("open "+path, chromedp.Navigate(b.url+"/app"+path))
	b.wait("the map idle", `document.getElementById('map')?.dataset.state === 'idle'`)
	b.wait("the table", `document.getElementById('table-status').textContent.startsWith('Rows')`)
}

// waitMapQuery waits for the map to have drawn a query's features.
func waitMapQuery(b *browserTest) {
	b.t.Helper()
	b.wait("the query drawn", `document.getElementById('map').dataset.state === 'idle' && document.getElementById('map').dataset.query !== undefined`)
}

// mapDraws is how many changes of the dataset page's map it has drawn
// (its data-draws, counted on MapLibre's idle after each change).
func mapDraws(b *browserTest) int {
	b.t.Helper()
	return eval[int](b, `Number(document.getElementById('map').dataset.draws ?? 0)`)
}

// waitMapDrawn waits for the dataset page's map to have drawn a change made
// after it had drawn the draws given (from mapDraws, read before the
// change), and to be idle: its pixels are then the change's.
func waitMapDrawn(b *browserTest, what string, draws int, cond string) {
	b.t.Helper()
	if cond == "" {
		cond = "true"
	}
	b.wait(what, fmt.Sprintf(`(m => Number(m.dataset.draws ?? 0) > %d && m.dataset.state === 'idle')(document.getElementById('map')) && (%s)`, draws, cond))
}

// apiPath is the path and query of an absolute URL of the browser's server.
func apiPath(t *testing.T, b *browserTest, abs string) string {
	t.Helper()
	if !strings.HasPrefix(abs, b.url) {
		t.Fatalf("the URL shown %q is not of the server %s", abs, b.url)
	}
	return strings.TrimPrefix(abs, b.url)
}

// statusCount reads the leading number of a status text ("12 features
// match", "1,200 features match").
func statusCount(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(strings.Fields(s + " x")[0], ",", ""))
	if err != nil {
		t.Fatalf("no count in %q", s)
	}
	return n
}

// TestWebDatasetQuery runs the query builder on the nc counties: an
// attribute filter (table, map and the API URL shown), a radius, a
// group_by with its bar chart, and clearing; the owner's tools stay hidden
// from a visitor and from another user.
func TestWebDatasetQuery(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"title": "North Carolina counties", "tags": "nc, counties"})
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	dsPath := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	if !strings.HasPrefix(dsPath, "/datasets/") {
		dsPath = "/datasets/1"
	}
	b := browserOn(t, ts)
	openDataset(b, dsPath)
	orange0, purple0, _ := mapColours(b)
	if orange0 == 0 || purple0 > orange0/50 {
		t.Fatalf("before a query: %d orange, %d purple pixels", orange0, purple0)
	}
	if !eval[bool](b, `document.getElementById('owner').hidden && document.getElementById('delete-tools').hidden`) {
		t.Error("a visitor sees the owner's tools")
	}

	// An attribute filter: births of 1974 at least 10,000.
	click(b, "#add-filter")
	setField(b, "#filters .filter-row:last-child .f-attr", "BIR74")
	setField(b, "#filters .filter-row:last-child .f-op", "min")
	setField(b, "#filters .filter-row:last-child .f-val", "10000")
	click(b, "#run-query")
	b.wait("the query's count", `/^[\d,]+ features? match/.test(document.getElementById('query-status').textContent)`)
	waitMapQuery(b)
	n := statusCount(t, text(b, "#query-status"))
	shown := text(b, "#query-url")
	p := apiPath(t, b, shown)
	if !strings.Contains(p, "filter[BIR74][][min]=10000") {
		t.Errorf("the URL shown %q lacks the filter", p)
	}
	list := decode[[]map[string]any](t, must(t, ts.get(p, ""), 200))
	if len(list) != n || n == 0 || n >= 100 {
		t.Errorf("the page says %d features match, its URL %s gives %d", n, p, len(list))
	}
	for _, f := range list {
		if f["BIR74"].(float64) < 10000 {
			t.Errorf("%v: BIR74 under 10000", f["NAME"])
		}
	}
	b.wait("the table pages the query", fmt.Sprintf(`document.getElementById('table-status').textContent.startsWith('Rows 1–%d of %d')`, min(n, 20), n))
	for _, v := range eval[[]string](b, `[...document.querySelectorAll('#table tbody tr')].map(tr => tr.children[[...document.querySelectorAll('#table thead th')].findIndex(th => th.querySelector('button')?.dataset.column === 'BIR74')].textContent)`) {
		if x, _ := strconv.ParseFloat(v, 64); x < 10000 {
			t.Errorf("a row of the query's table has BIR74 %s", v)
		}
	}
	orange1, purple1, total := mapColours(b)
	t.Logf("map pixels of %d: before %d orange, %d purple; filtered %d orange, %d purple", total, orange0, purple0, orange1, purple1)
	if purple1 < total/200 || orange1 > orange0/2 {
		t.Errorf("the filter did not change the map: orange %d → %d, purple %d → %d", orange0, orange1, purple0, purple1)
	}
	b.screenshot("dataset-filter")

	// Only the matching features: the others go from the map.
	drawn := mapDraws(b)
	click(b, "#only-matching")
	waitMapDrawn(b, "only the matching features drawn", drawn, "")
	if o, bl, _ := mapColours(b); o > orange1/4+50 || bl == 0 {
		t.Errorf("only the matching features: %d orange, %d purple pixels", o, bl)
	}
	click(b, "#only-matching")

	// group_by SID74 with the sum of BIR74: a bar per group.
	setField(b, "#group-by", "SID74")
	click(b, "#add-aggregate")
	setField(b, "#aggregates .filter-row:last-child .a-attr", "BIR74")
	setField(b, "#aggregates .filter-row:last-child .a-calc", "sum")
	click(b, "#run-group")
	b.wait("the groups", `/^\d+ groups?\./.test(document.getElementById('group-status').textContent)`)
	gp := apiPath(t, b, text(b, "#group-url"))
	groups := decode[[]map[string]any](t, must(t, ts.get(gp, ""), 200))
	bars := eval[int](b, `document.querySelectorAll('#group-chart svg rect.bar').length`)
	rows := eval[int](b, `document.querySelectorAll('#group-table tbody tr').length`)
	if len(groups) < 5 || bars != len(groups) || rows != len(groups) || statusCount(t, text(b, "#group-status")) != len(groups) {
		t.Errorf("%d groups from %s; the page shows %d bars and %d rows", len(groups), gp, bars, rows)
	}
	var counted float64
	for _, g := range groups {
		counted += g["count"].(float64)
		if _, ok := g["sum_BIR74"]; !ok {
			t.Errorf("group %v has no sum_BIR74", g)
		}
	}
	if int(counted) != n {
		t.Errorf("the groups count %v features, the query %d", counted, n)
	}
	b.screenshot("dataset-groups")

	// Clearing restores the whole dataset.
	drawn = mapDraws(b)
	click(b, "#clear-query")
	b.wait("the whole table", `document.getElementById('table-status').textContent === 'Rows 1–20 of 100'`)
	waitMapDrawn(b, "the map redrawn", drawn, `document.getElementById('map').dataset.query === undefined`)
	if o, bl, _ := mapColours(b); o < orange0*9/10 || bl > purple0+total/500 {
		t.Errorf("after clearing: %d orange (was %d), %d purple (was %d)", o, orange0, bl, purple0)
	}

	// A radius: within 60 km of Raleigh, typed (no mouse).
	setField(b, "#near-lat", "35.78")
	setField(b, "#near-lon", "-78.64")
	setField(b, "#near-radius", "60")
	setField(b, "#near-units", "km")
	click(b, "#run-query")
	b.wait("the radius's count", `/^[\d,]+ features? match/.test(document.getElementById('query-status').textContent)`)
	waitMapQuery(b)
	n = statusCount(t, text(b, "#query-status"))
	p = apiPath(t, b, text(b, "#query-url"))
	for _, want := range []string{"lat=35.78", "lon=-78.64", "radius=60", "units=km"} {
		if !strings.Contains(p, want) {
			t.Errorf("the radius URL %q lacks %s", p, want)
		}
	}
	if got := len(decode[[]map[string]any](t, must(t, ts.get(p, ""), 200))); got != n || n == 0 {
		t.Errorf("radius: the page says %d, the URL %s gives %d", n, p, got)
	}
	b.screenshot("dataset-radius")

	// The same radius picked with the mouse: a click on the map sets the point.
	click(b, "#clear-query")
	b.wait("cleared", `document.getElementById('table-status').textContent === 'Rows 1–20 of 100'`)
	click(b, "#pick-point")
	b.do("scroll to the map", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	rect := eval[[]float64](b, `(() => { const r = document.querySelector('#map canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	b.do("click the centre", chromedp.MouseClickXY(rect[0]+rect[2]/2, rect[1]+rect[3]/2))
	b.wait("the point picked", `document.getElementById('near-lat').value !== '' && document.getElementById('near-radius').value === '10'`)
	if eval[bool](b, `document.querySelector('.maplibregl-popup') !== null`) {
		t.Error("picking a point opened a popup")
	}

	// A box drawn with the mouse fills the four numbers.
	click(b, "#clear-query")
	click(b, "#draw-box")
	b.do("scroll to the map again", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	rect = eval[[]float64](b, `(() => { const r = document.querySelector('#map canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	x0, y0 := rect[0]+rect[2]*0.3, rect[1]+rect[3]*0.3
	x1, y1 := rect[0]+rect[2]*0.7, rect[1]+rect[3]*0.7
	b.do("drag a box",
		chromedp.MouseEvent("mouseMoved", x0, y0),
		chromedp.MouseEvent("mousePressed", x0, y0, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent("mouseMoved", (x0+x1)/2, (y0+y1)/2, chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseMoved", x1, y1, chromedp.ButtonLeft),
		chromedp.MouseEvent("mouseReleased", x1, y1, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	b.wait("the box's numbers", `['w','s','e','n'].every(k => document.getElementById('bbox-' + k).value !== '')`)
	box := eval[[]string](b, `['w','s','e','n'].map(k => document.getElementById('bbox-' + k).value)`)
	if w, _ := strconv.ParseFloat(box[0], 64); w < -85 || w > -75 {
		t.Errorf("the box drawn %v is not over North Carolina", box)
	}
	click(b, "#run-query")
	b.wait("the box's count", `/^[\d,]+ features? match/.test(document.getElementById('query-status').textContent)`)
	n = statusCount(t, text(b, "#query-status"))
	p = apiPath(t, b, text(b, "#query-url"))
	if got := len(decode[[]map[string]any](t, must(t, ts.get(p, ""), 200))); got != n || !strings.Contains(p, "bbox=") {
		t.Errorf("box: the page says %d, the URL %s gives %d", n, p, got)
	}
	b.screenshot("dataset-box")

	// At phone width the query builder fits: no sideways scrolling.
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	b.wait("laid out", `document.documentElement.scrollWidth <= window.innerWidth`)
	b.screenshot("dataset-query-phone")
	b.do("desktop width", chromedp.EmulateViewport(1280, 800))

	// Another user, signed in, sees no owner's tools either.
	signInViaAPI(b, "bob", "secret1")
	openDataset(b, dsPath)
	if !eval[bool](b, `document.getElementById('owner').hidden && document.querySelector('#table .row-select') === null`) {
		t.Error("bob sees alice's owner tools")
	}
	checkNoProblems(b)
}

// checkLabels fails the test for each visible control of the page without
// an accessible name (a label, aria-label or aria-labelledby, or a
// button's text).
func checkLabels(b *browserTest) {
	b.t.Helper()
	for _, c := range eval[[]string](b, `[...document.querySelectorAll('main input:not([type=hidden]), main select, main textarea, main button')]
		.filter(e => e.offsetParent !== null)
		.filter(e => !(e.labels?.length || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || (e.tagName === 'BUTTON' && e.textContent.trim())))
		.map(e => e.outerHTML.slice(0, 120))`) {
		b.t.Errorf("a control without a name: %s", c)
	}
}

// checkNoProblems fails the test on the console errors the pages logged,
// but for the 401 of GET /session.json that asks whether a visitor is
// signed in.
func checkNoProblems(b *browserTest) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		if strings.Contains(p, "/session.json") && strings.Contains(p, "401") {
			continue
		}
		b.t.Errorf("in the browser: %s", p)
	}
}

// TestWebDatasetOwner: on an appliance, alice edits her dataset's title,
// deletes a feature and shares it with a group through the page; the API
// then says what the page did, a member of the group may view it and an
// outsider may not; the member's page shows no owner's tools.
func TestWebDatasetOwner(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.Mode = mapcommons.ModeAppliance })
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"title": "North Carolina counties"})
	w := ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body})
	must(t, w, 201)
	dsPath := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	group := ts.createGroup(t, "application/x-www-form-urlencoded", "group[name]=readers")
	must(t, ts.do(req{method: "POST", path: "/groups/" + itoa(group) + "/users.json", user: "admin", ctype: "text/plain", body: []byte("bob")}), 200)
	must(t, ts.do(req{method: "POST", path: "/users.json", ctype: "application/x-www-form-urlencoded",
		body: []byte("user[login]=carol&user[password]=secret1&user[password_confirmation]=secret1&user[email]=carol@example.com")}), 201)
	errorOf(t, ts.get(dsPath+".json", "bob"), 404, "not_found", "")

	b := browserOn(t, ts)
	signInViaAPI(b, "alice", "secret1")
	openDataset(b, dsPath)
	b.wait("the owner's tools", `!document.getElementById('owner').hidden && document.querySelector('#share .share-save') !== null`)

	// Every control of the page, the owner's too, has a name.
	click(b, "#add-filter")
	click(b, "#add-aggregate")
	checkLabels(b)

	// The title.
	setField(b, "#meta-title", "NC counties, edited")
	setField(b, "#meta-tags", "nc, edited")
	click(b, "#meta-save")
	b.wait("saved", `document.getElementById('meta-status').textContent === 'The metadata is saved.'`)
	doc := decode[map[string]any](t, must(t, ts.get(dsPath+".json", "alice"), 200))
	if doc["title"] != "NC counties, edited" || !strings.Contains(doc["tags"].(string), "edited") || text(b, "#title") != "NC counties, edited" {
		t.Errorf("after the edit: API title %v tags %v, page %q", doc["title"], doc["tags"], text(b, "#title"))
	}

	// Delete a feature: the table sorted by NAME, its second row.
	click(b, `#table th button[data-column="NAME"]`)
	b.wait("sorted", `document.querySelector('#table th[aria-sort="ascending"]') !== null`)
	fid := eval[int](b, `Number(document.querySelectorAll('#table .row-select')[1].dataset.fid)`)
	name := eval[string](b, `document.querySelectorAll('#table tbody tr')[1].children[1 + `+nameColumnIn+`].textContent`)
	click(b, "#table tbody tr:nth-child(2) .row-select")
	click(b, "#delete-rows")
	b.wait("the confirmation", `!document.getElementById('delete-confirm').hidden`)
	b.screenshot("dataset-delete-confirm")
	click(b, "#delete-yes")
	b.wait("deleted", `document.getElementById('delete-status').textContent === '1 feature deleted.'`)
	doc = decode[map[string]any](t, must(t, ts.get(dsPath+".json", "alice"), 200))
	if doc["feature_count"].(float64) != 99 {
		t.Errorf("feature_count %v after deleting one of 100", doc["feature_count"])
	}
	left := decode[[]map[string]any](t, must(t, ts.get(dsPath+"/features.json?limit=1000&filter[NAME][][equals]="+url.QueryEscape(name), "alice"), 200))
	if len(left) != 0 {
		t.Errorf("%s (feature %d) is still there", name, fid)
	}
	errorOf(t, ts.get("/ogc/collections/"+strings.TrimPrefix(dsPath, "/datasets/")+"/items/"+itoa(int64(fid)), "alice"), 404, "not_found", "")
	b.wait("the table says 99", `document.getElementById('table-status').textContent === 'Rows 1–20 of 99'`)

	// Share with the group at download, through the panel: alice is not
	// in it, so she sees no name to pick and adds it by its number (a
	// name of no group of hers is refused).
	if got := groupChoices(b, "#share"); len(got) != 0 {
		t.Errorf("alice, in no group, may pick %q", got)
	}
	click(b, "#share .share-add")
	b.wait("an error asks for the number", `document.querySelector('#share .share-status').textContent.includes('number')`)
	setField(b, "#share #share-group-dataset", "readers")
	click(b, "#share .share-add")
	b.wait("a name of no group of hers refused", `document.querySelector('#share .share-status').textContent.includes('is added by its number')`)
	addGroupByTyping(b, "#share", "#share-group-dataset", itoa(group), itoa(group))
	if got := text(b, fmt.Sprintf(`#share tr[data-group="%d"] th`, group)); got != "Group "+itoa(group)+" (not one of your groups)" {
		t.Errorf("the group added by its number is listed as %q", got)
	}
	setField(b, fmt.Sprintf(`#share tr[data-group="%d"] select`, group), "download")
	click(b, "#share .share-save")
	b.wait("shared", `document.querySelector('#share .share-status').textContent === 'Sharing saved.'`)
	b.screenshot("dataset-owner")
	doc = decode[map[string]any](t, must(t, ts.get(dsPath+".json", "bob"), 200))
	perms := fmt.Sprint(doc["permissions"])
	if !strings.Contains(perms, "download:true") || !strings.Contains(perms, "edit:false") {
		t.Errorf("permissions after sharing: %s", perms)
	}
	must(t, ts.get(dsPath+"/features.json?limit=1", "bob"), 200)
	errorOf(t, ts.get(dsPath+".json", "carol"), 404, "not_found", "")
	errorOf(t, ts.get(dsPath+".json", ""), 401, "unauthorized", "")

	// Bob, a member, opens it: no owner's tools.
	signOutViaAPI(b)
	signInViaAPI(b, "bob", "secret1")
	openDataset(b, dsPath)
	if !eval[bool](b, `document.getElementById('owner').hidden && document.querySelector('#table .row-select') === null`) {
		t.Error("bob, given download, sees the owner's tools")
	}
	if got := text(b, "#title"); got != "NC counties, edited" {
		t.Errorf("bob sees title %q", got)
	}

	// Given edit through his group, bob gets the editing tools (the page
	// asks the API), but not the sharing panel.
	must(t, ts.do(req{method: "PUT", path: dsPath + ".json", user: "alice", ctype: "application/json",
		body: []byte(fmt.Sprintf(`{"permissions":[{"group_id":%d,"permissions":{"view":true,"download":true,"edit":true}}]}`, group))}), 200)
	b.mu.Lock()
	seen := len(b.problems)
	b.mu.Unlock()
	openDataset(b, dsPath)
	b.wait("bob's editing tools", `!document.getElementById('owner').hidden && document.querySelector('#table .row-select') !== null`)
	if got := text(b, "#share"); !strings.Contains(got, "Only the owner") {
		t.Errorf("bob, an editor, sees the sharing panel: %q", got)
	}
	// The probe's 400 is the answer the page asked for: not a problem.
	// What the page logged up to now has arrived.
	b.consoleBarrier()
	b.mu.Lock()
	kept := b.problems[:seen]
	for _, p := range b.problems[seen:] {
		if !strings.Contains(p, "/features.json") || !strings.Contains(p, "400") {
			kept = append(kept, p)
		}
	}
	b.problems = kept
	b.mu.Unlock()
	checkNoProblems(b)
}

// nameColumnIn is the index of NAME among the table's columns of data (its
// first column is the row's checkbox when the caller may edit).
const nameColumnIn = `[...document.querySelectorAll('#table thead th')].slice(1).findIndex(th => th.querySelector('button')?.dataset.column === 'NAME')`

var webPoints = flag.Int("web.points", 0, "TestWebDatasetBig: the points of the big dataset (0 skips it; the target is 1000000)")

// TestWebDatasetBig times the dataset page of a big point dataset (go test
// -run TestWebDatasetBig -web.points=1000000 ./api): from navigation to a
// map drawn from vector tiles and the table's first page, then a pan and
// how long its frames took; a filter and a sort over every row, on demand.
// It logs the figures; it fails when the best of three loads passes 2 s
// (for the target's million points or fewer).
func TestWebDatasetBig(t *testing.T) {
	if *webPoints == 0 {
		t.Skip("-web.points=N times the page of an N-point dataset")
	}
	ts := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.MaxUpload = 1 << 30 })
	var sb strings.Builder
	sb.WriteString("name,kind,value,lat,lon\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range *webPoints {
		fmt.Fprintf(&sb, "p%d,k%d,%d,%.5f,%.5f\n", i, i%7, rng.IntN(1000), 25+rng.Float64()*24, -124+rng.Float64()*57)
	}
	start := time.Now()
	w := ts.do(req{method: "POST", path: "/datasets.json?title=big", user: "alice", ctype: "text/csv", body: []byte(sb.String())})
	must(t, w, 201)
	t.Logf("uploaded %d points in %v", *webPoints, time.Since(start).Round(time.Millisecond))
	dsPath := strings.TrimSuffix(strings.TrimPrefix(w.Header().Get("Location"), base), ".json")
	// The upload's garbage collected, the machine quiet again.
	runtime.GC()
	time.Sleep(2 * time.Second)
	b := browserOn(t, ts)
	// Three loads (the first with the server's caches cold), each after the
	// home page: from navigation to the map drawn and the table shown.
	var times []time.Duration
	for i := range 3 {
		b.load("the home page", chromedp.Navigate(b.url+"/"))
		start = time.Now()
		b.load("open the big dataset", chromedp.Navigate(b.url+"/app"+dsPath))
		b.wait("map and table", `location.pathname === '/app`+dsPath+`' && document.getElementById('map')?.dataset.state === 'idle' && document.getElementById('table-status').textContent.startsWith('Rows 1–20 of ')`)
		times = append(times, time.Since(start))
		marks := eval[[]float64](b, `['mc-table', 'mc-map-drawn'].map(n => performance.getEntriesByName(n)[0]?.startTime ?? -1)`)
		t.Logf("load %d: %d points: the table shown at %.0f ms, the map drawn (from tiles) at %.0f ms by the page's clock; %v by the test's",
			i+1, *webPoints, marks[0], marks[1], times[i].Round(time.Millisecond))
		if i == 0 {
			for _, r := range eval[[]string](b, `performance.getEntriesByType('resource').map(e => Math.round(e.startTime) + '+' + Math.round(e.duration) + 'ms ' + e.name.replace(location.origin, ''))`) {
				t.Logf("  %s", r)
			}
		}
	}
	// Density shows: the thinned points drawn as numbered clusters.
	if *webPoints > 5000 {
		n := eval[[]int](b, `['data-cluster', 'data-cluster-count'].map(l => window.mcMap.getLayer(l) ? window.mcMap.queryRenderedFeatures({ layers: [l] }).length : -1)`)
		if n[0] <= 0 || n[1] <= 0 {
			t.Errorf("%d points: %d clusters and %d numbers drawn", *webPoints, n[0], n[1])
		}
		t.Logf("%d points: %d clusters, %d numbers drawn", *webPoints, n[0], n[1])
		b.screenshot("big-dataset-clusters")
	}
	slices.Sort(times)
	t.Logf("%d points: median %v (min %v, max %v)", *webPoints, times[1].Round(time.Millisecond), times[0].Round(time.Millisecond), times[2].Round(time.Millisecond))
	// The machine is shared (other tests, other builds): the best of three
	// is held to the target, the median is logged.
	if *webPoints <= 1_000_000 && times[0] > 2*time.Second {
		t.Errorf("the page took %v at best of 3, the target is 2 s", times[0])
	}
	// On demand, the work over every row: a filter (counted, drawn, paged)
	// and a sort of the table.
	click(b, "#add-filter")
	setField(b, "#filters .filter-row:last-child .f-attr", "kind")
	setField(b, "#filters .filter-row:last-child .f-val", "k3")
	start = time.Now()
	click(b, "#run-query")
	b.wait("the query's count", `/^[\d,]+ features? match/.test(document.getElementById('query-status').textContent)`)
	counted := time.Since(start)
	waitMapQuery(b)
	t.Logf("filter kind = k3: %q counted in %v, drawn in %v", text(b, "#query-status"), counted.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	click(b, "#clear-query")
	b.wait("cleared", `document.getElementById('table-status').textContent.startsWith('Rows 1–20 of ')`)
	start = time.Now()
	click(b, `#table th button[data-column="value"]`)
	b.wait("sorted", `document.querySelector('#table th[aria-sort="ascending"]') !== null && document.getElementById('table-status').textContent.startsWith('Rows 1–20')`)
	t.Logf("the table sorted by value in %v", time.Since(start).Round(time.Millisecond))
	b.do("scroll to the map", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))

	// Pan: a mouse drag across the map over about a second while the page
	// records its frames; the longest frame says whether it stalled.
	b.do("record frames", chromedp.Evaluate[chromedp.Void](`(() => { window.mcFrames = []; let last = performance.now();
		const tick = (t) => { window.mcFrames.push(t - last); last = t; if (!window.mcStop) requestAnimationFrame(tick); };
		requestAnimationFrame(tick); })()`))
	rect := eval[[]float64](b, `(() => { const r = document.querySelector('#map canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	x, y := rect[0]+rect[2]*0.3, rect[1]+rect[3]*0.3
	steps := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent("mouseMoved", x, y), chromedp.MouseEvent("mousePressed", x, y, chromedp.ButtonLeft, chromedp.ClickCount(1))}
	for i := 1; i <= 30; i++ {
		steps = append(steps, chromedp.MouseEvent("mouseMoved", x+float64(i)*12, y+float64(i)*6, chromedp.ButtonLeft), chromedp.Sleep(33*time.Millisecond))
	}
	steps = append(steps, chromedp.MouseEvent("mouseReleased", x+360, y+180, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	b.do("pan", steps...)
	b.wait("the panned map idle", `document.getElementById('map').dataset.state === 'idle'`)
	// The frame of the idle and the next are among those recorded.
	seen := eval[int](b, `window.mcFrames.length`)
	b.wait("two frames more", fmt.Sprintf(`window.mcFrames.length >= %d`, seen+2))
	frames := eval[[]float64](b, `(() => { window.mcStop = true; return window.mcFrames.slice(1); })()`)
	longest, sum := 0.0, 0.0
	for _, f := range frames {
		longest, sum = max(longest, f), sum+f
	}
	t.Logf("pan: %d frames in %.0f ms, the longest %.0f ms; %d tiles asked for in all", len(frames), sum, longest, b.tiles.Load())
	b.screenshot("dataset-big")

	// The server's share: the tiles of the first view made anew (a new
	// server on the store: empty caches), timed one by one.
	ts.restart()
	id := strings.TrimPrefix(dsPath, "/datasets/")
	for _, z := range []int{2, 3} {
		start := time.Now()
		n := 0
		for x := 0; x < 1<<z; x++ {
			for y := 0; y < 1<<z; y++ {
				w := ts.get(fmt.Sprintf("/ogc/collections/%s/tiles/WebMercatorQuad/%d/%d/%d", id, z, y, x), "")
				if w.Code == 200 {
					n++
				}
			}
		}
		t.Logf("zoom %d: %d tiles with points made in %v (every tile of the zoom asked for)", z, n, time.Since(start).Round(time.Millisecond))
	}
}

// searchTitles are the titles of the results the search page shows.
func searchTitles(b *browserTest) []string {
	b.t.Helper()
	return eval[[]string](b, `[...document.querySelectorAll('#results li.entry h3')].map(h => h.textContent)`)
}

// apiTitles are the titles of the entries the API gives at path.
func apiTitles(t *testing.T, ts *testServer, path string) []string {
	t.Helper()
	res := decode[struct {
		Entries []struct {
			Title string `json:"title"`
		} `json:"entries"`
	}](t, must(t, ts.get(path, ""), 200))
	out := []string{}
	for _, e := range res.Entries {
		out = append(out, e.Title)
	}
	return out
}

// searchAndCompare waits for the search page's results, then checks they
// are the API's for the URL the page shows, whose query must contain want.
func searchAndCompare(t *testing.T, b *browserTest, ts *testServer, what string, want ...string) []string {
	t.Helper()
	b.wait(what, `/^(Results|No results)/.test(document.getElementById('results-status').textContent)`)
	p := apiPath(t, b, text(b, "#search-url"))
	u, err := url.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if k, v, _ := strings.Cut(w, "="); !strings.Contains(u.Query().Get(k), v) {
			t.Errorf("%s: the API URL %s lacks %s", what, p, w)
		}
	}
	got, fromAPI := searchTitles(b), apiTitles(t, ts, p)
	if fmt.Sprint(got) != fmt.Sprint(fromAPI) {
		t.Errorf("%s: the page shows %q, the API %q", what, got, fromAPI)
	}
	return got
}

// TestWebSearchPage: the search page's type, tag and owner filters and its
// box give the API's results; maps link to their page.
func TestWebSearchPage(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	body, ct := multipartBody(t, ncFiles("dataset"), map[string]string{"title": "North Carolina counties", "tags": "nc, counties"})
	must(t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body}), 201)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Paris+towns&tags=towns,europe", user: "bob", ctype: "text/csv",
		body: []byte("name,lat,lon\nParis,48.86,2.35\nVersailles,48.80,2.13\n")}), 201)
	must(t, ts.do(req{method: "POST", path: "/datasets.json?title=Lima+towns&tags=towns", user: "alice", ctype: "text/csv",
		body: []byte("name,lat,lon\nLima,-12.05,-77.04\n")}), 201)
	mapPath := ts.createMap(t, "alice", "title=Counties+map&basemap=Acetate&tags=counties&extent=-84.3,33.8,-75.4,36.6")

	b := browserOn(t, ts)
	b.load("search", chromedp.Navigate(b.url+"/app/search"))
	if got := searchAndCompare(t, b, ts, "everything"); len(got) != 4 {
		t.Errorf("everything: %q", got)
	}

	// Type: maps only, linking to their page.
	setField(b, "#type", "Map")
	b.load("maps only", chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	if got := searchAndCompare(t, b, ts, "maps", "model=Map"); len(got) != 1 || got[0] != "Counties map" {
		t.Errorf("maps: %q", got)
	}
	if href := eval[string](b, `document.querySelector('#results li.entry h3 a').getAttribute('href')`); href != "/app"+mapPath {
		t.Errorf("the map links to %q, want /app%s", href, mapPath)
	}

	// Tag: both kinds tagged counties.
	setField(b, "#type", "")
	setField(b, "#tag", "counties")
	b.load("tag", chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	if got := searchAndCompare(t, b, ts, "tag", "query=tag:counties"); len(got) != 2 {
		t.Errorf("tag counties: %q", got)
	}

	// Owner, with the tag: bob's towns only.
	setField(b, "#tag", "towns")
	setField(b, "#owner", "bob")
	b.load("owner", chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	if got := searchAndCompare(t, b, ts, "owner", "query=tag:towns", "query=user:bob"); len(got) != 1 || got[0] != "Paris towns" {
		t.Errorf("towns of bob: %q", got)
	}
	b.screenshot("search-filters")

	// A box typed: around France.
	setField(b, "#tag", "")
	setField(b, "#owner", "")
	b.do("open the area", chromedp.Evaluate[chromedp.Void](`document.getElementById('area').open = true`))
	for k, v := range map[string]string{"w": "-5", "s": "42", "e": "8", "n": "51"} {
		setField(b, "#sb-"+k, v)
	}
	b.load("box typed", chromedp.Click(chromedp.CSS(`#search-form button[type=submit]`)))
	if got := searchAndCompare(t, b, ts, "box typed", "bbox=-5,42,8,51"); len(got) != 1 || got[0] != "Paris towns" {
		t.Errorf("in France: %q", got)
	}

	// A box drawn on the map: the results are the API's for the box.
	b.load("anywhere", chromedp.Click(chromedp.ID("search-clear-box")))
	b.do("open the area", chromedp.Evaluate[chromedp.Void](`document.getElementById('area').open = true`))
	b.wait("the small map", `document.getElementById('search-map').dataset.state === 'idle'`)
	click(b, "#search-draw")
	rect := eval[[]float64](b, `(() => { const r = document.querySelector('#search-map canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	cx, cy := rect[0]+rect[2]/2, rect[1]+rect[3]/2
	b.load("box drawn", func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Void{}, chromedp.Do(ctx,
			chromedp.MouseEvent("mouseMoved", cx-200, cy-100),
			chromedp.MouseEvent("mousePressed", cx-200, cy-100, chromedp.ButtonLeft, chromedp.ClickCount(1)),
			chromedp.MouseEvent("mouseMoved", cx-50, cy, chromedp.ButtonLeft),
			chromedp.MouseEvent("mouseMoved", cx+30, cy+10, chromedp.ButtonLeft),
			chromedp.MouseEvent("mouseReleased", cx+30, cy+10, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	})
	got := searchAndCompare(t, b, ts, "box drawn", "bbox=,")
	box := eval[string](b, `new URLSearchParams(location.search).get('bbox')`)
	t.Logf("the box drawn: %s: %q", box, got)
	if len(strings.Split(box, ",")) != 4 {
		t.Errorf("the box drawn gave bbox %q", box)
	}
	b.wait("the box on the map", `document.getElementById('search-map').dataset.state === 'idle'`)
	b.screenshot("search-box")
	checkLabels(b)
	checkNoProblems(b)
}
