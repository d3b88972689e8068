package api_test

// The thumbnails of the lists (home page, search results) in a real
// headless Chromium (see webapp_test.go): each dataset's and map's image
// from the server, at 2x on a HiDPI screen, and nothing broken where the
// visitor may not have the image.

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
)

// thumbState is what the page shows of a list entry's thumbnail.
type thumbState struct {
	Title   string
	Images  int    // img elements in the entry
	Broken  int    // of them, loaded or failed without a picture
	Natural int    // the first one's naturalWidth
	Src     string // its currentSrc
	Alt     string
	Lazy    string
	Empty   int // the empty boxes that stand in for an image
}

// thumbStates reads the thumbnails of the entries of list (#recent,
// #results) once every image of it has loaded or failed.
func thumbStates(b *browserTest, list string, n int) map[string]thumbState {
	b.t.Helper()
	b.wait("the entries", fmt.Sprintf(`document.querySelectorAll('%s li.entry').length === %d`, list, n))
	b.wait("the thumbnails loaded", fmt.Sprintf(`[...document.querySelectorAll('%s img')].every(i => i.complete && i.naturalWidth > 0)`, list))
	got := eval[[]thumbState](b, fmt.Sprintf(`[...document.querySelectorAll('%s li.entry')].map(li => {
		const imgs = [...li.querySelectorAll('img')], i = imgs[0];
		return {Title: li.querySelector('h3').textContent, Images: imgs.length,
			Broken: imgs.filter(i => !i.complete || i.naturalWidth === 0).length,
			Natural: i ? i.naturalWidth : 0, Src: i ? i.currentSrc : '', Alt: i ? i.getAttribute('alt') : '', Lazy: i ? i.loading : '',
			Empty: li.querySelectorAll('.thumb-none').length};
	})`, list))
	out := map[string]thumbState{}
	for _, s := range got {
		out[s.Title] = s
	}
	return out
}

// TestWebThumbnails: the home page shows the image of a public dataset
// and of a map; a dataset the visitor may view but not download shows no
// image (it would be refused), and an image the server refuses anyway
// leaves nothing broken; the search results show them too.
func TestWebThumbnails(t *testing.T) {
	// An appliance: a dataset shared for viewing is not downloaded.
	ts := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.Mode = mapcommons.ModeAppliance })
	share := func(path, rights string) {
		t.Helper()
		must(t, ts.do(req{method: "PUT", path: path + ".json", user: "alice", ctype: "application/json",
			body: []byte(`{"permissions":[{"group_id":"everyone","permissions":` + rights + `}]}`)}), 200)
	}
	nc := uploadNC(t, ts, "?title=North+Carolina+counties")
	share("/datasets/"+nc, `{"view":true,"download":true}`)
	share(createChoroplethMap(t, ts, "alice", nc), `{"view":true}`)
	viewOnly := ts.createCSV("?title=View+only+towns", "name,lat,lon\nAlpha,35.5,-79\n")
	share(viewOnly, `{"view":true}`)
	// Downloadable, but its image is refused (as a failing or expired
	// answer would be).
	refused := ts.createCSV("?title=Refused+towns", "name,lat,lon\nBeta,35.5,-78\n")
	share(refused, `{"view":true,"download":true}`)
	inner := ts.handler
	var askedViewOnly atomic.Int64
	ts.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == viewOnly+".png" {
			askedViewOnly.Add(1)
		}
		if r.URL.Path == refused+".png" {
			http.Error(w, `{"error":"refused"}`, http.StatusForbidden)
			return
		}
		inner.ServeHTTP(w, r)
	})
	b := browserOn(t, ts)

	check := func(where string, got map[string]thumbState, scale int) {
		t.Helper()
		if len(got) != 4 {
			t.Fatalf("%s: entries %v", where, got)
		}
		for _, title := range []string{"North Carolina counties", "Births 1974"} {
			g := got[title]
			if g.Images != 1 || g.Broken != 0 || g.Natural != 120 || g.Alt != "" || g.Lazy != "lazy" {
				t.Errorf("%s: %q's thumbnail %+v, want one image 120 pixels wide (at its density), alt \"\", lazy", where, title, g)
			}
			if want := "width=120&height=90"; !strings.Contains(g.Src, want) || strings.Contains(g.Src, "scale=") != (scale == 2) {
				t.Errorf("%s: %q's image is %s at scale %d", where, title, g.Src, scale)
			}
		}
		if g := got["North Carolina counties"]; !strings.Contains(g.Src, "/datasets/"+nc+".png?") {
			t.Errorf("%s: the counties' image is %s", where, g.Src)
		}
		if g := got["Births 1974"]; !strings.Contains(g.Src, "/maps/") {
			t.Errorf("%s: the map's image is %s", where, g.Src)
		}
		for _, title := range []string{"View only towns", "Refused towns"} {
			if g := got[title]; g.Images != 0 || g.Empty != 1 {
				t.Errorf("%s: %q shows %d images (%d broken), %d empty boxes: %+v, want only an empty box", where, title, g.Images, g.Broken, g.Empty, g)
			}
		}
	}

	b.do("home", chromedp.Navigate(b.url+"/"))
	check("home", thumbStates(b, "#recent", 4), 1)
	b.screenshot("home-thumbnails")
	// Nothing asked for the view-only dataset's image.
	if n := askedViewOnly.Load(); n != 0 {
		t.Errorf("the view-only dataset's image was asked for %d times", n)
	}

	// On a HiDPI screen, the 2x image.
	b.do("HiDPI", chromedp.EmulateViewport(1280, 800, chromedp.EmulateScale(2)), chromedp.Navigate(b.url+"/"))
	check("home at 2x", thumbStates(b, "#recent", 4), 2)
	b.do("back to 1x", chromedp.EmulateViewport(1280, 800))

	// The search results.
	b.do("search", chromedp.Navigate(b.url+"/app/search?q=towns"))
	got := thumbStates(b, "#results", 2)
	if g := got["View only towns"]; g.Images != 0 || got["Refused towns"].Images != 0 {
		t.Errorf("search: %v", got)
	}
	b.do("search", chromedp.Navigate(b.url+"/app/search?q=counties"))
	if g := thumbStates(b, "#results", 1)["North Carolina counties"]; g.Images != 1 || g.Natural != 120 {
		t.Errorf("search: the counties' thumbnail %+v", g)
	}
	b.screenshot("search-thumbnails")

	// The only problem the pages logged is the refused image's.
	b.mu.Lock()
	for _, p := range b.problems {
		if !strings.Contains(p, refused+".png") && !(strings.Contains(p, "/session.json") && strings.Contains(p, "401")) {
			t.Errorf("in the browser: %s", p)
		}
	}
	b.mu.Unlock()
}

