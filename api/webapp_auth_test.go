package api_test

// The web application's account pages in headless Chromium (see
// webapp_test.go for the browser): signing up, in and out through the
// forms, the CSRF token a session's changes need, the upload page (a
// shapefile watched through its progress bar to its map; a bad file and
// the API's message), the account page and the groups page. The helpers
// signUpBrowser, signInBrowser, signOutBrowser, uploadInBrowser,
// createGroupInBrowser and throttleUpload are for other browser tests too.

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
)

// newAuthBrowserTest is a browser on a fresh test server (admin, alice and
// bob, no dataset) with sign-up open.
func newAuthBrowserTest(t *testing.T, mutate ...func(*api.Config)) (*browserTest, *testServer) {
	ts := newServer(t, append([]func(*api.Config){func(c *api.Config) { c.BaseURL = "" }}, mutate...)...)
	return browserOn(t, ts), ts
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string { return strconv.Quote(s) }

// signedInAs is the JavaScript condition that the header shows login
// signed in.
func signedInAs(login string) string {
	return `document.querySelector('header.site nav ul')?.dataset.signedIn === ` + jsString(login) +
		` && document.getElementById('who')?.textContent.includes(` + jsString(login) + `)`
}

// fillForm types values into the fields of the page, by id, replacing
// what they held.
func fillForm(b *browserTest, fields ...[2]string) {
	b.t.Helper()
	for _, f := range fields {
		b.do("fill #"+f[0], chromedp.Evaluate[chromedp.Void](`document.getElementById(`+jsString(f[0])+`).value = ''`),
			chromedp.SendKeys(chromedp.ID(f[0]), f[1]))
	}
}

// signUpBrowser signs up a new user through the sign-up form (login,
// e-mail, password twice), which signs them in, and waits for the home
// page showing them in the header.
func signUpBrowser(b *browserTest, login, email, password string) {
	b.t.Helper()
	b.load("open the sign-up page", chromedp.Navigate(b.url+"/app/signup"))
	fillForm(b, [2]string{"login", login}, [2]string{"email", email}, [2]string{"password", password}, [2]string{"password_confirmation", password})
	b.load("sign up", chromedp.Click(chromedp.ID("signup-submit")))
	b.wait("signed up and in", `location.pathname === '/' && `+signedInAs(login))
}

// signInBrowser signs in through the sign-in form and waits until the
// header shows login (on the home page).
func signInBrowser(b *browserTest, login, password string) {
	b.t.Helper()
	b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin"))
	fillForm(b, [2]string{"login", login}, [2]string{"password", password})
	b.load("sign in", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("signed in as "+login, signedInAs(login))
}

// signOutBrowser signs out with the header's button and waits for the home
// page of a visitor.
func signOutBrowser(b *browserTest) {
	b.t.Helper()
	b.wait("the sign-out button", `document.getElementById('signout') !== null`)
	b.load("sign out", chromedp.Click(chromedp.ID("signout")))
	b.wait("signed out", `location.pathname === '/' && document.querySelector('header.site nav a[href^="/app/signin"]') !== null && document.getElementById('signout') === null`)
}

// uploadInBrowser uploads files (paths on this machine) with the given
// title through the upload page's file input, as the signed-in user, and
// waits for the new dataset's page; it returns the dataset's id. The
// progress bar's values seen are left in sessionStorage.progressLog.
func uploadInBrowser(b *browserTest, title string, files ...string) int64 {
	b.t.Helper()
	startUpload(b, title, files...)
	b.wait("the dataset page", `/^\/app\/datasets\/\d+$/.test(location.pathname)`)
	id, err := strconv.ParseInt(strings.TrimPrefix(eval[string](b, `location.pathname`), "/app/datasets/"), 10, 64)
	if err != nil {
		b.t.Fatal(err)
	}
	return id
}

// createGroupInBrowser creates a group with members on the groups page,
// as the signed-in administrator, and returns its id.
func createGroupInBrowser(b *browserTest, name string, members ...string) string {
	b.t.Helper()
	b.load("the groups page", chromedp.Navigate(b.url+"/app/groups"))
	b.wait("the groups", `!document.getElementById('groups-admin').hidden`)
	before := eval[int](b, `document.querySelectorAll('#group-list li[data-group]').length`)
	fillForm(b, [2]string{"group-name", name})
	b.do("create the group "+name, chromedp.Click(chromedp.ID("group-create-submit")))
	b.wait("the group listed", fmt.Sprintf(`document.querySelectorAll('#group-list li[data-group]').length === %d`, before+1))
	id := eval[string](b, `[...document.querySelectorAll('#group-list li[data-group]')].find(li => li.querySelector('h3').textContent === `+jsString(name)+`).dataset.group`)
	for _, login := range members {
		fillForm(b, [2]string{"group-" + id + "-login", login})
		b.do("add "+login+" with the Enter key", chromedp.SendKeys(chromedp.ID("group-"+id+"-login"), "\r"))
		b.wait("added "+login, `document.getElementById('groups-status').textContent === `+jsString(login+" is now a member of "+name+"."))
	}
	return id
}

// startUpload opens the upload page, chooses the files, fills in the
// title, records the transfer bar's values in sessionStorage.progressLog
// and sends the form.
func startUpload(b *browserTest, title string, files ...string) {
	b.t.Helper()
	abs := make([]string, len(files))
	for i, f := range files {
		p, err := filepath.Abs(f)
		if err != nil {
			b.t.Fatal(err)
		}
		abs[i] = p
	}
	b.load("open the upload page", chromedp.Navigate(b.url+"/app/upload"))
	b.wait("the upload form", `document.getElementById('upload-form') && !document.getElementById('upload-form').hidden`)
	b.do("choose the files", chromedp.SetUploadFiles(chromedp.ID("files"), abs))
	b.wait("the files listed", fmt.Sprintf(`document.querySelectorAll('#file-list li').length === %d`, len(files)))
	if title != "" {
		fillForm(b, [2]string{"title-field", title})
	}
	b.do("watch the progress bar", chromedp.Evaluate[chromedp.Void](`(() => {
		sessionStorage.progressLog = '[]';
		const bar = document.getElementById('transfer');
		new MutationObserver(() => {
			const log = JSON.parse(sessionStorage.progressLog);
			log.push([bar.value, bar.max]);
			sessionStorage.progressLog = JSON.stringify(log);
		}).observe(bar, { attributes: true, attributeFilter: ['value', 'max'] });
	})()`))
	b.do("send", chromedp.Click(chromedp.ID("upload-submit")))
}

// throttleUpload makes the browser send its uploads (POST /datasets.json)
// at most bytesPerSecond, so that a small upload's progress can be watched.
func throttleUpload(b *browserTest, bytesPerSecond float64) {
	b.t.Helper()
	b.do("throttle", func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return chromedp.Void{}, err
		}
		_, err := cdp.Call(ctx, t, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{URLPattern: b.url + "/datasets.json", DownloadThroughput: -1, UploadThroughput: bytesPerSecond}}})
		return chromedp.Void{}, err
	})
}

