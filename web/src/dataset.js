// The dataset page: its metadata from GET /datasets/{id}.json, its
// features on a MapLibre map (GeoJSON for small datasets, the OGC vector
// tiles for big ones) with popups, an attribute table paged and sorted by
// the API, its downloads; the query builder (a box, a radius around a
// point, attribute filters; group_by and aggregates as a table and a bar
// chart) whose results show on the map and in the table with the API URL
// that gives them; and for those who may edit it, metadata editing,
// feature deletion and the sharing panel. Nothing here reads every row on
// load: the table asks for one page, counts and groups only on demand.
import 'maplibre-gl/dist/maplibre-gl.css';
import './style.css';
import * as maplibregl from 'maplibre-gl';
import { api, el, session, status, tagList } from './lib/common.js';
import { basemapStyle, boxDrawer, boxPolygon, circlePolygon, showOutline } from './lib/geo.js';
import { barChart, fmt } from './lib/chart.js';
import { sharePanel } from './lib/share.js';
import { count, counted } from './lib/format.js';
import { gisURLs } from './lib/gisurls.js';
import { densityMin, densityNote, densitySpecs, single } from './lib/style.js';

// Datasets up to this many features are drawn from one GeoJSON answer;
// bigger ones from vector tiles. A query's matches are drawn up to it too.
const geojsonMax = 5000;
const rowsPerPage = 20;
// The most groups the table and the chart show.
const maxGroupsShown = 200;
// The API's largest page (mapcommons.MaxFeatureLimit).
const maxLimit = 10000;

const root = document.getElementById('dataset');
const id = root.dataset.id;
const $ = (x) => document.getElementById(x);
const msg = $('dataset-status');
const worker = document.querySelector('meta[name="mc-worker"]');
if (worker) maplibregl.setWorkerUrl(worker.content);
// The map's workers start now, while the dataset's JSON is on its way.
maplibregl.prewarm();

/** abs makes a path of this server absolute, as MapLibre's workers need. */
const abs = (p) => new URL(p, location.href).href;

/** featuresPath is the features.json path of this dataset with a query string. */
const featuresPath = (q) => `/datasets/${id}/features.json` + (q ? '?' + q : '');

/** qs writes [key, value] pairs as a query string, keeping the brackets of
 * keys readable (keys are encoded by whoever made them). */
const qs = (pairs) => pairs.map(([k, v]) => k + '=' + encodeURIComponent(v).replace(/%2C/g, ',')).join('&');

let ds; // the dataset's JSON
let map; // the MapLibre map, once made
let canEdit = false;

/** showMetadata fills the heading, description and facts of the dataset. */
function showMetadata() {
  document.title = ds.title + ' · mapcommons';
  $('title').textContent = ds.title || '(untitled)';
  const facts = [
    ['Owner', ds.contributor || ''],
    ['Author', ds.author],
    ['Features', count(ds.feature_count)],
    ['Geometry', (ds.geometry_types || []).join(', ')],
    ['Tags', tagList(ds.tags).join(', ')],
    ['Extent (W, S, E, N)', ds.extent ? ds.extent.map((v) => v.toFixed(4)).join(', ') : ''],
    ['Source', ds.source],
    ['Published', ds.published],
  ].filter(([, v]) => v);
  $('facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', { 'data-fact': k }, v)]));
  $('description').textContent = ds.description || '';
}

/** showDownloads lists the dataset in every download format. */
function showDownloads() {
  const formats = [['csv', 'CSV'], ['geojson', 'GeoJSON'], ['kml', 'KML'], ['kmz', 'KMZ'], ['zip', 'Shapefile (zip)'],
    ['gpkg', 'GeoPackage'], ['sqlite', 'SpatiaLite'], ['atom', 'Atom'], ['json', 'JSON']];
  $('downloads').replaceChildren(...formats.map(([ext, name]) =>
    el('li', {}, el('a', { href: `/datasets/${ds.id}.${ext}`, download: ext === 'json' ? null : true }, name))));
}

/** copyText puts text on the clipboard and says so in node (a live
 * region); where the clipboard is not offered (a page over plain HTTP on
 * another host, a refused permission) it selects target's text for the
 * visitor to copy with their keys. */
async function copyText(text, target, node, what) {
  try {
    if (!navigator.clipboard?.writeText) throw new Error('no clipboard');
    await navigator.clipboard.writeText(text);
    status(node, `Copied: ${what}.`);
  } catch {
    getSelection().selectAllChildren(target);
    status(node, `Selected: ${what}; press Ctrl+C (⌘C on a Mac) to copy it.`);
  }
}

