// What every page shares: calling the API, building DOM nodes (text only,
// never HTML from data), and the sign-in links of the header.
import { initHeader } from './header.js';
import { entryExtent, entryHref, entryID, entryImage, entryImageSrcset, tagList, thumbSize } from './entries.js';
import { counted } from './format.js';

// The search entries' helpers, for the pages that take them from here.
export { entryExtent, entryHref, entryID, tagList };

let current;

// The credentials of the page's requests: the visitor's ('same-origin'),
// or none ('omit') on a page that shows only what anyone may see (the
// embed of a map in another site's frame).
let credentials = 'same-origin';

/** omitCredentials makes every later request of the page go without the
 * visitor's session or saved logins. */
export function omitCredentials() {
  credentials = 'omit';
}

/** credentialsMode is the credentials mode of the page's requests. */
export function credentialsMode() {
  return credentials;
}

/** session resolves to who is signed in ({login, admin, csrf_token}, as
 * GET /session.json says), or null for a visitor; asked once a page. */
export function session() {
  // optional=1: a visitor is a 204, not a 401 (an error in the console).
  current ??= fetch('/session.json?optional=1', {
    credentials,
    headers: { Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
  }).then((res) => (res.status === 200 ? res.json() : null), () => null);
  return current;
}

/** forgetSession makes the next session() ask the server again (after a
 * sign-in or sign-out). */
export function forgetSession() {
  current = undefined;
}

/** requestHeaders are the headers of a request by the page: JSON wanted,
 * no Basic prompt on a 401 (X-Requested-With), and the session's CSRF
 * token on a request that changes state. */
export async function requestHeaders(method = 'GET', extra = {}) {
  const h = { Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest', ...extra };
  if (!['GET', 'HEAD'].includes(method.toUpperCase())) {
    const s = await session();
    if (s?.csrf_token) h['X-CSRF-Token'] = s.csrf_token;
  }
  return h;
}

/** apiError makes an Error of a failed answer: the API's message (its
 * "error" member) and the status. */
export async function apiError(res) {
  let msg = res.status + ' ' + res.statusText;
  let body = null;
  try {
    body = await res.json();
    if (body.error) msg = body.error;
  } catch { /* not JSON: keep the status */ }
  const err = new Error(msg);
  err.status = res.status;
  err.body = body; // the whole answer: per-field messages beside "error"
  return err;
}

/** api fetches a JSON answer of the API from this server, with the
 * browser's session (and its CSRF token when the method changes state),
 * or without credentials after omitCredentials; it throws an Error
 * carrying the API's message. A 204 gives null. */
export async function api(path, opts = {}) {
  const method = opts.method || 'GET';
  const headers = await requestHeaders(method, opts.headers);
  const res = await fetch(path, { credentials, ...opts, headers });
  if (!res.ok) throw await apiError(res);
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

/** el makes an element with attributes (on* are listeners) and children
 * (strings become text nodes). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c != null && c !== false) e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

/** entryThumb is the thumbnail of a search entry (its image, decorative:
 * the title beside it says what it is), loaded when it comes near the
 * screen. Where the viewer may not fetch the image, or it fails (refused,
 * not drawn), an empty box of its size stands in: nothing broken shows. */
function entryThumb(entry) {
  const none = () => el('span', { class: 'thumb thumb-none', 'aria-hidden': 'true' });
  const src = entryImage(entry);
  if (!src) return none();
  // loading before src: the browser waits from the start.
  const img = el('img', { class: 'thumb', loading: 'lazy', decoding: 'async', alt: '',
    width: String(thumbSize.width), height: String(thumbSize.height), srcset: entryImageSrcset(entry), src });
  img.addEventListener('error', () => img.replaceWith(none()), { once: true });
  return img;
}

/** entryItem renders one search entry as a card: its thumbnail, then its
 * title, kind, owner, number of features, description and tags; i, its
 * place in the list, names it (data-entry) for the map of the results. */
export function entryItem(entry, i) {
  const { kind } = entryID(entry);
  const owner = entry.author?.name || entry.contributor?.name || '';
  const extent = entryExtent(entry);
  return el('li', { class: 'entry card', 'data-entry': Number.isInteger(i) ? String(i) : null }, entryThumb(entry), el('div', { class: 'entry-text' },
    el('h3', {}, el('a', { href: entryHref(entry) }, entry.title || entry.name || '(untitled)')),
    el('p', { class: 'meta' },
      el('span', { class: 'kind kind-' + kind }, kind === 'map' ? 'Map' : 'Dataset'),
      owner && el('span', { class: 'owner' }, ' by ' + owner),
      kind === 'dataset' && entry.feature_count != null && el('span', { class: 'count' }, ' · ' + counted(entry.feature_count, 'feature'))),
    entry.description && el('p', { class: 'desc' }, entry.description),
    tagList(entry.tags).length > 0 && el('ul', { class: 'tags', 'aria-label': 'tags' },
      tagList(entry.tags).map((t) => el('li', {}, el('a', { href: '/app/search?q=' + encodeURIComponent('tag:' + t) }, t)))),
    extent && el('p', { class: 'extent' }, 'Extent ' + extent)));
}

/** status shows a message in the page's live region. */
export function status(node, text, isError = false) {
  node.textContent = text;
  node.classList.toggle('error', isError);
}

// Every page has the site header: filled in once this module has run (the
// header module imports this one back).
initHeader();
