// The set-up page: the one-time link a fresh server writes to its log
// (/app/setup#token=TOKEN: the fragment reaches no server, and is dropped
// from the address bar here) makes the first administrator. GET
// /setup.json says whether the link still works and the server's mode,
// which the page explains with how to change it; the form posts the
// account with the token in X-Setup-Token (POST /setup.json), which signs
// the browser in, and the page goes home signed in. The API's messages
// are shown as it states them.
import './style.css';
import { api, forgetSession, status } from './lib/common.js';
import { busy, clearFieldErrors, showFieldErrors } from './lib/forms.js';

const form = document.getElementById('setup-form');
const msg = document.getElementById('setup-status');
const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
if (location.hash) history.replaceState(null, '', location.pathname + location.search);

/** showMode says which mode the server runs in, and what it means. */
function showMode(mode) {
  document.getElementById('mode-name').textContent = mode;
  document.getElementById('mode-flag').textContent = '--mode ' + mode;
  document.getElementById('mode-hosted').hidden = mode !== 'hosted';
  document.getElementById('mode-appliance').hidden = mode !== 'appliance';
  document.getElementById('mode-section').hidden = false;
}

async function init() {
  let doc;
  try {
    doc = await api('/setup.json');
  } catch (e) {
    status(msg, 'The set-up could not be loaded: ' + e.message, true);
    return;
  }
  showMode(doc.mode);
  if (!doc.open) {
    status(msg, 'This server has an administrator: there is nothing to set up. Sign in, or ask an administrator for an account.');
    document.getElementById('signin-note').hidden = false;
    return;
  }
  if (!token) {
    status(msg, 'This page needs the set-up link the server wrote in its log when it started (it ends in #token=…). Open that link.', true);
    return;
  }
  status(msg, 'Make the administrator of this server.');
  form.hidden = false;
  form.elements.login.focus();
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = form.elements;
  const body = {
    login: f.login.value.trim(),
    email: f.email.value.trim(),
    password: f.password.value,
    password_confirmation: f.password_confirmation.value,
  };
  clearFieldErrors(form);
  busy(form, true);
  status(msg, 'Creating the administrator…');
  try {
    await api('/setup.json', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Setup-Token': token },
      body: JSON.stringify(body),
    });
  } catch (e) {
    status(msg, 'The administrator was not created: ' + e.message, true);
    busy(form, false);
    (showFieldErrors(form, e) || f.login).focus();
    return;
  }
  forgetSession();
  status(msg, 'Administrator ' + body.login + ' created, and signed in. Opening the home page…');
  location.assign('/');
});

init();
