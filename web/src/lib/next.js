// Where to go after signing in: the next= of the sign-in and sign-up
// pages, checked to be a path of this site. Pure (the page's origin is
// read only when none is given): the tests (web/test) run it in Node.

/** safeNext returns where to go after signing in: raw resolved as the
 * browser resolves it against this site (dot segments, "%2e", backslashes
 * as slashes), when that is a path of this site, as that resolved path;
 * else "/". Never another site: "//…" and "/\\…" name another host, and so
 * does a path that only becomes "//…" once resolved ("/.//evil",
 * "/a/..//evil", "/%2e//evil"), which is why the resolved path must not
 * start with "//" either. origin is this site's (the page's, unless
 * given). */
export function safeNext(raw, origin = location.origin) {
  if (typeof raw !== 'string' || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return '/';
  // Control characters (a tab inside "/\t/evil") are dropped by URL parsers.
  if (/[\u0000-\u001f\u007f]/.test(raw)) return '/';
  try {
    const u = new URL(raw, origin);
    const path = u.pathname + u.search + u.hash;
    if (u.origin !== origin || path.startsWith('//')) return '/';
    // What is returned is read again as a reference (location.assign, a
    // next= of its own): it must resolve to itself.
    const again = new URL(path, origin);
    return again.origin === origin && again.pathname + again.search + again.hash === path ? path : '/';
  } catch {
    return '/';
  }
}