/** urlRow is one address to paste: the address, then its copy button. */
function urlRow(url, what) {
  const code = el('code', { class: 'gis-url' }, url);
  return el('p', { class: 'gis-row' }, code, ' ', el('button', {
    type: 'button', class: 'secondary small copy', 'data-url': url,
    onclick: () => copyText(url, code, $('gis-status'), what),
  }, 'Copy', el('span', { class: 'visually-hidden' }, ' the ' + what)));
}

/** showGISURLs lists the addresses a GIS user pastes (OGC API – Features,
 * the vector tiles' TileJSON, WMS, the map tiles' template), absolute, of
 * this server, each with a copy button and how QGIS opens it. A dataset
 * not shared with everyone, on an appliance, needs the visitor's
 * credentials in QGIS too. */
async function showGISURLs() {
  const urls = gisURLs(location.origin, ds);
  $('gis-urls').replaceChildren(...urls.flatMap((u) => [
    el('dt', {}, u.label),
    el('dd', { 'data-gis': u.key },
      urlRow(u.url, u.label + ' URL'),
      u.also && el('p', { class: 'hint' }, 'This dataset’s collection:'),
      u.also && urlRow(u.also, u.label + ' collection URL'),
      u.layer && el('p', { class: 'hint' }, 'Layer: ', el('code', {}, u.layer)),
      el('p', { class: 'hint qgis' }, 'QGIS: ' + u.qgis)),
  ]));
  const me = await session();
  const open = (ds.permissions || []).some((p) => p.group_id === 'everyone' && p.permissions?.view);
  if (me?.mode === 'appliance' && !open) {
    $('gis-auth').textContent = 'This dataset is not public: QGIS needs your user name and password (in the connection’s Authentication tab, Basic), GDAL the same (GDAL_HTTP_USERPWD). The tiles and WMS answer who may download it.';
    $('gis-auth').hidden = false;
  }
  $('gis-auth').dataset.checked = 'true';
}

const polygons = ['in', ['geometry-type'], ['literal', ['Polygon', 'MultiPolygon']]];
const lines = ['in', ['geometry-type'], ['literal', ['LineString', 'MultiLineString']]];
const points = ['in', ['geometry-type'], ['literal', ['Point', 'MultiPoint']]];
const dataLayers = ['data-fill', 'data-line', 'data-point', 'data-cluster'];
const queryLayers = ['query-fill', 'query-line', 'query-point'];

/** small reports whether the whole dataset is drawn from one GeoJSON answer
 * (?tiles=1 draws from the vector tiles whatever the size). */
const small = () => ds.feature_count <= geojsonMax && new URLSearchParams(location.search).get('tiles') !== '1';
/** dense reports whether the dataset's points are drawn for density: from
 * the tiles, past densityMin features, some of them points. */
const dense = () => !small() && ds.feature_count > densityMin && (ds.geometry_types || ['point']).includes('point');
const dataURL = () => abs(featuresPath(`geojson=1&limit=${geojsonMax}&v=${encodeURIComponent(ds.updated_at)}`));
const tilesURL = () => abs(`/ogc/collections/${ds.id}/tiles/WebMercatorQuad/tilejson.json?v=${encodeURIComponent(ds.updated_at)}`);

/** layersOf are the layers drawing source src (its source-layer srcLayer
 * for tiles) in a colour, with ids prefix-fill, -line and -point. */
function layersOf(prefix, src, srcLayer, fill, stroke) {
  const s = srcLayer ? { 'source-layer': srcLayer } : {};
  return [
    { id: prefix + '-fill', type: 'fill', source: src, ...s, filter: polygons, paint: { 'fill-color': fill, 'fill-opacity': 0.55 } },
    { id: prefix + '-line', type: 'line', source: src, ...s, filter: ['any', polygons, lines], paint: { 'line-color': stroke, 'line-width': 1 } },
    { id: prefix + '-point', type: 'circle', source: src, ...s, filter: points, paint: { 'circle-color': fill, 'circle-radius': 4, 'circle-stroke-color': '#fff', 'circle-stroke-width': 1 } },
  ];
}

// Who is signed in is asked for at once too.
session();
// The basemap's style is asked for at once, beside the dataset's JSON.
const basemap = basemapStyle();

/** pageStyle is the basemap with the dataset's source and layers and the
 * query's (empty until a query runs) in it from the start, so that the
 * data loads with the basemap rather than after it. */