// evalAsync evaluates a JavaScript expression whose value is a promise,
// and decodes what it resolves to.
func evalAsync[T any](b *browserTest, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// statusText is the text of the element with the id.
func statusText(b *browserTest, id string) string {
	b.t.Helper()
	return eval[string](b, `document.getElementById(`+jsString(id)+`).textContent`)
}

// TestWebAuthInBrowser signs up, out and in through the forms: a wrong
// password shows the API's message, the right one the login in the
// header; a page's change without the CSRF token is refused; next= goes
// only to a path of this site.
func TestWebAuthInBrowser(t *testing.T) {
	b, _ := newAuthBrowserTest(t)

	// A visitor's header: sign in and sign up.
	b.load("home", chromedp.Navigate(b.url+"/"))
	b.wait("the visitor's header", `document.querySelector('header.site nav a[href^="/app/signin"]') !== null`)
	if eval[bool](b, `document.getElementById('signout') !== null`) {
		t.Error("a visitor has a sign-out button")
	}

	b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin"))
	b.screenshot("signin")

	// Sign up: a confirmation that differs is the API's message beside its field.
	b.load("open the sign-up page", chromedp.Navigate(b.url+"/app/signup"))
	b.screenshot("signup")
	fillForm(b, [2]string{"login", "carol"}, [2]string{"email", "carol@example.com"}, [2]string{"password", "carol-pw1"}, [2]string{"password_confirmation", "other-pw1"})
	b.do("sign up with a wrong confirmation", chromedp.Click(chromedp.ID("signup-submit")))
	b.wait("the API's message", `document.getElementById('signup-status').classList.contains('error')`)
	if got := statusText(b, "signup-status"); !strings.Contains(got, "password: doesn't match confirmation") {
		t.Errorf("sign-up status %q", got)
	}
	if got := statusText(b, "password-error"); !strings.Contains(got, "doesn't match confirmation") || !eval[bool](b, `document.getElementById('password').getAttribute('aria-invalid') === 'true'`) {
		t.Errorf("the password field's message %q", got)
	}
	b.screenshot("signup-error")
	signUpBrowser(b, "carol", "carol@example.com", "carol-pw1")
	b.screenshot("home-signed-in")
	for _, want := range []string{"Upload", "New map", "Account", "Sign out"} {
		if !strings.Contains(eval[string](b, `document.querySelector('header.site nav').textContent`), want) {
			t.Errorf("the header lacks %q", want)
		}
	}
	if eval[bool](b, `document.querySelector('header.site a[href="/app/groups"]') !== null`) {
		t.Error("a user who is not an administrator has the groups link")
	}

	// A change without the CSRF token is refused, with it accepted.
	got := evalAsync[[]any](b, `(async () => {
		const h = { 'X-Requested-With': 'XMLHttpRequest', 'Content-Type': 'application/json' };
		const body = JSON.stringify({ user: { fullname: 'Carol C' } });
		const bare = await fetch('/users/carol.json', { method: 'PUT', headers: h, body });
		const s = await (await fetch('/session.json', { headers: h })).json();
		const ok = await fetch('/users/carol.json', { method: 'PUT', headers: { ...h, 'X-CSRF-Token': s.csrf_token }, body });
		return [bare.status, (await bare.json()).error, ok.status];
	})()`)
	if len(got) != 3 || got[0] != float64(403) || !strings.Contains(got[1].(string), "CSRF") || got[2] != float64(200) {
		t.Errorf("PUT without, then with the CSRF token: %v", got)
	}

	signOutBrowser(b)
	if got := evalAsync[int](b, `(async () => (await fetch('/session.json', { headers: { 'X-Requested-With': 'XMLHttpRequest' } })).status)()`); got != 401 {
		t.Errorf("after signing out GET /session.json = %d", got)
	}

	// A wrong password: the API's message in the live region, the
	// password field focused to try again, no navigation.
	b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin?next=/app/account"))
	fillForm(b, [2]string{"login", "carol"}, [2]string{"password", "wrong-pw1"})
	b.do("sign in with a wrong password", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the refusal", `document.getElementById('signin-status').classList.contains('error')`)
	if got := statusText(b, "signin-status"); !strings.Contains(got, "invalid login or password") {
		t.Errorf("sign-in status %q", got)
	}
	if eval[string](b, `document.activeElement.id`) != "password" || eval[string](b, `location.pathname`) != "/app/signin" {
		t.Errorf("after a refusal: focus on %q at %q", eval[string](b, `document.activeElement.id`), eval[string](b, `location.pathname`))
	}
	if eval[string](b, `document.getElementById('signin-status').getAttribute('aria-live')`) != "polite" {
		t.Error("the sign-in status is no live region")
	}
	b.screenshot("signin-error")
	// The right one: to next=.
	fillForm(b, [2]string{"password", "carol-pw1"})
	b.load("sign in", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("on the account page", `location.pathname === '/app/account' && `+signedInAs("carol"))

	// next= naming another site goes home.
	// Also those that only name it once the browser has resolved them
	// (dot segments, "%2e", backslashes).
	for _, next := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "/\t/evil.example", "javascript:alert(1)",
		"/.//evil.example/x", "/..//evil.example/x", "/a/..//evil.example/x", "/%2e//evil.example/x", "/%2E%2E//evil.example/x",
		"/./\\evil.example/x", "/.\\/evil.example/x", "\\\\evil.example", "/\n/evil.example", "//\tevil.example"} {
		signOutBrowser(b)
		b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin?next="+url.QueryEscape(next)))
		fillForm(b, [2]string{"login", "carol"}, [2]string{"password", "carol-pw1"})
		b.load("sign in", chromedp.Click(chromedp.ID("signin-submit")))
		b.wait("signed in", signedInAs("carol"))
		if got := eval[string](b, `location.href`); got != b.url+"/" {
			t.Errorf("next=%s: at %s", next, got)
		}
	}
	// A path of this site goes there, as the browser resolves it.
	for next, want := range map[string]string{"/app/x/../account?a=1#b": "/app/account?a=1#b", "/app/%2e/account": "/app/account"} {
		signOutBrowser(b)
		b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin?next="+url.QueryEscape(next)))
		fillForm(b, [2]string{"login", "carol"}, [2]string{"password", "carol-pw1"})
		b.load("sign in", chromedp.Click(chromedp.ID("signin-submit")))
		if got := eval[string](b, `location.href`); got != b.url+want {
			t.Errorf("next=%s: at %s, want %s", next, got, b.url+want)
		}
	}
	b.checkNoProblems()
}

// checkNoProblems fails the test on the pages' console errors, but the
// refusals the test asked for (an API error a page's request got is logged
// by the browser as a failed load; a missing asset still counts).
func (b *browserTest) checkNoProblems() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	expected := regexp.MustCompile(`Failed to load resource: the server responded with a status of (400|401|403|404|409|415)`)
	for _, p := range b.problems {
		if !expected.MatchString(p) || strings.Contains(p, "/app/assets/") {
			b.t.Errorf("in the browser: %s", p)
		}
	}
}

// TestWebUploadInBrowser uploads the nc counties shapefile through the
// upload page's file input, the transfer slowed so that its progress bar
// is seen moving to its end, lands on the dataset page and sees the
// counties drawn; then a CSV without coordinates, refused with the API's
// own message, and a URL registration.
func TestWebUploadInBrowser(t *testing.T) {
	// The URL registered below is this machine's.
	b, ts := newAuthBrowserTest(t, func(c *api.Config) { c.AllowPrivateFetch = true })

	// A visitor is sent to sign in first, and comes back.
	b.load("the upload page as a visitor", chromedp.Navigate(b.url+"/app/upload"))
	b.wait("sent to sign in", `location.pathname === '/app/signin' && new URLSearchParams(location.search).get('next') === '/app/upload'`)
	fillForm(b, [2]string{"login", "alice"}, [2]string{"password", "secret1"})
	b.load("sign in", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("back on the upload page", `location.pathname === '/app/upload' && `+signedInAs("alice"))
	b.screenshot("upload")

	// The shapefile, at 40 KB/s: about two seconds of progress.
	throttleUpload(b, 40<<10)
	files := ncFiles("dataset")
	start := time.Now()
	id := uploadInBrowser(b, "Counties from the browser", files["dataset[shp]"], files["dataset[shx]"], files["dataset[dbf]"], files["dataset[prj]"])
	took := time.Since(start)
	throttleUpload(b, -1)
	log := eval[string](b, `sessionStorage.progressLog`)
	var seen [][2]float64
	if err := json.Unmarshal([]byte(log), &seen); err != nil || len(seen) == 0 {
		t.Fatalf("progress log %q: %v", log, err)
	}
	last := seen[len(seen)-1]
	between := 0
	for _, v := range seen {
		if v[0] > 0 && v[0] < v[1] && v[1] > 90000 {
			between++
		}
	}
	if last[0] != last[1] || last[1] < 90000 || between == 0 {
		t.Errorf("the transfer bar went %v: want values between 0 and the ~91 KB sent, then its end", seen)
	}
	t.Logf("upload of %d KB at 40 KB/s took %v; the transfer bar took %d values, %d between its ends", int(last[1])>>10, took.Round(time.Millisecond), len(seen), between)

	// The dataset page: its title, the counties drawn.
	b.wait("the map idle", `document.getElementById('map') && document.getElementById('map').dataset.state === 'idle'`)
	if got := eval[string](b, `document.getElementById('title').textContent`); got != "Counties from the browser" {
		t.Errorf("dataset %d title %q", id, got)
	}
	b.checkMapPixels()
	b.screenshot("upload-dataset")
	doc := decode[map[string]any](t, must(t, ts.get("/datasets/"+itoa(id)+".json", ""), 200))
	if doc["feature_count"] != float64(100) || doc["author"] == nil {
		t.Errorf("the uploaded dataset: %v features", doc["feature_count"])
	}

	// A CSV without coordinates: the API's message as it states it.
	dir := t.TempDir()
	bad := filepath.Join(dir, "no-places.csv")
	if err := os.WriteFile(bad, []byte("name,value\nAlpha,1\nBeta,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body, ct := multipartBody(t, map[string]string{"dataset[csv]": bad}, nil)
	apiErr := decode[map[string]any](t, ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ct, body: body}).Body.Bytes())["error"].(string)
	startUpload(b, "", bad)
	b.wait("the refusal", `document.getElementById('upload-status').classList.contains('error')`)
	if got := statusText(b, "upload-status"); got != "The upload was refused: "+apiErr {
		t.Errorf("upload status %q, want the API's %q", got, apiErr)
	}
	if !eval[bool](b, `document.getElementById('progress').hidden && !document.getElementById('upload-submit').disabled`) {
		t.Error("after a refusal the form is not usable again")
	}
	b.screenshot("upload-error")

	// Other formats through the picker: GeoJSON, KML, a zipped shapefile.
	zipped := filepath.Join(dir, "nc.zip")
	zipFiles(t, zipped, files["dataset[shp]"], files["dataset[shx]"], files["dataset[dbf]"], files["dataset[prj]"])
	others := map[string]int{zipped: 100}
	for _, f := range []struct {
		name, content string
		features      int
	}{
		{"points.geojson", `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-78.6,35.8]},"properties":{"name":"Raleigh"}}]}`, 1},
		{"points.kml", `<kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>Raleigh</name><Point><coordinates>-78.6,35.8</coordinates></Point></Placemark><Placemark><name>Durham</name><Point><coordinates>-78.9,36.0</coordinates></Point></Placemark></Document></kml>`, 2},
	} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		others[p] = f.features
	}
	for p, want := range others {
		id := uploadInBrowser(b, "", p)
		doc := decode[map[string]any](t, must(t, ts.get("/datasets/"+itoa(id)+".json", ""), 200))
		if doc["feature_count"] != float64(want) {
			t.Errorf("%s: %v features, want %d", filepath.Base(p), doc["feature_count"], want)
		}
	}

	// A file dropped on the zone (a drop event carrying a file made in
	// the page): uploaded under its own name.
	b.load("the upload page", chromedp.Navigate(b.url+"/app/upload"))
	b.wait("the upload form", `!document.getElementById('upload-form').hidden`)
	b.do("drop a CSV", chromedp.Evaluate[chromedp.Void](`(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(['name,lat,lon\nRaleigh,35.78,-78.64\nAsheville,35.6,-82.55\n'], 'dropped towns.csv', { type: 'text/csv' }));
		const zone = document.getElementById('dropzone');
		for (const type of ['dragover', 'drop']) zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
	})()`))
	b.wait("the dropped file listed", `document.getElementById('file-list').textContent.includes('dropped towns.csv')`)
	b.do("send", chromedp.Click(chromedp.ID("upload-submit")))
	b.wait("the dropped file's dataset", `/^\/app\/datasets\/\d+$/.test(location.pathname) && document.getElementById('title').textContent === 'dropped towns'`)

	// URLs: one the API refuses, with its message; one registered, then
	// its dataset page.
	feed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		fmt.Fprint(w, "name,lat,lon\nRaleigh,35.78,-78.64\nAsheville,35.6,-82.55\n")
	}))
	t.Cleanup(feed.Close)
	b.load("the upload page", chromedp.Navigate(b.url+"/app/upload"))
	b.wait("the URL form", `!document.getElementById('url-section').hidden`)
	fillForm(b, [2]string{"url", "ftp://127.0.0.1/towns.csv"})
	b.do("register an ftp URL", chromedp.Click(chromedp.ID("url-submit")))
	b.wait("its refusal", `document.getElementById('url-status').classList.contains('error')`)
	if got := statusText(b, "url-status"); !strings.HasPrefix(got, "The URL was not registered: ") || !strings.Contains(got, "ftp") {
		t.Errorf("url status %q", got)
	}
	fillForm(b, [2]string{"url", feed.URL + "/towns.csv"}, [2]string{"url-title", "Towns by URL"})
	b.load("register the URL", chromedp.Click(chromedp.ID("url-submit")))
	b.wait("the registered dataset's page", `/^\/app\/datasets\/\d+$/.test(location.pathname) && document.getElementById('title').textContent === 'Towns by URL'`)
	b.screenshot("upload-url-dataset")

	// At phone width the upload page and its header fit without scrolling sideways.
	b.load("the upload page", chromedp.Navigate(b.url+"/app/upload"))
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	b.wait("laid out", `!document.getElementById('upload-form').hidden && document.documentElement.scrollWidth <= window.innerWidth`)
	b.screenshot("upload-phone")
	b.checkNoProblems()
}

