package api_test

// The web application end to end, as people use it, in one headless
// Chromium: a new user signs up, signs out and in again, uploads a
// shapefile watching the progress bar, sees the counties drawn, filters
// them, makes a choropleth map whose legend is the API's classes, shares
// the map with a group only (picked by its name), and downloads the data as a GeoPackage that
// GDAL opens; a member of the group opens the map, an outsider cannot.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/internal/gdaltest"
)

// createUserAPI signs a user up through the API (password secret1).
func createUserAPI(t *testing.T, ts *testServer, login string) {
	t.Helper()
	form := url.Values{"user[login]": {login}, "user[password]": {"secret1"}, "user[password_confirmation]": {"secret1"},
		"user[email]": {login + "@example.com"}}
	must(t, ts.do(req{method: "POST", path: "/users.json", ctype: "application/x-www-form-urlencoded", body: []byte(form.Encode())}), 201)
}

// downloadInBrowser clicks the link matched by selector and returns the
// file the browser saved.
func downloadInBrowser(b *browserTest, selector string) string {
	b.t.Helper()
	dir := b.t.TempDir()
	done := make(chan string, 1)
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	go func() {
		for ev, err := range progress {
			if err != nil {
				done <- ""
				return
			}
			switch ev.State {
			case cdpbrowser.DownloadProgressStateCompleted:
				done <- filepath.Join(dir, ev.GUID)
				return
			case cdpbrowser.DownloadProgressStateCanceled:
				done <- ""
				return
			}
		}
	}()
	events := true
	b.do("allow downloads", func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events})
		return chromedp.Void{}, err
	})
	click(b, selector)
	select {
	case file := <-done:
		if file == "" {
			b.t.Fatalf("downloading %s: canceled or failed", selector)
		}
		return file
	case <-time.After(60 * time.Second):
		b.t.Fatalf("downloading %s: no end within a minute", selector)
	}
	return ""
}