async function pageStyle() {
  const style = structuredClone(await basemap);
  const tiled = !small();
  style.sources = {
    ...style.sources,
    data: tiled ? { type: 'vector', url: tilesURL() } : { type: 'geojson', data: dataURL() },
    query: { type: 'geojson', data: { type: 'FeatureCollection', features: [] } },
  };
  // The clusters' numbers are drawn with the server's glyphs.
  style.glyphs ||= location.origin + '/basemap/fonts/{fontstack}/{range}.pbf';
  const data = layersOf('data', 'data', tiled ? String(ds.id) : null, '#d9480f', '#7a2906');
  if (dense()) {
    // Many points: the tiles' thinned points drawn as clusters sized and
    // numbered by how many points each stands for, under the lone points.
    const pt = data.pop();
    data.push(...densitySpecs('data', '#d9480f').map((l) => ({ ...l, source: 'data', 'source-layer': String(ds.id) })),
      { ...pt, filter: single });
  }
  style.layers = [...style.layers, ...data, ...layersOf('query', 'query', null, '#ae3ec9', '#5f1a70')];
  return style;
}

/** showMap draws the features and opens a popup of attributes on click. */
async function showMap() {
  const container = $('map');
  map = new maplibregl.Map({
    container,
    style: await pageStyle(),
    bounds: ds.extent ? [[ds.extent[0], ds.extent[1]], [ds.extent[2], ds.extent[3]]] : undefined,
    fitBoundsOptions: { padding: 20 },
    // Kept so that the page (and the tests) can read the drawn pixels.
    canvasContextAttributes: { preserveDrawingBuffer: true },
    attributionControl: { compact: true },
    // Labels show at once: no 300 ms fade before the map is complete.
    fadeDuration: 0,
  });
  map.addControl(new maplibregl.NavigationControl(), 'top-right');
  window.mcMap = map; // for the tests
  // The map's legend: what its clusters mean, when it has them.
  $('map-legend').replaceChildren(...(dense() ? [el('p', { class: 'density' }, densityNote)] : []));
  map.on('load', () => {
    showOutline(map, 'qbox', null);
    showOutline(map, 'qcircle', null);
    // The map is drawn: say so (the tests wait for it, and time it).
    redrawn(() => performance.mark('mc-map-drawn'));
  });
  map.on('click', (e) => {
    if (picking) {
      pickPoint(e.lngLat);
      return;
    }
    const f = map.queryRenderedFeatures(e.point, { layers: [...queryLayers, ...dataLayers].filter((l) => map.getLayer(l)) })[0];
    if (!f) return;
    const rows = Object.entries(f.properties).map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, String(v))));
    new maplibregl.Popup({ maxWidth: '320px' }).setLngLat(e.lngLat)
      .setDOMContent(el('table', { class: 'popup' }, el('tbody', {}, rows))).addTo(map);
  });
  for (const l of [...dataLayers, ...queryLayers]) {
    map.on('mouseenter', l, () => { map.getCanvas().style.cursor = 'pointer'; });
    map.on('mouseleave', l, () => { map.getCanvas().style.cursor = ''; });
  }
  drawer = boxDrawer(map, (b) => {
    ['w', 's', 'e', 'n'].forEach((k, i) => { $('bbox-' + k).value = b[i]; });
    setToggle($('draw-box'), false);
    drawer.setActive(false);
    outlines();
  });
}

let draws = 0; // the changes of the map drawn since the page opened

/** redrawn marks the map as drawing (data-state "loading") until
 * MapLibre's next idle, the render after which nothing is loading or in
 * transition, then runs after and marks it idle with one more draw in
 * data-draws. Called with each change of the map, so that whoever reads
 * the map's pixels (the tests) can wait for the change to be drawn: the
 * count passing what it was before the change says so. */
function redrawn(after) {
  const container = $('map');
  container.dataset.state = 'loading';
  map.once('idle', () => {
    after?.();
    container.dataset.draws = String(++draws);
    container.dataset.state = 'idle';
  });
  // An idle comes only after a render: one is asked for should the
  // change not need any.
  map.triggerRepaint();
}

/** whenMapReady runs f once the map's style and sources are added. */
function whenMapReady(f) {
  if (map && map.getSource('qcircle')) f();
  else setTimeout(() => whenMapReady(f), 50);
}

// ---- The attribute table ----

/** The table's state: its page, its sort, the query's selection it pages
 * (pairs of the query string) and how many rows that selects. */
const table = { start: 0, sort: '', order: 'ascending', columns: [], total: 0, sel: [] };

