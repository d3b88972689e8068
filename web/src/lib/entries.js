// Reading the entries of a search (GET /search.json): their kind and
// number, where they open, their extent and tags. Pure: common.js renders
// them, the tests (web/test) read this module in Node.

/** entryID splits a search entry's id ("Overlay:12") into its kind and number. */
export function entryID(entry) {
  const [kind, pk] = String(entry.id || '').split(':');
  return { kind: kind.toLowerCase() === 'map' ? 'map' : 'dataset', pk: entry.pk ?? Number(pk) };
}

/** entryHref is where a search entry opens: its dataset's or map's page. */
export function entryHref(entry) {
  const { kind, pk } = entryID(entry);
  return (kind === 'dataset' ? '/app/datasets/' : '/app/maps/') + pk;
}

/** entryBox is a search entry's extent as [west, south, east, north]
 * numbers, or null: the API writes a dataset's "s,w,n,e" and a map's
 * "w,s,e,n" (or a list). */
export function entryBox(entry) {
  const v = (Array.isArray(entry.bbox) ? entry.bbox : String(entry.bbox || '').split(',')).map(Number);
  if (v.length !== 4 || !v.every(Number.isFinite)) return null;
  return entryID(entry).kind === 'dataset' && !Array.isArray(entry.bbox) ? [v[1], v[0], v[3], v[2]] : v;
}

/** entryExtent writes a search entry's extent as W, S, E, N. */
export function entryExtent(entry) {
  const b = entryBox(entry);
  if (!b) return '';
  const [w, s, e, n] = b;
  const r = (x) => Math.round(x * 1e4) / 1e4;
  return `W ${r(w)}, S ${r(s)}, E ${r(e)}, N ${r(n)}`;
}

/** footprints are the extents of search entries as a GeoJSON
 * FeatureCollection of outlines for a map, each feature's id and its
 * "entry" property the entry's position in the list (entries without an
 * extent have none); a box of no width or height (a single point) is
 * widened a little so that its outline shows. */
export function footprints(entries) {
  const features = [];
  entries.forEach((entry, i) => {
    const b = entryBox(entry);
    if (!b) return;
    let [w, s, e, n] = b;
    const pad = 0.01;
    if (e - w < pad) { w -= pad; e += pad; }
    if (n - s < pad) { s -= pad; n += pad; }
    s = Math.max(s, -85); n = Math.min(n, 85);
    features.push({ type: 'Feature', id: i, properties: { entry: i, title: entry.title || entry.name || '' },
      geometry: { type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] } });
  });
  return { type: 'FeatureCollection', features };
}

/** tagList reads the tags of an entry, a comma-separated string or a list. */
export function tagList(tags) {
  if (Array.isArray(tags)) return tags.filter(Boolean);
  return String(tags || '').split(',').map((t) => t.trim()).filter(Boolean);
}

/** term writes a field's term of a search query, quoted (its own quotes
 * dropped) when it has a space or a quote. */
const term = (field, v) => field + ':' + (/[\s"]/.test(v) ? '"' + v.replaceAll('"', '') + '"' : v);

/** searchQuery is the API's query of the search page: the words typed,
 * then the tag: and user: terms of its tag and owner (when given). */
export function searchQuery(q, tag, owner) {
  return [q.trim(), tag && term('tag', tag), owner && term('user', owner)].filter(Boolean).join(' ');
}

/** thumbSize is a list's thumbnail, in CSS pixels. */
export const thumbSize = { width: 120, height: 90 };

/** entryImage is the URL of a search entry's image (GET /datasets/{id}.png
 * or /maps/{id}.png) width×height CSS pixels at scale (1: not said), or ''
 * when the viewer may not fetch it: a dataset they may view but not
 * download (its image would be refused). A map's image leaves out what the
 * viewer may not download, so it is always there. */
export function entryImage(entry, width = thumbSize.width, height = thumbSize.height, scale = 1) {
  const { kind, pk } = entryID(entry);
  if (!Number.isInteger(pk) || pk < 1) return '';
  if (kind === 'dataset' && entry.permissions && entry.permissions.download === false) return '';
  const q = new URLSearchParams({ width: String(Math.round(width)), height: String(Math.round(height)) });
  if (scale !== 1) q.set('scale', String(scale));
  return `/${kind === 'map' ? 'maps' : 'datasets'}/${pk}.png?${q}`;
}

/** entryImageSrcset is the srcset of an entry's image: the image at 1x and
 * at 2x (HiDPI screens), or '' when there is no image. */
export function entryImageSrcset(entry, width = thumbSize.width, height = thumbSize.height) {
  const one = entryImage(entry, width, height);
  return one && `${one} 1x, ${entryImage(entry, width, height, 2)} 2x`;
}
