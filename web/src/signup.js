// The sign-up page: creates the account (POST /users.json, as the API
// takes it) and signs in with it (POST /session.json), then goes to ?next=
// (a path of this site) or home. The API's messages are shown as it states
// them: in the live region, and beside the fields it names.
import './style.css';
import { api, forgetSession, session, status } from './lib/common.js';
import { nextParam } from './lib/header.js';
import { busy, clearFieldErrors, showFieldErrors } from './lib/forms.js';

const form = document.getElementById('signup-form');
const msg = document.getElementById('signup-status');
const next = nextParam();

if (next !== '/') document.getElementById('signin-link').href = '/app/signin?next=' + encodeURIComponent(next);

session().then((s) => {
  if (!s) return;
  const note = document.getElementById('signed-in-note');
  note.textContent = 'You are signed in as ' + s.login + '. A new account signs you in as its user.';
  note.hidden = false;
});

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = form.elements;
  const user = {
    login: f.login.value.trim(),
    email: f.email.value.trim(),
    fullname: f.fullname.value.trim(),
    password: f.password.value,
    password_confirmation: f.password_confirmation.value,
  };
  clearFieldErrors(form);
  busy(form, true);
  status(msg, 'Creating the account…');
  try {
    await api('/users.json', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user }),
    });
  } catch (e) {
    // 401/403: this server lets only administrators create accounts.
    const closed = e.status === 401 || e.status === 403 ? ' (on this server only an administrator may create accounts)' : '';
    status(msg, 'The account was not created: ' + e.message + closed, true);
    busy(form, false);
    (showFieldErrors(form, e) || f.login).focus();
    return;
  }
  status(msg, 'Account created. Signing in…');
  try {
    await api('/session.json', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ login: user.login, password: user.password }),
    });
    forgetSession();
    location.assign(next);
  } catch (e) {
    status(msg, 'The account was created, but signing in failed: ' + e.message, true);
    busy(form, false);
  }
});