/** showTable draws the table's current page as the API gives it. */
async function showTable() {
  const tmsg = $('table-status');
  const pairs = [...table.sel, ['geojson', '1'], ['start', String(table.start)], ['limit', String(rowsPerPage)]];
  if (table.sort) pairs.push(['sort', table.sort], ['order', table.order]);
  status(tmsg, 'Loading…');
  let fc;
  try {
    fc = await api(featuresPath(qs(pairs)));
  } catch (e) {
    status(tmsg, 'The features could not be loaded: ' + e.message, true);
    return;
  }
  const head = el('tr', {}, canEdit && el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Select')), table.columns.map((c) => {
    const sorted = table.sort === c;
    const dir = sorted ? table.order : 'none';
    return el('th', { scope: 'col', 'aria-sort': dir },
      el('button', { type: 'button', 'data-column': c, onclick: () => sortBy(c) }, c, sorted ? (table.order === 'ascending' ? ' ▲' : ' ▼') : ''));
  }));
  const body = fc.features.map((f, i) => el('tr', { 'data-fid': f.id },
    canEdit && el('td', {}, el('input', { type: 'checkbox', class: 'row-select', 'data-fid': f.id, 'aria-label': `Select row ${table.start + i + 1}` })),
    table.columns.map((c) => el('td', {}, f.properties[c] == null ? '' : String(f.properties[c])))));
  $('table').replaceChildren(el('thead', {}, head), el('tbody', {}, body));
  const last = Math.min(table.start + fc.features.length, table.total);
  if (!performance.getEntriesByName('mc-table').length) performance.mark('mc-table');
  status(tmsg, table.total ? `Rows ${count(table.start + 1)}–${count(last)} of ${count(table.total)}` + (table.sel.length ? ' (the query’s)' : '') : 'No features.');
  $('prev').disabled = table.start === 0;
  $('next').disabled = last >= table.total;
}

/** sortBy sorts the table by a column, or reverses its order when it is the sort. */
function sortBy(c) {
  if (table.sort === c) table.order = table.order === 'ascending' ? 'descending' : 'ascending';
  else Object.assign(table, { sort: c, order: 'ascending' });
  table.start = 0;
  showTable();
}

$('prev').addEventListener('click', () => { table.start = Math.max(0, table.start - rowsPerPage); showTable(); });
$('next').addEventListener('click', () => { table.start += rowsPerPage; showTable(); });

// ---- The query builder ----

let drawer; // the box drawer of the map
let picking = false; // the next map click sets the radius's point

/** setToggle shows a toggle button's state. */
function setToggle(button, on) {
  button.setAttribute('aria-pressed', String(on));
  button.classList.toggle('active', on);
}

$('draw-box').addEventListener('click', (e) => {
  const on = !drawer?.active;
  drawer?.setActive(on);
  setToggle(e.currentTarget, on);
  if (on) { picking = false; setToggle($('pick-point'), false); }
});
$('pick-point').addEventListener('click', (e) => {
  picking = !picking;
  setToggle(e.currentTarget, picking);
  if (picking && drawer?.active) { drawer.setActive(false); setToggle($('draw-box'), false); }
});

// Escape leaves drawing and picking.
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape') return;
  if (drawer?.active) drawer.setActive(false);
  picking = false;
  setToggle($('draw-box'), false);
  setToggle($('pick-point'), false);
});

/** pickPoint takes a clicked point as the radius's centre. */
function pickPoint(ll) {
  $('near-lat').value = Math.round(ll.lat * 1e5) / 1e5;
  $('near-lon').value = Math.round(ll.lng * 1e5) / 1e5;
  if (!$('near-radius').value) $('near-radius').value = '10';
  picking = false;
  setToggle($('pick-point'), false);
  outlines();
  $('near-radius').focus();
}

/** typeOf is the type of an attribute (integer, float, string, boolean, date). */
const typeOf = (name) => (ds.data_attributes || []).find((a) => a.name === name)?.data_type || 'string';

/** opsFor are the filter operations an attribute's type allows. */
function opsFor(type) {
  if (type === 'integer' || type === 'float' || type === 'date') return [['equals', 'equals'], ['min', 'at least'], ['max', 'at most'], ['in', 'one of (a|b|c)']];
  if (type === 'boolean') return [['equals', 'equals']];
  return [['equals', 'equals'], ['in', 'one of (a|b|c)']];
}