// TestWebEndToEnd is the end-to-end scenario.
func TestWebEndToEnd(t *testing.T) {
	// An appliance: a team's own server, where owners share their maps.
	ts := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.Mode = mapcommons.ModeAppliance })
	createUserAPI(t, ts, "dave") // will be in the group
	createUserAPI(t, ts, "erin") // will not
	b := browserOn(t, ts)

	// Sign up, sign out, sign in.
	const password = "north carolina 1974"
	signUpBrowser(b, "carol", "carol@example.com", password)
	b.screenshot("e2e-signed-up")
	signOutBrowser(b)
	signInBrowser(b, "carol", password)

	// Upload the counties (a shapefile), the transfer slowed down so that
	// the progress bar is seen between its ends.
	nc := ncFiles("dataset")
	throttleUpload(b, 40_000)
	id := uploadInBrowser(b, "Counties of North Carolina", nc["dataset[shp]"], nc["dataset[shx]"], nc["dataset[dbf]"], nc["dataset[prj]"])
	throttleUpload(b, -1)
	var seen [][2]float64
	if err := json.Unmarshal([]byte(eval[string](b, `sessionStorage.progressLog`)), &seen); err != nil || len(seen) == 0 {
		t.Fatalf("no progress seen: %v", err)
	}
	between := 0
	for _, v := range seen {
		if v[0] > 0 && v[0] < v[1] {
			between++
		}
	}
	if last := seen[len(seen)-1]; last[0] != last[1] || last[1] < 90_000 || between == 0 {
		t.Errorf("the transfer bar went %v", seen)
	}
	dsPath := "/datasets/" + strconv.FormatInt(id, 10)
	if doc := datasetDoc(t, ts, dsPath, "admin"); doc["feature_count"] != 100.0 || doc["contributor"] != "carol" {
		t.Fatalf("the upload made %v features of %v", doc["feature_count"], doc["contributor"])
	}

	// The counties drawn (the canvas, not the DOM).
	b.wait("the map idle", `document.getElementById('map').dataset.state === 'idle'`)
	b.wait("the table", `document.getElementById('table-status').textContent === 'Rows 1–20 of 100'`)
	orange0, _, total := mapColours(b)
	if orange0 < total/20 {
		t.Fatalf("the counties cover %d of %d pixels", orange0, total)
	}
	b.screenshot("e2e-dataset")

	// An attribute filter: the table and the map change, as the API says.
	click(b, "#add-filter")
	setField(b, "#filters .filter-row:last-child .f-attr", "BIR74")
	setField(b, "#filters .filter-row:last-child .f-op", "min")
	setField(b, "#filters .filter-row:last-child .f-val", "10000")
	click(b, "#run-query")
	b.wait("the query's count", `/^[\d,]+ features? match/.test(document.getElementById('query-status').textContent)`)
	waitMapQuery(b)
	n := statusCount(t, text(b, "#query-status"))
	matching := decode[[]map[string]any](t, must(t, ts.get(dsPath+"/features.json?filter[BIR74][][min]=10000&limit=100", "admin"), 200))
	if n != len(matching) || n == 0 || n >= 100 {
		t.Errorf("the page says %d counties match, the API %d", n, len(matching))
	}
	b.wait("the table of the query", fmt.Sprintf(`document.getElementById('table-status').textContent.startsWith('Rows 1–%d of %d')`, min(n, 20), n))
	orange1, purple1, _ := mapColours(b)
	if purple1 == 0 || orange1 >= orange0 {
		t.Errorf("the map did not change: orange %d → %d, purple %d", orange0, orange1, purple1)
	}
	b.screenshot("e2e-filter")

	// A choropleth map of births in the editor: its legend is the API's.
	b.load("the editor", chromedp.Navigate(b.url+"/app/editor"))
	b.wait("the editor's form", `!document.getElementById('editor').hidden && document.getElementById('map-basemap').options.length > 0`)
	b.do("title", chromedp.SendKeys(chromedp.ID("map-title"), "Births in North Carolina, 1974"))
	b.do("create", chromedp.Click(chromedp.ID("save")))
	b.wait("the map made", `/^\/app\/maps\/\d+\/edit$/.test(location.pathname) && document.getElementById('map').dataset.state === 'idle'`)
	mapPath := strings.TrimSuffix(strings.TrimPrefix(eval[string](b, `location.pathname`), "/app"), "/edit")
	b.do("search", chromedp.SendKeys(chromedp.ID("add-q"), "Counties\n"))
	ds := strconv.FormatInt(id, 10)
	b.wait("found", `document.querySelector('#add-results button[data-dataset="`+ds+`"]') !== null`)
	b.do("add", chromedp.Click(chromedp.CSS(`#add-results button[data-dataset="`+ds+`"]`)))
	b.wait("the layer added", `document.querySelectorAll('#legend li.legend-layer').length === 1 && document.getElementById('style-attribute') !== null`)
	editorIdle(b)
	setField(b, "#style-type", "CHOROPLETH")
	editorIdle(b)
	setField(b, "#style-attribute", "BIR74")
	editorIdle(b)
	b.do("pick a ramp", chromedp.Click(chromedp.CSS(`input[name=ramp][value="White-Blue"]`)))
	editorIdle(b)
	setField(b, "#style-fill-opacity", "1") // opaque: the drawn pixels are the classes' colours
	editorIdle(b)
	b.do("save", chromedp.Click(chromedp.ID("save")))
	b.wait("saved", `document.getElementById('editor-status').textContent === 'Saved.'`)
	b.load("the map page", chromedp.Navigate(b.url+"/app"+mapPath))
	waitMap(b)
	legend, want := legendClasses(b, 0), apiClasses(t, ts, mapPath, "admin", 0)
	if len(want) < 3 || fmt.Sprint(legend) != fmt.Sprint(want) {
		t.Errorf("the legend %v, the API's classes %v", legend, want)
	}
	colours := make([]string, len(want))
	for i, c := range want {
		colours[i] = c.Color
	}
	px := colorPixels(canvasImage(b, "e2e-choropleth"), colours)
	for _, c := range colours {
		if px[c] < 200 {
			t.Errorf("class colour %s on %d pixels: %v", c, px[c], px)
		}
	}
	b.screenshot("e2e-map")

	// Share the map with a group only, picked by its name: an
	// administrator makes the group (dave and carol in it) and another
	// carol is not in; carol shares through the map page's panel, which
	// offers her own group's name alone.
	signOutBrowser(b)
	signInBrowser(b, "admin", "secret1")
	group := createGroupInBrowser(b, "Readers", "dave", "carol")
	createGroupInBrowser(b, "Auditors")
	signOutBrowser(b)
	signInBrowser(b, "carol", password)
	b.load("the map page", chromedp.Navigate(b.url+"/app"+mapPath))
	b.wait("the sharing panel", `document.querySelector('#share-panel .share-save') !== null`)
	if got := groupChoices(b, "#share-panel"); !slices.Equal(got, []string{"Readers"}) {
		t.Errorf("carol may pick the groups %q, want her own, Readers", got)
	}
	setField(b, "#share-panel #share-everyone-map", "none")
	addGroupByTyping(b, "#share-panel", "#share-group-map", "Readers", group)
	setField(b, `#share-panel tr[data-group="`+group+`"] select`, "view")
	click(b, "#share-panel .share-save")
	b.wait("shared", `document.querySelector('#share-panel .share-status').textContent === 'Sharing saved.'`)
	b.screenshot("e2e-shared")
	perms := mapDoc(t, ts, mapPath, "admin")["permissions"]
	if got := fmt.Sprint(perms); !strings.Contains(got, "group_id:"+group) || strings.Contains(got, "everyone") {
		t.Errorf("the map's sharing list: %v", got)
	}
	// Opened again, the panel lists the group by its name.
	b.load("the map page again", chromedp.Navigate(b.url+"/app"+mapPath))
	b.wait("the group's row", `document.querySelector('#share-panel tr[data-group="`+group+`"]') !== null`)
	if got := text(b, `#share-panel tr[data-group="`+group+`"] th`); got != "Readers" {
		t.Errorf("the map's panel lists the group as %q", got)
	}

	// The data too, for the group to see the map's layer.
	b.load("the dataset page", chromedp.Navigate(b.url+"/app"+dsPath))
	b.wait("the dataset's sharing panel", `document.querySelector('#share .share-save') !== null`)
	setField(b, "#share #share-everyone-dataset", "none")
	addGroupByTyping(b, "#share", "#share-group-dataset", "readers", group) // any case
	setField(b, `#share tr[data-group="`+group+`"] select`, "download")     // its features, not only its description
	click(b, "#share .share-save")
	b.wait("shared", `document.querySelector('#share .share-status').textContent === 'Sharing saved.'`)
	b.wait("the panel read again", `document.querySelector('#share tr[data-group="`+group+`"] th')?.textContent === 'Readers'`)

	// Download the data as a GeoPackage: GDAL opens it.
	b.wait("the downloads", `document.querySelector('#downloads a[href$=".gpkg"]') !== null`)
	file := downloadInBrowser(b, `#downloads a[href$=".gpkg"]`)
	head := make([]byte, 16)
	if f, err := os.Open(file); err != nil {
		t.Fatal(err)
	} else {
		f.Read(head)
		f.Close()
	}
	if string(head) != "SQLite format 3\x00" {
		t.Errorf("the download is no GeoPackage: %q", head)
	}
	if _, err := exec.LookPath("ogrinfo"); err == nil || os.Getenv("MAPCOMMONS_REQUIRE_GDAL") == "1" {
		gpkg := file + ".gpkg" // GDAL goes by the extension
		if err := os.Rename(file, gpkg); err != nil {
			t.Fatal(err)
		}
		if info := gdaltest.Ogrinfo(t, gpkg); info.Driver != "GPKG" || len(info.Layers) != 1 || info.Layers[0].Count != 100 {
			t.Errorf("ogrinfo reads the download as %s, layers %+v", info.Driver, info.Layers)
		}
	}

	// dave, in the group, opens the map; erin cannot (nor can a visitor).
	signOutBrowser(b)
	signInBrowser(b, "dave", "secret1")
	b.load("the map as dave", chromedp.Navigate(b.url+"/app"+mapPath))
	waitMap(b)
	if got := text(b, "#title"); got != "Births in North Carolina, 1974" {
		t.Errorf("dave sees the map titled %q", got)
	}
	if got := legendClasses(b, 0); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dave's legend %v, the API's %v", got, want)
	}
	b.screenshot("e2e-member")
	// So far no page logged an error; erin's map page logs its 404.
	checkNoProblems(b)
	b.mu.Lock()
	b.problems = nil
	b.mu.Unlock()
	signOutBrowser(b)
	signInBrowser(b, "erin", "secret1")
	b.load("the map as erin", chromedp.Navigate(b.url+"/app"+mapPath))
	b.wait("not found", `document.getElementById('title').textContent === 'Map not found'`)
	if got := text(b, "#map-status"); strings.Contains(got, "Births") {
		t.Errorf("erin is told of the map: %q", got)
	}
	b.screenshot("e2e-outsider")
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.problems {
		if !strings.Contains(p, mapPath+".json") || !strings.Contains(p, "404") {
			t.Errorf("in the browser: %s", p)
		}
	}
}
