package api_test

// The dataset page's addresses for a GIS, the numbers as a person reads
// them, and the search results as cards with their footprints on the
// search map, in a real headless Chromium (see webapp_test.go).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
)

// manyPoints is a CSV of n points in a grid from (lon, lat), 0.01° apart.
func manyPoints(n int, lon, lat float64) string {
	var b strings.Builder
	b.WriteString("name,lat,lon\n")
	for i := range n {
		fmt.Fprintf(&b, "p%d,%.4f,%.4f\n", i, lat+float64(i%40)*0.01, lon+float64(i/40)*0.01)
	}
	return b.String()
}

// TestWebGISURLs: the dataset page lists the OGC API – Features landing
// page and collection, the TileJSON, the WMS capabilities and the map
// tiles' template, each an absolute URL of this server that answers (the
// WMS listing the layer named beside it), with QGIS's way to open it; a
// copy button puts its URL on the clipboard and says so, and where the
// clipboard fails selects the URL instead; the feature count reads
// "1,200".
func TestWebGISURLs(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	ds := ts.createCSV("?title=Many+towns", manyPoints(1200, -79, 35))
	id := strings.TrimPrefix(ds, "/datasets/")
	b := browserOn(t, ts)
	b.do("grant the clipboard", func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.Call(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: cdpbrowser.PermissionSettingGranted, Origin: b.url}); err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, nil
	})
	b.do("the dataset", chromedp.Navigate(b.url+"/app"+ds))
	b.wait("the addresses", `document.querySelectorAll('#gis-urls button.copy').length === 5`)

	type entry struct{ Key, Label, QGIS, Layer string }
	entries := eval[[]entry](b, `[...document.querySelectorAll('#gis-urls dd')].map(dd => ({Key: dd.dataset.gis,
		Label: dd.previousElementSibling.textContent, QGIS: dd.querySelector('.qgis').textContent,
		Layer: dd.querySelector('.hint code')?.textContent ?? ''}))`)
	if keys := func() (k []string) {
		for _, e := range entries {
			k = append(k, e.Key)
		}
		return
	}(); !slices.Equal(keys, []string{"features", "tilejson", "wms", "maptiles"}) {
		t.Fatalf("the services listed: %v", keys)
	}
	name := mapcommons.ReadableName("Many towns", mustInt(t, id))
	for _, e := range entries {
		if !strings.HasPrefix(e.QGIS, "QGIS: ") || !strings.Contains(e.QGIS, "▸") {
			t.Errorf("%s: no way to open it in QGIS: %q", e.Key, e.QGIS)
		}
		if (e.Key == "features" || e.Key == "wms") && e.Layer != name {
			t.Errorf("%s: the layer %q, want %q", e.Key, e.Layer, name)
		}
	}

	urls := eval[[]string](b, `[...document.querySelectorAll('#gis-urls button.copy')].map(b => b.dataset.url)`)
	want := []string{b.url + "/ogc", b.url + "/ogc/collections/" + id,
		b.url + "/ogc/collections/" + id + "/tiles/WebMercatorQuad/tilejson.json",
		b.url + "/wms?SERVICE=WMS&REQUEST=GetCapabilities",
		b.url + "/ogc/collections/" + id + "/map/tiles/WebMercatorQuad/{z}/{y}/{x}"}
	if !slices.Equal(urls, want) {
		t.Errorf("the URLs\n%q\nwant\n%q", urls, want)
	}
	shown := eval[[]string](b, `[...document.querySelectorAll('#gis-urls code.gis-url')].map(c => c.textContent)`)
	if !slices.Equal(shown, urls) {
		t.Errorf("the URLs shown %q, their buttons' %q", shown, urls)
	}
	// Each answers, fetched as a GIS would (the tiles' template at its
	// zoom 0 tile).
	for _, u := range urls {
		u = strings.NewReplacer("{z}", "0", "{y}", "0", "{x}", "0").Replace(u)
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Errorf("%s: %d %s", u, res.StatusCode, body)
		}
		if strings.Contains(u, "/wms") && !strings.Contains(string(body), "<Name>"+name+"</Name>") {
			t.Errorf("the WMS capabilities list no layer %s", name)
		}
		if strings.Contains(u, "/map/tiles/") && res.Header.Get("Content-Type") != "image/png" {
			t.Errorf("%s: %s", u, res.Header.Get("Content-Type"))
		}
	}

	// The count as a person reads it.
	if got := text(b, `[data-fact="Features"]`); got != "1,200" {
		t.Errorf("the features: %q, want 1,200", got)
	}
	b.wait("the table's rows", `/of 1,200$/.test(document.getElementById('table-status').textContent)`)

	// Copying puts the URL on the clipboard and says so.
	click(b, `#gis-urls dd[data-gis="tilejson"] button.copy`)
	b.wait("copied", `document.getElementById('gis-status').textContent.startsWith('Copied')`)
	if got := evalAsync[string](b, `navigator.clipboard.readText()`); got != want[2] {
		t.Errorf("the clipboard holds %q, want %q", got, want[2])
	}
	if got := eval[string](b, `document.querySelector('#gis-urls dd[data-gis="tilejson"] button.copy').textContent`); got != "Copy the Vector tiles (TileJSON) URL" {
		t.Errorf("the copy button's name: %q", got)
	}
	// Without a clipboard, the URL is selected for the keys.
	b.do("no clipboard", chromedp.Evaluate[chromedp.Void](`navigator.clipboard.writeText = () => Promise.reject(new Error('denied'))`))
	click(b, `#gis-urls dd[data-gis="wms"] button.copy`)
	b.wait("selected", `document.getElementById('gis-status').textContent.startsWith('Selected')`)
	if got := eval[string](b, `getSelection().toString()`); got != want[3] {
		t.Errorf("selected %q, want %q", got, want[3])
	}
	b.screenshot("dataset-gis-urls")
	b.checkNoProblems()
}

