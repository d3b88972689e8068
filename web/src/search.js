// The search page: the API's search (GET /search.json) with the query,
// type, tag, owner, area and page of the address, so that every result
// page has a link. Tag and owner become the query's tag: and user: terms;
// the area, drawn on a small map (MapLibre, loaded only when the area is
// opened) or typed, is the bbox parameter (west,south,east,north). The
// same map outlines the results' extents (their footprints); a card
// hovered or focused highlights its footprint, a footprint hovered its
// card. On a wide screen the map opens by itself when a result has one.
import 'maplibre-gl/dist/maplibre-gl.css';
import './style.css';
import { api, entryItem, el, status } from './lib/common.js';
import { footprints, searchQuery } from './lib/entries.js';
import { count } from './lib/format.js';

const perPage = 10;
const params = new URLSearchParams(location.search);
const q = params.get('q') || '';
const type = params.get('type') || '';
const tag = (params.get('tag') || '').trim();
const owner = (params.get('owner') || '').trim();
const bbox = (params.get('bbox') || '').trim();
const page = Math.max(1, Number(params.get('page')) || 1);
const $ = (x) => document.getElementById(x);

$('q').value = q;
$('type').value = type;
$('tag').value = tag;
$('owner').value = owner;

const list = $('results');
const msg = $('results-status');
const pager = $('pager');

/** apiQuery is the API's query: the words typed, then tag: and user: terms. */
const apiQuery = () => searchQuery(q, tag, owner);

/** pageHref is the address of another page of these results. */
function pageHref(n) {
  const p = new URLSearchParams();
  for (const [k, v] of [['q', q], ['type', type], ['tag', tag], ['owner', owner], ['bbox', bbox]]) if (v) p.set(k, v);
  if (n > 1) p.set('page', String(n));
  const s = p.toString();
  return '/app/search' + (s ? '?' + s : '');
}

/** run asks the API and shows the results, their count and the pages. */
async function run() {
  status(msg, 'Searching…');
  const p = new URLSearchParams({ query: apiQuery(), limit: String(perPage), page: String(page) });
  if (type) p.set('model', type);
  if (bbox) p.set('bbox', bbox);
  const path = '/search.json?' + p;
  $('search-url').href = path;
  $('search-url').textContent = new URL(path, location.href).href;
  $('search-url-p').hidden = false;
  try {
    const res = await api(path);
    list.replaceChildren(...res.entries.map(entryItem));
    const total = res.totalResults || 0;
    const first = (page - 1) * perPage + 1;
    status(msg, total === 0 ? 'No results.' : `Results ${count(first)}–${count(first + res.entries.length - 1)} of ${count(total)}`);
    const last = Math.max(1, Math.ceil(total / perPage));
    pager.replaceChildren(
      page > 1 ? el('a', { href: pageHref(page - 1), rel: 'prev' }, '← Previous') : '',
      el('span', {}, ` Page ${count(page)} of ${count(last)} `),
      page < last ? el('a', { href: pageHref(page + 1), rel: 'next' }, 'Next →') : '');
    shown = footprints(res.entries);
    showFootprints();
    if (shown.features.length && matchMedia('(min-width: 900px)').matches) $('area').open = true;
  } catch (e) {
    status(msg, 'The search failed: ' + e.message, true);
  }
}

// ---- The results' footprints ----

let shown = footprints([]); // the results' extents, as outlines
let searchMap; // the small map, once loaded
let lit = null; // the entry highlighted

/** showFootprints puts the results' outlines on the map (once it is
 * loaded), and frames them when no area is asked for. */
function showFootprints() {
  const src = searchMap?.getSource('footprints');
  if (!src) return;
  src.setData(shown);
  const container = $('search-map');
  container.dataset.footprints = String(shown.features.length);
  if (!bbox && shown.features.length) {
    const c = shown.features.flatMap((f) => f.geometry.coordinates[0]);
    const xs = c.map((p) => p[0]);
    const ys = c.map((p) => p[1]);
    searchMap.fitBounds([[Math.min(...xs), Math.min(...ys)], [Math.max(...xs), Math.max(...ys)]], { padding: 20, maxZoom: 10, duration: 0 });
  }
  container.dataset.state = 'loading';
  searchMap.once('idle', () => { container.dataset.state = 'idle'; });
  searchMap.triggerRepaint();
}