let filterN = 0;
/** addFilter adds a condition row: attribute, operation, value. */
function addFilter(attr, op, value) {
  const n = ++filterN;
  const names = (ds.data_attributes || []).map((a) => a.name);
  const attrSel = el('select', { id: `f-attr-${n}`, class: 'f-attr' }, names.map((a) => el('option', { value: a, selected: a === attr }, a)));
  const opSel = el('select', { id: `f-op-${n}`, class: 'f-op' });
  const val = el('input', { id: `f-val-${n}`, class: 'f-val', value: value ?? '' });
  /** fillOps offers the operations of the chosen attribute's type. */
  const fillOps = () => {
    const type = typeOf(attrSel.value);
    opSel.replaceChildren(...opsFor(type).map(([v, label]) => el('option', { value: v, selected: v === op }, label)));
    val.type = (type === 'integer' || type === 'float') && opSel.value !== 'in' ? 'number' : 'text';
    if (val.type === 'number') val.step = 'any';
  };
  attrSel.addEventListener('change', fillOps);
  opSel.addEventListener('change', () => { op = opSel.value; fillOps(); });
  fillOps();
  const row = el('div', { class: 'filter-row' },
    el('label', { for: attrSel.id }, 'Attribute'), attrSel,
    el('label', { for: opSel.id }, 'is'), opSel,
    el('label', { for: val.id }, 'Value'), val,
    el('button', { type: 'button', class: 'secondary', onclick: () => row.remove() }, 'Remove', el('span', { class: 'visually-hidden' }, ' this condition')));
  $('filters').append(row);
  return row;
}
$('add-filter').addEventListener('click', () => addFilter().querySelector('select').focus());

/** selection reads the query builder into query-string pairs; it throws an
 * Error saying what is incomplete. */
function selection() {
  const pairs = [];
  const box = ['w', 's', 'e', 'n'].map((k) => $('bbox-' + k).value.trim());
  if (box.some((v) => v !== '')) {
    if (box.some((v) => v === '')) throw new Error('The area needs all four of west, south, east and north.');
    pairs.push(['bbox', box.join(',')]);
  }
  const near = ['lat', 'lon', 'radius'].map((k) => $('near-' + k).value.trim());
  if (near.some((v) => v !== '')) {
    if (near.some((v) => v === '')) throw new Error('The distance needs a latitude, a longitude and a radius.');
    pairs.push(['lat', near[0]], ['lon', near[1]], ['radius', near[2]], ['units', $('near-units').value]);
  }
  for (const row of $('filters').querySelectorAll('.filter-row')) {
    const attr = row.querySelector('.f-attr').value;
    const op = row.querySelector('.f-op').value;
    const v = row.querySelector('.f-val').value.trim();
    if (v === '') throw new Error(`The condition on ${attr} needs a value.`);
    pairs.push([`filter[${encodeURIComponent(attr)}][][${op}]`, v]);
  }
  return pairs;
}

/** outlines draws the area and the circle as typed in the builder. */
function outlines() {
  if (!map?.getSource('qbox')) return;
  const b = ['w', 's', 'e', 'n'].map((k) => $('bbox-' + k).value.trim());
  showOutline(map, 'qbox', b.every((v) => v !== '' && Number.isFinite(Number(v))) ? boxPolygon(b.map(Number)) : null);
  const [lat, lon, r] = ['lat', 'lon', 'radius'].map((k) => $('near-' + k).value.trim());
  const ok = [lat, lon, r].every((v) => v !== '' && Number.isFinite(Number(v)));
  showOutline(map, 'qcircle', ok ? circlePolygon(Number(lon), Number(lat), Number(r), $('near-units').value) : null);
}
for (const i of ['bbox-w', 'bbox-s', 'bbox-e', 'bbox-n', 'near-lat', 'near-lon', 'near-radius', 'near-units']) $(i).addEventListener('change', outlines);

/** countOf asks the API how many features a selection holds: the one
 * group of an aggregate without group_by. */
async function countOf(pairs) {
  const attr = (ds.data_attributes || [])[0];
  if (!attr) return null;
  const groups = await api(featuresPath(qs([...pairs, ['aggregates[][name]', attr.name], ['aggregates[][calc]', 'min']])));
  return groups.length ? groups[0].count : 0;
}

/** showBase dims the whole dataset's layers under a query's, or hides
 * them (only the matching features), or restores them. */