// TestWebSearchCards: the search results are cards, each its thumbnail,
// title, kind and count of features ("1,200 features"); their extents
// are outlined on the search map, and a card focused or hovered lights
// its own footprint.
func TestWebSearchCards(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = "" })
	ts.createCSV("?title=Western+towns&tags=towns", manyPoints(1200, -100, 40))
	ts.createCSV("?title=Eastern+towns&tags=towns", manyPoints(20, 10, 50))
	b := browserOn(t, ts)
	b.do("search", chromedp.Navigate(b.url+"/app/search?q=towns"))
	got := thumbStates(b, "#results", 2)
	for _, title := range []string{"Western towns", "Eastern towns"} {
		if g := got[title]; g.Images != 1 || g.Broken != 0 || g.Natural != 120 {
			t.Errorf("%q's thumbnail %+v", title, g)
		}
	}
	type card struct{ Title, Kind, Count, Tags string }
	cards := eval[[]card](b, `[...document.querySelectorAll('#results li.entry.card')].map(li => ({Title: li.querySelector('h3').textContent,
		Kind: li.querySelector('.kind').textContent, Count: li.querySelector('.count')?.textContent ?? '',
		Tags: [...li.querySelectorAll('ul.tags a')].map(a => a.textContent).join(',')}))`)
	counts := map[string]string{}
	for _, c := range cards {
		counts[c.Title] = c.Count
		if c.Kind != "Dataset" || c.Tags != "towns" {
			t.Errorf("card %+v", c)
		}
	}
	if counts["Western towns"] != " · 1,200 features" || counts["Eastern towns"] != " · 20 features" {
		t.Errorf("the cards' counts: %q", counts)
	}

	// The map opens by itself on a wide screen and outlines both.
	b.wait("the footprints drawn", `document.getElementById('search-map').dataset.footprints === '2' && document.getElementById('search-map').dataset.state === 'idle'`)
	drawn := func() []string {
		return eval[[]string](b, `[...new Set(window.mcMap.queryRenderedFeatures({layers: ['footprints-line']}).map(f => f.properties.title))].sort()`)
	}
	if got := drawn(); !slices.Equal(got, []string{"Eastern towns", "Western towns"}) {
		t.Errorf("the footprints drawn: %v", got)
	}
	// Focusing a card's link lights its footprint and the card (the page
	// has the focus as a person's window would: a headless one has none).
	b.do("focus the page", func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return chromedp.Void{}, err
	})
	b.do("focus the first card", chromedp.Focus(chromedp.CSS(`#results li.entry[data-entry="0"] h3 a`)))
	lit := eval[[]bool](b, `[0, 1].map(i => !!window.mcMap.getFeatureState({source: 'footprints', id: i}).lit)`)
	if !lit[0] || lit[1] {
		t.Errorf("lit after focusing the first card: %v", lit)
	}
	if !eval[bool](b, `document.querySelector('#results li.entry[data-entry="0"]').classList.contains('highlight')`) {
		t.Error("the focused card is not highlighted")
	}
	b.screenshot("search-cards")
	// At a phone's width, one card a row and nothing sideways.
	b.do("phone", chromedp.EmulateViewport(375, 800), chromedp.Navigate(b.url+"/app/search?q=towns"))
	thumbStates(b, "#results", 2)
	if w := eval[int](b, `document.documentElement.scrollWidth`); w > 375 {
		t.Errorf("the page is %d pixels wide at 375", w)
	}
	b.screenshot("search-cards-375")
	b.checkNoProblems()
}

// TestWebGISURLsAppliance: on an appliance, the page of a dataset not
// shared with everyone says that QGIS needs the user's credentials (and
// the addresses answer them: Basic); a dataset anyone may view says
// nothing of it.
func TestWebGISURLsAppliance(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.Mode = mapcommons.ModeAppliance })
	private := ts.createCSV("?title=Private+towns", manyPoints(10, -79, 35))
	public := ts.createCSV("?title=Public+towns", manyPoints(10, -78, 35))
	must(t, ts.do(req{method: "PUT", path: public + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"permissions":[{"group_id":"everyone","permissions":{"view":true,"download":true}}]}`)}), 200)
	id := strings.TrimPrefix(private, "/datasets/")
	for _, p := range []string{"/ogc/collections/" + id, "/ogc/collections/" + id + "/tiles/WebMercatorQuad/tilejson.json"} {
		must(t, ts.get(p, "alice"), 200)
	}
	b := browserOn(t, ts)
	signInViaAPI(b, "alice", "secret1")
	b.do("the private dataset", chromedp.Navigate(b.url+"/app"+private))
	b.wait("the credentials' note", `!document.getElementById('gis-auth').hidden`)
	if got := text(b, "#gis-auth"); !strings.Contains(got, "Authentication tab, Basic") {
		t.Errorf("the note: %q", got)
	}
	b.do("the public dataset", chromedp.Navigate(b.url+"/app"+public))
	b.wait("the addresses", `document.querySelectorAll('#gis-urls button.copy').length === 5 && document.getElementById('title').textContent === 'Public towns' && document.getElementById('gis-auth').dataset.checked === 'true'`)
	if !eval[bool](b, `document.getElementById('gis-auth').hidden`) {
		t.Errorf("a public dataset's page asks for credentials: %q", text(b, "#gis-auth"))
	}
	b.checkNoProblems()
}