/** highlight lights entry i's card and footprint (null: none). */
function highlight(i) {
  if (i === lit) return;
  if (lit != null) {
    list.querySelector(`li.entry[data-entry="${lit}"]`)?.classList.remove('highlight');
    searchMap?.setFeatureState({ source: 'footprints', id: lit }, { lit: false });
  }
  lit = i;
  if (i == null) return;
  list.querySelector(`li.entry[data-entry="${i}"]`)?.classList.add('highlight');
  if (searchMap && shown.features.some((f) => f.id === i)) searchMap.setFeatureState({ source: 'footprints', id: i }, { lit: true });
}

/** entryOf is the place in the list of the card holding node, or null. */
const entryOf = (node) => {
  const li = node instanceof Element ? node.closest('li.entry[data-entry]') : null;
  return li ? Number(li.dataset.entry) : null;
};
list.addEventListener('mouseover', (e) => highlight(entryOf(e.target)));
list.addEventListener('mouseleave', () => highlight(null));
list.addEventListener('focusin', (e) => highlight(entryOf(e.target)));
list.addEventListener('focusout', (e) => { if (!list.contains(e.relatedTarget)) highlight(null); });

// ---- The area ----

const boxInputs = ['w', 's', 'e', 'n'].map((k) => $('sb-' + k));
const boxText = $('search-box-text');
if (bbox) {
  bbox.split(',').forEach((v, i) => { if (boxInputs[i]) boxInputs[i].value = v; });
  boxText.textContent = 'Within ' + bbox + ' (W, S, E, N).';
  $('area').open = true;
}

/** typedBox is the area typed in the four numbers, or '' when incomplete. */
function typedBox() {
  const v = boxInputs.map((i) => i.value.trim());
  return v.every((x) => x !== '' && Number.isFinite(Number(x))) ? v.join(',') : '';
}

$('search-form').addEventListener('submit', () => { $('bbox').value = typedBox(); });
$('search-clear-box').addEventListener('click', () => {
  for (const i of boxInputs) i.value = '';
  $('bbox').value = '';
  $('search-form').requestSubmit();
});

let drawer;
/** openMap makes the small map of the area (once), with the box drawer. */
async function openMap() {
  if (drawer) return;
  const maplibregl = await import('maplibre-gl');
  const { basemapStyle, boxDrawer, boxPolygon, showOutline } = await import('./lib/geo.js');
  const worker = document.querySelector('meta[name="mc-worker"]');
  if (worker) maplibregl.setWorkerUrl(worker.content);
  const b = bbox ? bbox.split(',').map(Number) : null;
  const map = new maplibregl.Map({
    container: 'search-map', style: await basemapStyle(), center: [0, 20], zoom: 0.5,
    bounds: b && b.every(Number.isFinite) ? [[b[0], b[1]], [b[2], b[3]]] : undefined,
    fitBoundsOptions: { padding: 20 },
    canvasContextAttributes: { preserveDrawingBuffer: true }, attributionControl: { compact: true },
  });
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }), 'top-right');
  map.on('load', () => {
    map.addSource('footprints', { type: 'geojson', data: shown });
    const on = ['boolean', ['feature-state', 'lit'], false];
    map.addLayer({ id: 'footprints-fill', type: 'fill', source: 'footprints', paint: { 'fill-color': '#1c7ed6', 'fill-opacity': ['case', on, 0.35, 0.08] } });
    map.addLayer({ id: 'footprints-line', type: 'line', source: 'footprints', paint: { 'line-color': ['case', on, '#d9480f', '#0b4f8a'], 'line-width': ['case', on, 3, 1.5] } });
    map.on('mousemove', 'footprints-fill', (e) => highlight(e.features[0]?.properties.entry ?? null));
    map.on('mouseleave', 'footprints-fill', () => highlight(null));
    if (b && b.every(Number.isFinite)) showOutline(map, 'sbox', boxPolygon(b));
    searchMap = map;
    window.mcMap = map;
    showFootprints();
    if (lit != null) { const i = lit; lit = null; highlight(i); }
  });
  drawer = boxDrawer(map, (box) => {
    box.forEach((v, i) => { boxInputs[i].value = v; });
    $('bbox').value = box.join(',');
    $('search-form').requestSubmit();
  });
}

$('area').addEventListener('toggle', () => { if ($('area').open) openMap(); });
if ($('area').open) openMap();
$('search-draw').addEventListener('click', async (e) => {
  const button = e.currentTarget;
  await openMap();
  const on = !drawer.active;
  drawer.setActive(on);
  button.setAttribute('aria-pressed', String(on));
});

// Escape leaves drawing.
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || !drawer?.active) return;
  drawer.setActive(false);
  $('search-draw').setAttribute('aria-pressed', 'false');
});

run();
