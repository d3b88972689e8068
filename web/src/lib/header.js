// The site header of every page (layout.html's nav): a visitor keeps the
// server-rendered "Sign in" and "Sign up" links (which then come back to
// the page they left); a signed-in person gets their login and the links to
// upload, make a map, their account, the groups (administrators) and a
// sign-out button. Also the helpers of the pages that need a sign-in.
import './app.css';
import { api, el, forgetSession, session } from './common.js';
import { safeNext } from './next.js';

export { safeNext };

/** nextParam is the page to go to after signing in: ?next=, checked. */
export function nextParam() {
  return safeNext(new URLSearchParams(location.search).get('next'));
}

/** signInHref links to the sign-in page, coming back to path afterwards. */
export function signInHref(path = location.pathname + location.search) {
  return '/app/signin?next=' + encodeURIComponent(path);
}

/** requireSession resolves to the session, or sends a visitor to sign in
 * (coming back here) and resolves to null. */
export async function requireSession() {
  const s = await session();
  if (!s) location.replace(signInHref());
  return s;
}

/** signOut ends the session on the server and goes home. */
async function signOut(button) {
  button.disabled = true;
  try {
    await api('/session.json', { method: 'DELETE' });
  } catch {
    // Gone already (expired, signed out elsewhere): the cookie is cleared anyway.
  }
  forgetSession();
  location.assign('/');
}

/** initHeader fills the header's nav for who is signed in. */
export async function initHeader() {
  const nav = document.querySelector('header.site nav ul');
  if (!nav) return;
  const s = await session();
  const onAuthPage = ['/app/signin', '/app/signup'].includes(location.pathname);
  if (!s) {
    // Sign in, then come back here (the sign-in pages keep their own next).
    const link = nav.querySelector('a[href="/app/signin"]');
    if (link && !onAuthPage) link.href = signInHref();
    return;
  }
  nav.querySelectorAll('li.visitor').forEach((li) => li.remove());
  const item = (href, text) => el('li', {}, el('a', { href, 'aria-current': location.pathname === href ? 'page' : null }, text));
  const out = el('button', { type: 'button', id: 'signout', class: 'link' }, 'Sign out');
  out.addEventListener('click', () => signOut(out));
  nav.append(...[
    item('/app/upload', 'Upload'),
    item('/app/editor', 'New map'),
    item('/app/account', 'Account'),
    s.admin && item('/app/groups', 'Groups'),
    el('li', { class: 'who' }, el('span', { id: 'who' }, 'Signed in as ', el('strong', {}, s.login))),
    el('li', {}, out),
  ].filter(Boolean));
  nav.dataset.signedIn = s.login;
}