// TestWebSignupClosedInBrowser: where only administrators create
// accounts, the sign-up form shows the API's refusal and says why.
func TestWebSignupClosedInBrowser(t *testing.T) {
	b, _ := newAuthBrowserTest(t, func(c *api.Config) { c.Mode, c.Signup = mapcommons.ModeAppliance, false })
	b.load("open the sign-up page", chromedp.Navigate(b.url+"/app/signup"))
	fillForm(b, [2]string{"login", "dave"}, [2]string{"email", "dave@example.com"}, [2]string{"password", "dave-pw1"}, [2]string{"password_confirmation", "dave-pw1"})
	b.do("sign up", chromedp.Click(chromedp.ID("signup-submit")))
	b.wait("refused", `document.getElementById('signup-status').classList.contains('error')`)
	if got := statusText(b, "signup-status"); got != "The account was not created: authentication required (on this server only an administrator may create accounts)" {
		t.Errorf("sign-up status %q", got)
	}
	b.checkNoProblems()
}

// TestWebAccountInBrowser changes bob's e-mail and then his password on
// the account page, sees the API's message for a bad confirmation, and
// signs in with the new password (the old one refused).
func TestWebAccountInBrowser(t *testing.T) {
	b, ts := newAuthBrowserTest(t)

	// A visitor is sent to sign in, and comes back here.
	b.load("the account page as a visitor", chromedp.Navigate(b.url+"/app/account"))
	b.wait("sent to sign in", `location.pathname === '/app/signin' && location.search === '?next=%2Fapp%2Faccount'`)
	fillForm(b, [2]string{"login", "bob"}, [2]string{"password", "secret1"})
	b.load("sign in", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the account page", `location.pathname === '/app/account' && !document.getElementById('account').hidden`)
	if got := eval[string](b, `document.getElementById('email').value`); got != "bob@example.com" {
		t.Errorf("the e-mail field holds %q", got)
	}
	if got := statusText(b, "account-facts"); !strings.Contains(got, "bob") {
		t.Errorf("account facts %q", got)
	}

	// The e-mail.
	fillForm(b, [2]string{"email", "robert@example.org"})
	b.do("save the e-mail", chromedp.Click(chromedp.ID("profile-submit")))
	b.wait("saved", `document.getElementById('profile-status').textContent.startsWith('Saved')`)
	u := decode[map[string]map[string]any](t, must(t, ts.get("/users/bob.json", "admin"), 200))["User"]
	if u["email"] != "robert@example.org" {
		t.Errorf("bob's e-mail after the change: %v", u["email"])
	}

	// A wrong current password: the API's message beside its field.
	fillForm(b, [2]string{"current_password", "wrong-pw1"}, [2]string{"password", "newer-pw2"}, [2]string{"password_confirmation", "newer-pw2"})
	b.do("change the password with a wrong current one", chromedp.Click(chromedp.ID("password-submit")))
	b.wait("refused", `document.getElementById('password-status').classList.contains('error')`)
	if got := statusText(b, "current_password-error"); got != "current password is wrong" {
		t.Errorf("current password error %q", got)
	}
	if eval[string](b, `document.activeElement.id`) != "current_password" {
		t.Errorf("focus on %q after the refusal", eval[string](b, `document.activeElement.id`))
	}
	// A confirmation that differs: the API's message beside the field.
	fillForm(b, [2]string{"current_password", "secret1"}, [2]string{"password", "newer-pw2"}, [2]string{"password_confirmation", "newer-pw3"})
	b.do("change the password wrongly", chromedp.Click(chromedp.ID("password-submit")))
	b.wait("refused", `document.getElementById('password-status').classList.contains('error')`)
	if got := statusText(b, "password-status"); got != "Not saved: password: doesn't match confirmation" {
		t.Errorf("password status %q", got)
	}
	if eval[string](b, `document.activeElement.id`) != "password" {
		t.Errorf("focus on %q after the refusal", eval[string](b, `document.activeElement.id`))
	}
	b.screenshot("account-error")
	fillForm(b, [2]string{"password", "newer-pw2"}, [2]string{"password_confirmation", "newer-pw2"})
	b.do("change the password", chromedp.Click(chromedp.ID("password-submit")))
	b.wait("changed", `document.getElementById('password-status').textContent.startsWith('Saved')`)
	if eval[string](b, `document.getElementById('password').value`) != "" {
		t.Error("the password fields keep the new password")
	}
	b.screenshot("account")

	// Signed out, the old password fails and the new one works.
	signOutBrowser(b)
	b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin"))
	fillForm(b, [2]string{"login", "bob"}, [2]string{"password", "secret1"})
	b.do("the old password", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("refused", `document.getElementById('signin-status').classList.contains('error')`)
	signInBrowser(b, "bob", "newer-pw2")
	b.checkNoProblems()
}

// TestWebGroupsInBrowser manages groups as an administrator (create one,
// add members, remove one, refuse an unknown login with the API's message,
// delete a group) and opens the page as a user who is not one.
func TestWebGroupsInBrowser(t *testing.T) {
	b, ts := newAuthBrowserTest(t)
	signInBrowser(b, "admin", "secret1")
	if !eval[bool](b, `document.querySelector('header.site a[href="/app/groups"]') !== null`) {
		t.Error("an administrator's header has no groups link")
	}
	b.load("the groups page", chromedp.Click(chromedp.CSS(`header.site a[href="/app/groups"]`)))
	b.wait("the groups", `!document.getElementById('groups-admin').hidden`)
	if got := statusText(b, "group-list"); got != "No group yet." {
		t.Errorf("groups at first: %q", got)
	}

	id := createGroupInBrowser(b, "Field team", "alice", "bob")
	fillForm(b, [2]string{"group-" + id + "-login", "nobody"})
	b.do("add nobody", chromedp.Click(chromedp.CSS(`#group-list li[data-group="`+id+`"] form button`)))
	b.wait("refused", `document.getElementById('groups-status').classList.contains('error')`)
	// The unknown login: the API's message.
	apiErr := decode[map[string]any](t, ts.do(req{method: "POST", path: "/groups/" + id + "/users.json", user: "admin", ctype: form, body: []byte("login=nobody")}).Body.Bytes())["error"].(string)
	if got := statusText(b, "groups-status"); got != "Not added: "+apiErr {
		t.Errorf("adding nobody: %q, want the API's %q", got, apiErr)
	}
	if got := eval[[]string](b, `[...document.querySelectorAll('ul.members .login')].map(e => e.textContent)`); strings.Join(got, ",") != "alice,bob" {
		t.Errorf("members shown %v", got)
	}
	b.screenshot("groups")
	if got := memberLogins(t, ts, mustInt(t, id)); strings.Join(got, ",") != "alice,bob" {
		t.Errorf("members in the API %v", got)
	}
	b.do("remove bob", chromedp.Click(chromedp.CSS(`button[aria-label="Remove bob from Field team"]`)))
	b.wait("bob removed", `[...document.querySelectorAll('ul.members .login')].map(e => e.textContent).join() === 'alice'`)

	// A second group, deleted with two presses.
	fillForm(b, [2]string{"group-name", "Short lived"})
	b.do("create another group", chromedp.Click(chromedp.ID("group-create-submit")))
	b.wait("two groups", `document.querySelectorAll('#group-list li[data-group]').length === 2`)
	del := `#group-list li[data-group]:last-child .group-actions button`
	if eval[string](b, `document.querySelector('#group-list li[data-group]:last-child h3').textContent`) != "Short lived" {
		t.Fatal("the groups are not listed by name")
	}
	b.do("delete (ask)", chromedp.Click(chromedp.CSS(del)))
	b.wait("asked again", `document.querySelector(`+jsString(del)+`).textContent.startsWith('Press again')`)
	b.do("delete", chromedp.Click(chromedp.CSS(del)))
	b.wait("one group", `document.querySelectorAll('#group-list li[data-group]').length === 1`)
	if n := len(decode[[]map[string]any](t, must(t, ts.get("/groups.json", "admin"), 200))); n != 1 {
		t.Errorf("%d groups after the deletion", n)
	}

	// Alice, a member who is not an administrator: refused, her groups shown.
	signOutBrowser(b)
	signInBrowser(b, "alice", "secret1")
	if eval[bool](b, `document.querySelector('header.site a[href="/app/groups"]') !== null`) {
		t.Error("alice's header has the groups link")
	}
	b.load("the groups page as alice", chromedp.Navigate(b.url+"/app/groups"))
	b.wait("refused", `document.getElementById('groups-status').classList.contains('error') && !document.getElementById('groups-mine').hidden`)
	if got := statusText(b, "groups-status"); !strings.Contains(got, "Only administrators manage groups") {
		t.Errorf("alice's groups page says %q", got)
	}
	if got := statusText(b, "my-groups"); got != "Field team" {
		t.Errorf("alice's groups %q", got)
	}
	if !eval[bool](b, `document.getElementById('groups-admin').hidden`) {
		t.Error("alice sees the administrators' forms")
	}
	b.screenshot("groups-refused")
	b.checkNoProblems()
}

// zipFiles writes a zip archive at path holding files under their base names.
func zipFiles(t *testing.T, path string, files ...string) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// mustInt parses a decimal id.
func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
