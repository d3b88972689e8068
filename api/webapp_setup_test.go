package api_test

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
)

// hostedNoticeShown is the JavaScript condition that the element of that
// id shows the hosted server's notice.
func hostedNoticeShown(id string) string {
	return `(() => { const n = document.getElementById(` + jsString(id) + `);
	  return !!n && !n.hidden && n.textContent.includes('viewed and downloaded by anyone'); })()`
}

// TestWebSetupInBrowser opens the set-up link of a server without an
// administrator: the page says the server is hosted and what that means,
// drops the token from the address bar, makes the administrator and lands
// on the home page signed in as them; the link is then over. As that
// administrator, the upload page and the sharing panels of a dataset and
// a map say that anyone may view and download what is uploaded, and a
// dataset's sharing offers edit or not.
func TestWebSetupInBrowser(t *testing.T) {
	ts, token := newSetupServer(t, func(c *api.Config) { c.BaseURL = "" })
	b := browserOn(t, ts)

	b.load("a page without the token", chromedp.Navigate(b.url+"/app/setup"))
	b.wait("asked for the link", `document.getElementById('setup-status').textContent.includes('set-up link') && document.getElementById('setup-form').hidden`)

	b.load("another page", chromedp.Navigate(b.url+"/")) // a fragment alone loads no page
	b.load("open the set-up link", chromedp.Navigate(b.url+"/app/setup#token="+token))
	b.wait("the set-up form", `!document.getElementById('setup-form').hidden`)
	if got := eval[string](b, `location.href`); got != b.url+"/app/setup" {
		t.Errorf("the address bar after the link: %s (the token stays in it)", got)
	}
	if mode := eval[string](b, `document.getElementById('mode-name').textContent`); mode != "hosted" {
		t.Errorf("the page says the mode is %q", mode)
	}
	b.wait("what hosted means", hostedNoticeShown("mode-hosted")+` && document.getElementById('mode-appliance').hidden && document.getElementById('mode-section').textContent.includes('--mode appliance')`)
	b.screenshot("setup")

	fillForm(b, [2]string{"login", "boss"}, [2]string{"password", "secret1"}, [2]string{"password_confirmation", "not-it"})
	b.do("submit a wrong confirmation", chromedp.Click(chromedp.ID("setup-submit")))
	b.wait("the API's message", `document.getElementById('setup-status').classList.contains('error') && document.getElementById('password-error').textContent.includes('confirmation')`)
	fillForm(b, [2]string{"password_confirmation", "secret1"})
	b.load("create the administrator", chromedp.Click(chromedp.ID("setup-submit")))
	b.wait("home, signed in as the administrator", `location.pathname === '/' && `+signedInAs("boss")+` && !!document.querySelector('header.site nav a[href="/app/groups"]')`)
	u, err := ts.svc.Users.FindUserByLogin(t.Context(), "boss")
	if err != nil || !u.Admin {
		t.Fatalf("boss in the store: %+v, %v", u, err)
	}

	b.load("the link again", chromedp.Navigate(b.url+"/app/setup#token="+token))
	b.wait("the set-up is over", `document.getElementById('setup-status').textContent.includes('has an administrator') && document.getElementById('setup-form').hidden`)

	b.load("the upload page", chromedp.Navigate(b.url+"/app/upload"))
	b.wait("the upload form", `!document.getElementById('upload-form').hidden`)
	b.wait("the hosted notice on the upload page", hostedNoticeShown("hosted-notice"))

	ds := ts.createCSV("?title=towns", "name,lat,lon\nAlpha,10,20\n") // alice's
	b.load("the dataset page", chromedp.Navigate(b.url+"/app"+ds))
	b.wait("the hosted notice in the sharing panel", hostedNoticeShown("hosted-notice-dataset"))
	if got := eval[[]string](b, `[...document.getElementById('share-everyone-dataset').options].map((o) => o.value)`); len(got) != 2 || got[0] != "download" || got[1] != "edit" {
		t.Errorf("a hosted dataset's everyone levels: %v, want download (as anyone) and edit", got)
	}
	m := ts.createMap(t, "alice", "title=T&basemap=Acetate&layers[][source]=finder:1")
	b.load("the map page", chromedp.Navigate(b.url+"/app"+m))
	b.wait("the hosted notice in the map's sharing panel", hostedNoticeShown("hosted-notice-map"))
	if n := eval[int](b, `document.getElementById('share-everyone-map').options.length`); n != 4 {
		t.Errorf("a map's everyone levels: %d, want all 4 (a map's sharing decides who sees it)", n)
	}
	b.checkNoProblems()
}

// TestWebHostedNoticeAppliance: on an appliance neither the upload page
// nor the sharing panel says that anyone may read what is uploaded, and
// the panel offers every level; the set-up page says the mode.
func TestWebHostedNoticeAppliance(t *testing.T) {
	b, ts := newAuthBrowserTest(t, func(c *api.Config) { c.Mode = mapcommons.ModeAppliance })
	b.load("the set-up page", chromedp.Navigate(b.url+"/app/setup"))
	b.wait("the mode", `document.getElementById('mode-name').textContent === 'appliance' && !document.getElementById('mode-appliance').hidden && document.getElementById('mode-hosted').hidden`)
	signInBrowser(b, "alice", "secret1")
	b.load("the upload page", chromedp.Navigate(b.url+"/app/upload"))
	b.wait("the upload form", `!document.getElementById('upload-form').hidden`)
	if eval[bool](b, hostedNoticeShown("hosted-notice")) {
		t.Error("an appliance's upload page says anyone may read uploads")
	}
	w := ts.do(req{method: "POST", path: "/datasets.json?title=towns", user: "alice", ctype: "text/csv", body: []byte("name,lat,lon\nAlpha,10,20\n")})
	must(t, w, 201)
	id := w.Header().Get("Location")
	id = id[len(base+"/datasets/") : len(id)-len(".json")]
	if _, err := strconv.Atoi(id); err != nil {
		t.Fatalf("Location %q", w.Header().Get("Location"))
	}
	b.load("the dataset page", chromedp.Navigate(b.url+"/app/datasets/"+id))
	b.wait("the sharing panel", `!!document.getElementById('share-everyone-dataset')`)
	if eval[bool](b, `!!document.querySelector('.hosted-notice:not([hidden])')`) {
		t.Error("an appliance's sharing panel says anyone may read the dataset")
	}
	if n := eval[int](b, `document.getElementById('share-everyone-dataset').options.length`); n != 4 {
		t.Errorf("an appliance dataset's everyone levels: %d, want 4", n)
	}
	b.checkNoProblems()
}