function showBase(mode) {
  whenMapReady(() => {
    for (const l of dataLayers) if (map.getLayer(l)) map.setLayoutProperty(l, 'visibility', mode === 'hidden' ? 'none' : 'visible');
    const dim = mode === 'dim';
    map.setPaintProperty('data-fill', 'fill-opacity', dim ? 0.12 : 0.55);
    map.setPaintProperty('data-line', 'line-opacity', dim ? 0.3 : 1);
    map.setPaintProperty('data-point', 'circle-opacity', dim ? 0.2 : 1);
    map.setPaintProperty('data-point', 'circle-stroke-opacity', dim ? 0.2 : 1);
  });
}

let querySel = null; // the selection shown, or null for the whole dataset

/** runQuery shows a query's features: counted, highlighted on the map,
 * paged in the table, and its API URL. */
async function runQuery() {
  const qmsg = $('query-status');
  let pairs;
  try {
    pairs = selection();
  } catch (e) {
    status(qmsg, e.message, true);
    return;
  }
  if (!pairs.length) {
    clearQuery();
    return;
  }
  status(qmsg, 'Querying…');
  let n;
  try {
    n = await countOf(pairs);
  } catch (e) {
    status(qmsg, 'The query failed: ' + e.message, true);
    return;
  }
  querySel = pairs;
  const url = featuresPath(qs([...pairs, ['limit', String(Math.max(1, Math.min(n ?? maxLimit, maxLimit)))]]));
  $('query-url').href = url;
  $('query-url').textContent = abs(url);
  $('query-url-p').hidden = false;
  const drawn = Math.min(n ?? geojsonMax, geojsonMax);
  status(qmsg, `${counted(n, 'feature')} match` + (n > geojsonMax ? ` (the first ${count(geojsonMax)} are highlighted on the map)` : '') + '.');
  const container = $('map');
  container.dataset.state = 'loading';
  whenMapReady(() => {
    map.getSource('query').setData(abs(featuresPath(qs([...pairs, ['geojson', '1'], ['limit', String(Math.max(1, drawn))]]))));
    showBase($('only-matching').checked ? 'hidden' : 'dim');
    redrawn(() => { container.dataset.query = String(n); });
  });
  outlines();
  Object.assign(table, { sel: pairs, total: n ?? 0, start: 0 });
  showTable();
}

/** clearQuery empties the builder and shows the whole dataset again. */
function clearQuery() {
  for (const i of ['bbox-w', 'bbox-s', 'bbox-e', 'bbox-n', 'near-lat', 'near-lon', 'near-radius']) $(i).value = '';
  $('filters').replaceChildren();
  querySel = null;
  status($('query-status'), '');
  $('query-url-p').hidden = true;
  $('group-url-p').hidden = true;
  status($('group-status'), '');
  $('group-chart').replaceChildren();
  $('group-table').replaceChildren();
  const container = $('map');
  whenMapReady(() => {
    map.getSource('query').setData({ type: 'FeatureCollection', features: [] });
    showBase('full');
    outlines();
    redrawn(() => { delete container.dataset.query; });
  });
  Object.assign(table, { sel: [], total: ds.feature_count, start: 0 });
  showTable();
}

$('query-form').addEventListener('submit', (e) => { e.preventDefault(); runQuery(); });
$('clear-query').addEventListener('click', clearQuery);
$('only-matching').addEventListener('change', () => {
  if (!querySel) return;
  showBase($('only-matching').checked ? 'hidden' : 'dim');
  whenMapReady(() => redrawn());
});
$('copy-url').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText($('query-url').textContent);
    status($('query-status'), 'The API URL is copied.');
  } catch {
    getSelection().selectAllChildren($('query-url'));
  }
});

// ---- group_by and aggregates ----

let aggN = 0;
/** addAggregate adds an aggregate row: attribute and calculation. */
function addAggregate(attr, calc) {
  const n = ++aggN;
  const attrs = ds.data_attributes || [];
  const attrSel = el('select', { id: `a-attr-${n}`, class: 'a-attr' }, attrs.map((a) => el('option', { value: a.name, selected: a.name === attr }, a.name)));
  const calcSel = el('select', { id: `a-calc-${n}`, class: 'a-calc' });
  /** fillCalcs offers sum and average for numbers only. */
  const fillCalcs = () => {
    const numeric = ['integer', 'float'].includes(typeOf(attrSel.value));
    calcSel.replaceChildren(...(numeric ? ['sum', 'average', 'min', 'max'] : ['min', 'max']).map((c) => el('option', { value: c, selected: c === calc }, c)));
  };
  attrSel.addEventListener('change', fillCalcs);
  fillCalcs();
  const row = el('div', { class: 'filter-row' },
    el('label', { for: calcSel.id }, 'Calculate'), calcSel, el('label', { for: attrSel.id }, 'of'), attrSel,
    el('button', { type: 'button', class: 'secondary', onclick: () => row.remove() }, 'Remove', el('span', { class: 'visually-hidden' }, ' this aggregate')));
  $('aggregates').append(row);
  return row;
}
$('add-aggregate').addEventListener('click', () => addAggregate().querySelector('select').focus());

