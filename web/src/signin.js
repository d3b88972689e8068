// The sign-in page: the form opens a session (POST /session.json, which
// sets the HttpOnly cookie), then goes to ?next= when it is a path of this
// site, else home. Wrong credentials: the API's message in the live
// region, the password field focused to try again.
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

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const login = form.elements.login.value.trim();
  const password = form.elements.password.value;
  busy(form, true);
  status(msg, 'Signing in…');
  try {
    await api('/session.json', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login, password }),
    });
    forgetSession();
    status(msg, 'Signed in. Opening the page…');
    location.assign(next);
  } catch (e) {
    status(msg, 'Not signed in: ' + e.message, true);
    busy(form, false);
    form.elements.password.select();
    form.elements.password.focus();
  }
});
