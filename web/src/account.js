// The account page: who is signed in, and two forms that change the
// account through the API (PUT /users/{login}.json): e-mail and name, and
// the password (the API asks for the current one, and for the new one
// twice, and with two-factor sign-in a code as at sign-in; it ends the
// account's other sessions). Two-factor sign-in: set up
// (the password; the secret shown once as a QR code, a URI and text; a
// first code confirms it; the recovery codes shown once) and removal
// (password and code), through /users/{login}/second_factor.json. Her own
// datasets and maps, newest first, as the cards of the other lists. A
// visitor is sent to sign in and comes back here.
import './style.css';
import { api, el, entryItem, status } from './lib/common.js';
import { requireSession } from './lib/header.js';
import { busy, clearFieldErrors, showFieldErrors } from './lib/forms.js';

const msg = document.getElementById('account-status');

// How many of her datasets and maps the page lists; the search page has
// the rest.
const mineLimit = 12;

/** fact is a term and its value in the facts list. */
function fact(term, value) {
  return [el('dt', {}, term), el('dd', {}, value)];
}

/** update sends fields of the user to the API from form, saying how it
 * went in out; it resolves to the user's new document, or null. */
async function update(login, form, out, user, done) {
  clearFieldErrors(form);
  busy(form, true);
  status(out, 'Saving…');
  try {
    const doc = await api('/users/' + encodeURIComponent(login) + '.json', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ user }),
    });
    status(out, done);
    out.classList.add('ok');
    return doc.User;
  } catch (e) {
    out.classList.remove('ok');
    status(out, 'Not saved: ' + e.message, true);
    showFieldErrors(form, e)?.focus();
    return null;
  } finally {
    busy(form, false);
  }
}

/** main fills the page for who is signed in, and wires its two forms. */
async function main() {
  const s = await requireSession();
  if (!s) return;
  let user;
  try {
    user = (await api('/users/' + encodeURIComponent(s.login) + '.json')).User;
  } catch (e) {
    status(msg, 'Your account could not be loaded: ' + e.message, true);
    return;
  }
  status(msg, '');
  document.getElementById('account').hidden = false;
  document.getElementById('account-facts').replaceChildren(
    ...fact('Login', user.login),
    ...fact('Member since', new Date(user.created_at).toLocaleDateString()),
    ...(user.admin ? fact('Role', 'Administrator') : []),
  );
  mine(s.login);

  const profile = document.getElementById('profile-form');
  profile.elements.email.value = user.email || '';
  profile.elements.fullname.value = user.fullname || '';
  profile.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    await update(s.login, profile, document.getElementById('profile-status'), {
      email: profile.elements.email.value.trim(),
      fullname: profile.elements.fullname.value.trim(),
    }, 'Saved: your e-mail and name are changed.');
  });

  const pw = document.getElementById('password-form');
  pw.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const code = pw.elements.code;
    const changed = await update(s.login, pw, document.getElementById('password-status'), {
      current_password: pw.elements.current_password.value,
      password: pw.elements.password.value,
      password_confirmation: pw.elements.password_confirmation.value,
      ...(code.required ? { code: code.value.trim() } : {}),
    }, 'Saved: your password is changed. Your other sessions are signed out.');
    if (changed) pw.reset();
  });
  twoFactor(s.login, user.second_factor);
}

/** mine lists login's own datasets and maps, newest first, as cards: the
 * search's user:<login> (the caller sees her private ones too), with a
 * link to the search page when there are more than the page lists. */
async function mine(login) {
  const list = document.getElementById('mine');
  const out = document.getElementById('mine-status');
  const more = document.getElementById('mine-more');
  const query = 'user:' + login;
  status(out, 'Loading your datasets and maps…');
  try {
    const page = await api('/search.json?' + new URLSearchParams({
      query, sort: 'created', order: 'descending', limit: String(mineLimit),
    }));
    list.replaceChildren(...page.entries.map(entryItem));
    const total = page.totalResults || 0;
    more.href = '/app/search?' + new URLSearchParams({ q: query });
    more.textContent = `All ${total.toLocaleString()} of your datasets and maps`;
    more.parentElement.hidden = total <= page.entries.length;
    status(out, page.entries.length ? '' : 'You have no datasets or maps yet: upload a dataset, then make a map of it.');
  } catch (e) {
    status(out, 'Your datasets and maps could not be loaded: ' + e.message, true);
  }
}

/** twoFactor wires the two-factor section for login, whose second factor
 * is state ("on", "pending" or "off"). */
function twoFactor(login, state) {
  const path = '/users/' + encodeURIComponent(login) + '/second_factor.json';
  const out = document.getElementById('tfa-status');
  const start = document.getElementById('tfa-start-form');
  const setup = document.getElementById('tfa-setup');
  const confirm = document.getElementById('tfa-confirm-form');
  const remove = document.getElementById('tfa-remove-form');
  const show = (st) => {
    document.getElementById('tfa-state').textContent = st === 'on'
      ? 'Two-factor sign-in is on.' : 'Two-factor sign-in is off.';
    start.hidden = st === 'on';
    remove.hidden = st !== 'on';
    if (st === 'on') setup.hidden = true;
    // The password form asks for a code while the second factor is on
    // (a pending one does not count at sign-in either).
    document.getElementById('pw-code-label').hidden = st !== 'on';
    document.getElementById('pw-code').required = st === 'on';
  };
  show(state);
  /** send calls the API from form, saying how it went; null on failure. */
  const send = async (form, method, body, done) => {
    clearFieldErrors(form);
    busy(form, true);
    try {
      const doc = await api(path, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      status(out, done);
      return doc || {};
    } catch (e) {
      status(out, 'Not done: ' + e.message, true);
      showFieldErrors(form, e)?.focus();
      return null;
    } finally {
      busy(form, false);
    }
  };
  start.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const doc = await send(start, 'POST', { password: start.elements.password.value }, 'Scan the code, then enter a code from the app.');
    if (!doc) return;
    start.reset();
    document.getElementById('tfa-qr').src = doc.qr_code;
    document.getElementById('tfa-secret').textContent = doc.secret;
    document.getElementById('tfa-uri').href = doc.otpauth_uri;
    setup.hidden = false;
    confirm.elements.code.focus();
  });
  confirm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const doc = await send(confirm, 'PUT', { code: confirm.elements.code.value.trim() }, 'Two-factor sign-in is on. Keep the recovery codes below.');
    if (!doc) return;
    confirm.reset();
    document.getElementById('tfa-code-list').replaceChildren(...doc.recovery_codes.map((c) => el('li', {}, el('code', {}, c))));
    document.getElementById('tfa-codes').hidden = false;
    show('on');
  });
  remove.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const doc = await send(remove, 'DELETE', {
      password: remove.elements.password.value, code: remove.elements.code.value.trim(),
    }, 'Two-factor sign-in is off.');
    if (!doc) return;
    remove.reset();
    document.getElementById('tfa-codes').hidden = true;
    show('off');
  });
}

main();
