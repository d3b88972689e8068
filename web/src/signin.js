// The sign-in page: the form opens a session (POST /session.json, which
// sets the HttpOnly cookie), then goes to ?next= when it is a path of this
// site, else home. Wrong credentials: the API's message in the live
// region, the password field focused to try again. A login with a second
// factor is answered second_factor: the code field then shows. A one-time
// sign-in link (#link=TOKEN: the fragment reaches no server) signs in by
// its token at once, and the fragment is dropped from the address bar.
import './style.css';
import { api, forgetSession, session, status } from './lib/common.js';
import { nextParam } from './lib/header.js';
import { busy } from './lib/forms.js';

const form = document.getElementById('signin-form');
const msg = document.getElementById('signin-status');
const next = nextParam();

// The sign-up link keeps where to go afterwards.
if (next !== '/') document.getElementById('signup-link').href = '/app/signup?next=' + encodeURIComponent(next);

session().then((s) => {
  if (s) status(msg, 'You are signed in as ' + s.login + '. Signing in here changes who you are signed in as.');
});

const codeLabel = document.getElementById('code-label');

/** signIn posts body to /session.json and opens the next page. */
async function signIn(body) {
  await api('/session.json', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  forgetSession();
  status(msg, 'Signed in. Opening the page…');
  location.assign(next);
}

const link = new URLSearchParams(location.hash.slice(1)).get('link');
if (link) {
  history.replaceState(null, '', location.pathname + location.search);
  status(msg, 'Signing in with your one-time link…');
  signIn({ link }).catch((e) => status(msg, 'Not signed in: ' + e.message, true));
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const login = form.elements.login.value.trim();
  const password = form.elements.password.value;
  const code = form.elements.code.value.trim();
  busy(form, true);
  status(msg, 'Signing in…');
  try {
    await signIn(code ? { login, password, code } : { login, password });
  } catch (e) {
    busy(form, false);
    if (e.body && e.body.second_factor) {
      codeLabel.hidden = false;
      status(msg, 'Enter the code from your authenticator app.', true);
      form.elements.code.focus();
      return;
    }
    status(msg, 'Not signed in: ' + e.message, true);
    if (!codeLabel.hidden) form.elements.code.value = '';
    form.elements.password.select();
    form.elements.password.focus();
  }
});