/** runGroups asks the API for the groups of the query and shows them as a
 * table and a bar chart. */
async function runGroups() {
  const gmsg = $('group-status');
  let pairs;
  try {
    pairs = selection();
  } catch (e) {
    status(gmsg, e.message, true);
    return;
  }
  const by = $('group-by').value;
  if (by) pairs.push(['group_by[]', by]);
  const aggs = [...$('aggregates').querySelectorAll('.filter-row')].map((r) => ({ name: r.querySelector('.a-attr').value, calc: r.querySelector('.a-calc').value }));
  for (const a of aggs) pairs.push(['aggregates[][name]', a.name], ['aggregates[][calc]', a.calc]);
  if (!by && !aggs.length) {
    status(gmsg, 'Choose an attribute to group by, or an aggregate.', true);
    return;
  }
  status(gmsg, 'Grouping…');
  const url = featuresPath(qs(pairs));
  let groups;
  try {
    groups = await api(url);
  } catch (e) {
    status(gmsg, 'The grouping failed: ' + e.message, true);
    return;
  }
  $('group-url').href = url;
  $('group-url').textContent = abs(url);
  $('group-url-p').hidden = false;
  // A grouping by a near-unique attribute is as long as the dataset: the
  // page shows the first groups, the API URL gives them all.
  const total = groups.length;
  groups = groups.slice(0, maxGroupsShown);
  status(gmsg, `${counted(total, 'group')}.` + (total > maxGroupsShown ? ` The first ${count(maxGroupsShown)} are shown.` : ''));
  const keys = [...(by ? [by] : []), 'count', ...aggs.map((a) => `${a.calc}_${a.name}`)];
  $('group-table').replaceChildren(
    el('thead', {}, el('tr', {}, keys.map((k) => el('th', { scope: 'col' }, k)))),
    el('tbody', {}, groups.map((g) => el('tr', {}, keys.map((k) => el('td', {}, fmt(g[k])))))));
  // The bars: the first numeric aggregate, or the count.
  const valueKey = keys.slice(by ? 2 : 1).find((k) => groups.some((g) => typeof g[k] === 'number')) || 'count';
  const label = (g) => (by ? (g[by] == null ? '(none)' : g[by]) : 'all');
  $('group-chart').replaceChildren(barChart(groups, label, (g) => g[valueKey], `${valueKey} by ${by || 'all features'}`));
}
$('group-form').addEventListener('submit', (e) => { e.preventDefault(); runGroups(); });

/** fillGroupBy offers every attribute to group by. */
function fillGroupBy() {
  $('group-by').replaceChildren(el('option', { value: '' }, '(no grouping)'),
    ...(ds.data_attributes || []).map((a) => el('option', { value: a.name }, a.name)));
}

// ---- Owner actions ----

/** mayEdit decides from the API whether the caller may edit the dataset:
 * its owner (contributor), an administrator, anyone signed in when it is
 * shared with everyone at edit. When edit is given to groups only (the
 * session does not list the caller's), the API is asked: a DELETE of
 * features without ids is refused as unauthorized (403, 404) or, for an
 * editor, as lacking its ids (400) — it never deletes anything. */
async function mayEdit(me) {
  if (!me) return false;
  if (me.admin || me.login === ds.contributor) return true;
  const perms = ds.permissions || [];
  if (perms.some((p) => p.group_id === 'everyone' && p.permissions?.edit)) return true;
  if (!perms.some((p) => p.group_id !== 'everyone' && p.permissions?.edit)) return false;
  try {
    await api(featuresPath(''), { method: 'DELETE' });
    return false; // not an answer the API gives
  } catch (e) {
    return e.status === 400;
  }
}

/** fillMetaForm puts the dataset's metadata in the edit form. */
function fillMetaForm() {
  $('meta-title').value = ds.title || '';
  $('meta-description').value = ds.description || '';
  $('meta-tags').value = tagList(ds.tags).join(', ');
  $('meta-author').value = ds.author || '';
  $('meta-citation').value = ds.citation_url || '';
  $('meta-notes').value = ds.process_notes || '';
}