// TestWebAccountLists: alice's account page lists her own datasets and
// maps, newest first, as cards with their thumbnails, her private dataset
// among them (the search's user:alice shows its owner her private
// objects); bob's lists none of them, and says he has none. An appliance:
// a dataset not shared is private (a hosted instance's are all public).
func TestWebAccountLists(t *testing.T) {
	ts := newServer(t, func(c *api.Config) { c.BaseURL = ""; c.Mode = mapcommons.ModeAppliance })
	nc := uploadNC(t, ts, "?title=Private+counties")
	mapPath := createChoroplethMap(t, ts, "alice", nc)
	// The API the page asks: alice finds both, bob neither (both private).
	search := "/search.json?query=user:alice&sort=created&order=descending&limit=12"
	type page struct {
		TotalResults int
		Entries      []struct{ Title, ID string }
	}
	if got := decode[page](t, must(t, ts.get(search, "alice"), 200)); got.TotalResults != 2 || len(got.Entries) != 2 ||
		got.Entries[0].Title != "Births 1974" || got.Entries[1].Title != "Private counties" {
		t.Errorf("alice's search of her own: %+v, want the map then the dataset", got)
	}
	if got := decode[page](t, must(t, ts.get(search, "bob"), 200)); got.TotalResults != 0 {
		t.Errorf("bob's search of alice's: %+v, want nothing (all private)", got)
	}
	b := browserOn(t, ts)

	signInAs(b, "alice", "secret1")
	b.do("alice's account", chromedp.Navigate(b.url+"/app/account"))
	got := thumbStates(b, "#mine", 2)
	for title, src := range map[string]string{"Private counties": "/datasets/" + nc + ".png?", "Births 1974": mapPath + ".png?"} {
		g := got[title]
		if g.Images != 1 || g.Broken != 0 || g.Natural <= 0 || g.Alt != "" || !strings.Contains(g.Src, src) {
			t.Errorf("alice's account: %q's card %+v, want its thumbnail %s… loaded", title, g, src)
		}
	}
	if order := eval[[]string](b, `[...document.querySelectorAll('#mine li.entry h3')].map((h) => h.textContent)`); strings.Join(order, "|") != "Births 1974|Private counties" {
		t.Errorf("alice's account lists %v, want the newest first", order)
	}
	// All of them are listed: no link to more, the one there is names
	// her search.
	if more := eval[[]any](b, `[document.getElementById('mine-more').getAttribute('href'), document.getElementById('mine-more').parentElement.hidden,
	  document.getElementById('mine-status').textContent]`); fmt.Sprint(more) != "[/app/search?q=user%3Aalice true ]" {
		t.Errorf("alice's account: the link to more, hidden, the status: %v", more)
	}
	b.screenshot("account-lists")
	// Past twelve, the page lists the newest twelve and links to the rest.
	for i := 1; i <= 11; i++ {
		ts.createCSV(fmt.Sprintf("?title=Towns+%d", i), "name,lat,lon\nAlpha,35.5,-79\n")
	}
	b.do("alice's account again", chromedp.Navigate(b.url+"/app/account"))
	b.wait("the newest twelve", `document.querySelectorAll('#mine li.entry').length === 12 && !document.getElementById('mine-more').parentElement.hidden`)
	if first := eval[string](b, `document.querySelector('#mine li.entry h3').textContent`); first != "Towns 11" {
		t.Errorf("alice's account lists %q first, want the newest, Towns 11", first)
	}
	if more := eval[string](b, `document.getElementById('mine-more').textContent`); more != "All 13 of your datasets and maps" {
		t.Errorf("the link to the rest says %q", more)
	}

	signInAs(b, "bob", "secret1")
	b.do("bob's account", chromedp.Navigate(b.url+"/app/account"))
	b.wait("bob's empty list", `/no datasets or maps yet/.test(document.getElementById('mine-status').textContent)`)
	if n := eval[float64](b, `document.querySelectorAll('#mine li.entry').length`); n != 0 || strings.Contains(eval[string](b, `document.body.textContent`), "Private counties") {
		t.Errorf("bob's account lists %v entries, or alice's private dataset", n)
	}
	b.checkNoProblems()
}
