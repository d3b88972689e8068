// What every page shares: calling the API, building DOM nodes (text only,
// never HTML from data), and the sign-in links of the header.

/** api fetches a JSON answer of the API from this server, with the
 * browser's session; it throws an Error carrying the API's message. */
export async function api(path, opts = {}) {
  const res = await fetch(path, { credentials: 'same-origin', headers: { Accept: 'application/json' }, ...opts });
  if (!res.ok) {
    let msg = res.status + ' ' + res.statusText;
    try {
      const body = await res.json();
      if (body.error) msg = body.error;
    } catch { /* not JSON: keep the status */ }
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  return res.json();
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

/** entryID splits a search entry's id ("Overlay:12") into its kind and number. */
export function entryID(entry) {
  const [kind, pk] = String(entry.id || '').split(':');
  return { kind: kind.toLowerCase() === 'map' ? 'map' : 'dataset', pk: entry.pk ?? Number(pk) };
}

/** entryHref is where a search entry opens: datasets on their page, maps
 * (no page yet) as the API's JSON. */
export function entryHref(entry) {
  const { kind, pk } = entryID(entry);
  return kind === 'dataset' ? '/app/datasets/' + pk : '/maps/' + pk + '.json';
}

/** tagList reads the tags of an entry, a comma-separated string or a list. */
export function tagList(tags) {
  if (Array.isArray(tags)) return tags.filter(Boolean);
  return String(tags || '').split(',').map((t) => t.trim()).filter(Boolean);
}

/** entryItem renders one search entry as a list item. */
export function entryItem(entry) {
  const { kind } = entryID(entry);
  const owner = entry.author?.name || entry.contributor?.name || '';
  return el('li', { class: 'entry' },
    el('h3', {}, el('a', { href: entryHref(entry) }, entry.title || entry.name || '(untitled)')),
    el('p', { class: 'meta' },
      el('span', { class: 'kind kind-' + kind }, kind === 'map' ? 'Map' : 'Dataset'),
      owner && el('span', { class: 'owner' }, ' by ' + owner),
      entry.feature_count != null && el('span', {}, ' · ' + entry.feature_count + ' features'),
      entry.bbox && el('span', { class: 'extent' }, ' · extent ' + (Array.isArray(entry.bbox) ? entry.bbox.join(', ') : entry.bbox))),
    entry.description && el('p', { class: 'desc' }, entry.description),
    tagList(entry.tags).length > 0 && el('ul', { class: 'tags', 'aria-label': 'tags' },
      tagList(entry.tags).map((t) => el('li', {}, el('a', { href: '/app/search?q=' + encodeURIComponent('tag:' + t) }, t)))));
}

/** status shows a message in the page's live region. */
export function status(node, text, isError = false) {
  node.textContent = text;
  node.classList.toggle('error', isError);
}