/** reload reads the dataset again after a change and redraws what shows it. */
async function reload() {
  ds = await api(`/datasets/${id}.json?include_attributes=1`);
  showMetadata();
}

$('meta-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const body = {
    title: $('meta-title').value, description: $('meta-description').value, tags: $('meta-tags').value,
    author: $('meta-author').value, citation_url: $('meta-citation').value, process_notes: $('meta-notes').value,
  };
  status($('meta-status'), 'Saving…');
  try {
    await api(`/datasets/${id}.json`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    await reload();
    fillMetaForm();
    status($('meta-status'), 'The metadata is saved.');
  } catch (err) {
    status($('meta-status'), 'The metadata could not be saved: ' + err.message, true);
  }
});

/** positionOf finds the zero-based position of the feature with stable id
 * fid (what DELETE ?ids= takes): ids grow with positions, so a binary
 * search over one-feature pages finds it in about log2(count) requests. */
async function positionOf(fid) {
  let lo = 0;
  let hi = Math.min(fid - 1, ds.feature_count - 1);
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    const fc = await api(featuresPath(`geojson=1&start=${mid}&limit=1`));
    const got = fc.features[0]?.id;
    if (got === fid) return mid;
    if (got === undefined || got > fid) hi = mid - 1;
    else lo = mid + 1;
  }
  throw new Error(`feature ${fid} is no longer in the dataset`);
}

/** selectedIDs are the stable ids of the rows ticked in the table. */
const selectedIDs = () => [...document.querySelectorAll('#table .row-select:checked')].map((c) => Number(c.dataset.fid));

$('delete-rows').addEventListener('click', () => {
  const n = selectedIDs().length;
  if (!n) {
    status($('delete-status'), 'Tick the rows to delete first.', true);
    return;
  }
  $('delete-count').textContent = count(n);
  $('delete-confirm').hidden = false;
  $('delete-yes').focus();
});
$('delete-no').addEventListener('click', () => { $('delete-confirm').hidden = true; $('delete-rows').focus(); });
$('delete-yes').addEventListener('click', async () => {
  $('delete-confirm').hidden = true;
  const dmsg = $('delete-status');
  const ids = selectedIDs();
  status(dmsg, 'Deleting…');
  try {
    const positions = [];
    for (const fid of ids) positions.push(await positionOf(fid));
    await api(featuresPath(`ids=${positions.join(',')}`), { method: 'DELETE' });
    await reload();
    status(dmsg, `${counted(ids.length, 'feature')} deleted.`);
  } catch (e) {
    status(dmsg, 'The features could not be deleted: ' + e.message, true);
    return;
  }
  // The map and the table show the dataset as it is now.
  whenMapReady(() => {
    const src = map.getSource('data');
    if (small()) src.setData(dataURL()); else src.setUrl(tilesURL());
  });
  if (querySel) runQuery();
  else {
    table.total = ds.feature_count;
    showTable();
  }
});

/** showOwnerTools shows editing, deletion and sharing to who may edit. */
async function showOwnerTools() {
  $('owner').hidden = false;
  $('delete-tools').hidden = false;
  fillMetaForm();
  // Sharing is the owner's and administrators' (and on an appliance an
  // editor's, which the API will say when the panel saves).
  const me = await session();
  if (!(me.admin || me.login === ds.contributor)) {
    $('share').textContent = 'Only the owner or an administrator shares this dataset.';
    return;
  }
  try {
    await sharePanel($('share'), 'dataset', id, () => reload());
  } catch (e) {
    $('share').textContent = 'The sharing panel could not be loaded: ' + e.message;
  }
}

/** main loads the dataset and shows the page: metadata, downloads, the
 * table's first page (unsorted: no scan of every row), the map. */
async function main() {
  try {
    ds = await api(`/datasets/${id}.json?include_attributes=1`);
  } catch (e) {
    status(msg, e.status === 404 ? 'There is no such dataset, or it is not shared with you.' : 'The dataset could not be loaded: ' + e.message, true);
    $('title').textContent = 'Dataset not found';
    return;
  }
  status(msg, '');
  root.hidden = false;
  showMetadata();
  showDownloads();
  showGISURLs();
  fillGroupBy();
  table.columns = (ds.data_attributes || []).map((a) => a.name);
  table.total = ds.feature_count;
  // The session decides the table's form (a checkbox column for who may
  // edit); the table's page is asked for before the map takes the thread.
  canEdit = await mayEdit(await session());
  showTable();
  showMap();
  if (canEdit) showOwnerTools();
}

main();
