package api_test

// Two-factor sign-in in headless Chromium (see webapp_test.go for the
// browser), as a person does it: set up on the account page from the key
// shown there, the code asked for at sign-in, the password changed with
// a code, and an administrator's one-time sign-in link followed.

import (
	"encoding/base32"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mapcommons"
	"mapcommons/api"
	"mapcommons/storetest"
)

// notACode is a code of the right form that secret gives at no step the
// server accepts at now.
func notACode(secret []byte, now time.Time) string {
	cur := mapcommons.TOTPStep(now)
	for _, c := range []string{"000000", "111111", "222222", "333333"} {
		bad := true
		for s := cur - mapcommons.TOTPSkew; s <= cur+mapcommons.TOTPSkew; s++ {
			bad = bad && mapcommons.TOTPCode(secret, s) != c
		}
		if bad {
			return c
		}
	}
	panic("four codes in a window")
}

// selfSecondFactor is what the user's own JSON says of their second
// factor, asked by the page with its session.
func selfSecondFactor(b *browserTest, login string) string {
	b.t.Helper()
	return evalAsync[string](b, `fetch('/users/`+login+`.json', {credentials: 'same-origin'}).then((r) => r.json()).then((d) => String(d.User.second_factor))`)
}

// TestWebSecondFactorInBrowser: alice sets up two-factor sign-in on the
// account page (the key shown typed into Go's TOTP at the server's
// clock; a QR code shown; the recovery codes shown); signed out, the
// sign-in page asks for the code, refuses a wrong one and the one already
// used, and takes the next step's; the password form then asks for a
// code too (the one of the sign-in refused, the next taken), and a
// recovery code signs in with the new password; an administrator's
// one-time link signs her in once.
func TestWebSecondFactorInBrowser(t *testing.T) {
	clock := storetest.NewClock(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	b, _ := newAuthBrowserTest(t, func(c *api.Config) { c.Now = clock.Now })

	signInBrowser(b, "alice", "secret1")
	b.load("the account page", chromedp.Navigate(b.url+"/app/account"))
	b.wait("the set-up form", `!document.getElementById('account').hidden && !document.getElementById('tfa-start-form').hidden`)
	if got := statusText(b, "tfa-state"); got != "Two-factor sign-in is off." {
		t.Errorf("state before: %q", got)
	}
	if !eval[bool](b, `document.getElementById('pw-code-label').hidden`) {
		t.Error("the password form asks for a code before two-factor sign-in is on")
	}

	// Set up: the password, then the key and its QR code.
	fillForm(b, [2]string{"tfa-password", "secret1"})
	b.do("set up", chromedp.Click(chromedp.ID("tfa-start")))
	b.wait("the key shown", `!document.getElementById('tfa-setup').hidden && document.getElementById('tfa-secret').textContent !== ''`)
	text := statusText(b, "tfa-secret")
	secret, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(text)
	if err != nil || len(secret) != mapcommons.TOTPSecretLen {
		t.Fatalf("the key shown %q: %v", text, err)
	}
	b.wait("the QR code drawn", `(() => { const i = document.getElementById('tfa-qr'); return i.complete && i.naturalWidth >= 21 && i.src.startsWith('data:image/png;base64,'); })()`)
	if uri := eval[string](b, `document.getElementById('tfa-uri').href`); !strings.HasPrefix(uri, "otpauth://totp/") || !strings.Contains(uri, "secret="+text) {
		t.Errorf("the app's link %q", uri)
	}
	if got := selfSecondFactor(b, "alice"); got != "pending" {
		t.Errorf("second factor while set up: %q", got)
	}
	b.screenshot("2fa-setup")

	// Confirm with the code of now.
	enrolCode := mapcommons.TOTPCode(secret, mapcommons.TOTPStep(clock.Now()))
	fillForm(b, [2]string{"tfa-code", enrolCode})
	b.do("confirm", chromedp.Click(chromedp.ID("tfa-confirm")))
	b.wait("the recovery codes", `!document.getElementById('tfa-codes').hidden`)
	var codes []string
	if err := json.Unmarshal([]byte(eval[string](b, `JSON.stringify([...document.querySelectorAll('#tfa-code-list li code')].map((c) => c.textContent))`)), &codes); err != nil {
		t.Fatal(err)
	}
	if len(codes) != mapcommons.RecoveryCodes || !mapcommons.IsRecoveryCode(codes[0]) {
		t.Fatalf("recovery codes shown: %v", codes)
	}
	if got := statusText(b, "tfa-state"); got != "Two-factor sign-in is on." || !eval[bool](b, `document.getElementById('tfa-setup').hidden`) {
		t.Errorf("state after: %q", got)
	}
	if got := selfSecondFactor(b, "alice"); got != "on" {
		t.Errorf("second factor once confirmed: %q", got)
	}
	if eval[bool](b, `document.getElementById('pw-code-label').hidden`) {
		t.Error("the password form asks for no code once two-factor sign-in is on")
	}
	b.screenshot("2fa-on")

	// Signed out, the password alone is not enough: the code is asked for.
	signOutBrowser(b)
	clock.Advance(mapcommons.TOTPPeriod)
	b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin?next=/app/account"))
	fillForm(b, [2]string{"login", "alice"}, [2]string{"password", "secret1"})
	b.do("sign in with the password", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("the code asked for", `!document.getElementById('code-label').hidden`)
	if got := statusText(b, "signin-status"); got != "Enter the code from your authenticator app." {
		t.Errorf("sign-in status %q", got)
	}
	if eval[string](b, `document.activeElement.id`) != "code" {
		t.Errorf("focus on %q, not the code", eval[string](b, `document.activeElement.id`))
	}
	b.screenshot("2fa-code-asked")
	// A wrong code, then the one the set-up used (a step used is refused).
	for _, try := range [][2]string{{"a wrong code", notACode(secret, clock.Now())}, {"the set-up's code", enrolCode}} {
		what, code := try[0], try[1]
		fillForm(b, [2]string{"password", "secret1"}, [2]string{"code", code})
		b.do("sign in with "+what, chromedp.Click(chromedp.ID("signin-submit")))
		b.wait("refused", `document.getElementById('signin-status').textContent.startsWith('Not signed in')`)
		if got := statusText(b, "signin-status"); got != "Not signed in: invalid login, password or code" || eval[string](b, `location.pathname`) != "/app/signin" {
			t.Errorf("%s: %q at %s", what, got, eval[string](b, `location.pathname`))
		}
		if eval[string](b, `document.getElementById('code').value`) != "" {
			t.Errorf("%s: the code field keeps the code refused", what)
		}
	}
	signInCode := mapcommons.TOTPCode(secret, mapcommons.TOTPStep(clock.Now()))
	fillForm(b, [2]string{"password", "secret1"}, [2]string{"code", signInCode})
	b.load("sign in with the code", chromedp.Click(chromedp.ID("signin-submit")))
	b.wait("on the account page", `location.pathname === '/app/account' && !document.getElementById('account').hidden && `+signedInAs("alice"))
	if got := statusText(b, "account-facts"); !strings.Contains(got, "alice") {
		t.Errorf("account facts %q", got)
	}
	if got := selfSecondFactor(b, "alice"); got != "on" {
		t.Errorf("second factor after signing in with it: %q", got)
	}

	// The password changed with the current one and a code.
	b.wait("the password form's code field", `!document.getElementById('pw-code-label').hidden`)
	fillForm(b, [2]string{"current_password", "secret1"}, [2]string{"password", "alice-2fa-pw"}, [2]string{"password_confirmation", "alice-2fa-pw"}, [2]string{"pw-code", signInCode})
	b.do("change the password with the sign-in's code", chromedp.Click(chromedp.ID("password-submit")))
	b.wait("refused", `document.getElementById('password-status').classList.contains('error')`)
	if got := statusText(b, "current_password-error"); got != "current password is wrong" {
		t.Errorf("current password error %q", got)
	}
	clock.Advance(mapcommons.TOTPPeriod)
	fillForm(b, [2]string{"current_password", "secret1"}, [2]string{"password", "alice-2fa-pw"}, [2]string{"password_confirmation", "alice-2fa-pw"},
		[2]string{"pw-code", mapcommons.TOTPCode(secret, mapcommons.TOTPStep(clock.Now()))})
	b.do("change the password", chromedp.Click(chromedp.ID("password-submit")))
	b.wait("changed", `document.getElementById('password-status').textContent.startsWith('Saved')`)
	if eval[string](b, `document.getElementById('pw-code').value`) != "" {
		t.Error("the password form keeps the code")
	}
	b.screenshot("2fa-password")

	// The old password fails with a recovery code, the new one signs in.
	signOutBrowser(b)
	signInWithCode := func(password, code string) {
		t.Helper()
		b.load("open the sign-in page", chromedp.Navigate(b.url+"/app/signin?next=/app/account"))
		fillForm(b, [2]string{"login", "alice"}, [2]string{"password", password})
		b.do("sign in", chromedp.Click(chromedp.ID("signin-submit")))
		b.wait("the code asked for", `!document.getElementById('code-label').hidden`)
		fillForm(b, [2]string{"password", password}, [2]string{"code", code})
		b.do("sign in with a code", chromedp.Click(chromedp.ID("signin-submit")))
	}
	signInWithCode("secret1", codes[1])
	b.wait("refused", `document.getElementById('signin-status').textContent === 'Not signed in: invalid login, password or code'`)
	signInWithCode("alice-2fa-pw", codes[0])
	b.wait("signed in with a recovery code", `location.pathname === '/app/account' && !document.getElementById('account').hidden && `+signedInAs("alice"))

	// A one-time sign-in link issued by an administrator.
	signOutBrowser(b)
	hr, err := http.NewRequest("POST", b.url+"/users/alice/sign_in_link.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.SetBasicAuth("admin", "secret1")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	var link map[string]string
	err = json.NewDecoder(resp.Body).Decode(&link)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated || !strings.HasPrefix(link["url"], b.url+"/app/signin#link=") {
		t.Fatalf("the link: %d %v %v", resp.StatusCode, link, err)
	}
	b.load("follow the link", chromedp.Navigate(link["url"]))
	b.wait("signed in by the link", `location.pathname === '/' && `+signedInAs("alice"))
	if h := eval[string](b, `location.hash`); h != "" {
		t.Errorf("the token stays in the address bar: %q", h)
	}
	b.load("the account page", chromedp.Navigate(b.url+"/app/account"))
	b.wait("on the account page", `location.pathname === '/app/account' && !document.getElementById('account').hidden && `+signedInAs("alice"))
	if got := statusText(b, "account-facts"); !strings.Contains(got, "alice") {
		t.Errorf("account facts %q", got)
	}
	if got := selfSecondFactor(b, "alice"); got != "on" {
		t.Errorf("second factor after the link: %q", got)
	}
	// Once only.
	signOutBrowser(b)
	b.load("follow the link again", chromedp.Navigate(link["url"]))
	b.wait("refused", `document.getElementById('signin-status').textContent.startsWith('Not signed in')`)
	if eval[string](b, `location.pathname`) != "/app/signin" || eval[bool](b, `document.getElementById('signout') !== null`) {
		t.Error("the link signed in twice")
	}
	b.checkNoProblems()
}
