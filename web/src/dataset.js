// The dataset page: its metadata from GET /datasets/{id}.json, its
// features on a MapLibre map (GeoJSON for small datasets, the OGC vector
// tiles for big ones) with popups, an attribute table paged and sorted by
// the API, and its downloads.
import 'maplibre-gl/dist/maplibre-gl.css';
import './style.css';
import * as maplibregl from 'maplibre-gl';
import { api, el, status, tagList } from './lib/common.js';

// Datasets up to this many features are drawn from one GeoJSON answer;
// bigger ones from vector tiles.
const geojsonMax = 5000;
const rowsPerPage = 20;

const root = document.getElementById('dataset');
const id = root.dataset.id;
const msg = document.getElementById('dataset-status');
const worker = document.querySelector('meta[name="mc-worker"]');
if (worker) maplibregl.setWorkerUrl(worker.content);

/** abs makes a path of this server absolute, as MapLibre's workers need. */
const abs = (p) => new URL(p, location.href).href;

/** showMetadata fills the heading, description and facts of the dataset. */
function showMetadata(ds) {
  document.title = ds.title + ' · mapcommons';
  document.getElementById('title').textContent = ds.title || '(untitled)';
  const facts = [
    ['Owner', ds.contributor || ''],
    ['Author', ds.author],
    ['Features', String(ds.feature_count)],
    ['Geometry', (ds.geometry_types || []).join(', ')],
    ['Tags', tagList(ds.tags).join(', ')],
    ['Extent (W, S, E, N)', ds.extent ? ds.extent.map((v) => v.toFixed(4)).join(', ') : ''],
    ['Source', ds.source],
    ['Published', ds.published],
  ].filter(([, v]) => v);
  document.getElementById('facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  document.getElementById('description').textContent = ds.description || '';
}

/** showDownloads lists the dataset in every download format. */
function showDownloads(ds) {
  const formats = [['csv', 'CSV'], ['geojson', 'GeoJSON'], ['kml', 'KML'], ['kmz', 'KMZ'], ['zip', 'Shapefile (zip)'],
    ['gpkg', 'GeoPackage'], ['sqlite', 'SpatiaLite'], ['atom', 'Atom'], ['json', 'JSON']];
  document.getElementById('downloads').replaceChildren(...formats.map(([ext, name]) =>
    el('li', {}, el('a', { href: `/datasets/${ds.id}.${ext}`, download: ext === 'json' ? null : true }, name))));
}

/** basemapStyle is the server's basemap, or a plain background when it has none. */
async function basemapStyle() {
  try {
    const res = await fetch('/basemap/style.json', { credentials: 'same-origin' });
    if (res.ok) return await res.json();
  } catch { /* no basemap: the plain style */ }
  return { version: 8, sources: {}, layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#e8eef2' } }] };
}

const polygons = ['in', ['geometry-type'], ['literal', ['Polygon', 'MultiPolygon']]];
const lines = ['in', ['geometry-type'], ['literal', ['LineString', 'MultiLineString']]];
const points = ['in', ['geometry-type'], ['literal', ['Point', 'MultiPoint']]];
const dataLayers = ['data-fill', 'data-line', 'data-point'];

/** showMap draws the features and opens a popup of attributes on click. */
async function showMap(ds) {
  const container = document.getElementById('map');
  const map = new maplibregl.Map({
    container,
    style: await basemapStyle(),
    bounds: ds.extent ? [[ds.extent[0], ds.extent[1]], [ds.extent[2], ds.extent[3]]] : undefined,
    fitBoundsOptions: { padding: 20 },
    // Kept so that the page (and the tests) can read the drawn pixels.
    canvasContextAttributes: { preserveDrawingBuffer: true },
    attributionControl: { compact: true },
  });
  map.addControl(new maplibregl.NavigationControl(), 'top-right');
  map.on('load', () => {
    // ?tiles=1 draws from the vector tiles whatever the size.
    const small = ds.feature_count <= geojsonMax && new URLSearchParams(location.search).get('tiles') !== '1';
    map.addSource('data', small
      ? { type: 'geojson', data: abs(`/datasets/${ds.id}/features.json?geojson=1&limit=${geojsonMax}`) }
      : { type: 'vector', url: abs(`/ogc/collections/${ds.id}/tiles/WebMercatorQuad/tilejson.json`) });
    const src = small ? {} : { 'source-layer': String(ds.id) };
    map.addLayer({ id: 'data-fill', type: 'fill', source: 'data', ...src, filter: polygons, paint: { 'fill-color': '#d9480f', 'fill-opacity': 0.55 } });
    map.addLayer({ id: 'data-line', type: 'line', source: 'data', ...src, filter: ['any', polygons, lines], paint: { 'line-color': '#7a2906', 'line-width': 1 } });
    map.addLayer({ id: 'data-point', type: 'circle', source: 'data', ...src, filter: points, paint: { 'circle-color': '#d9480f', 'circle-radius': 4, 'circle-stroke-color': '#fff', 'circle-stroke-width': 1 } });
    // The map is drawn: say so (the tests wait for it).
    map.once('idle', () => { container.dataset.state = 'idle'; });
  });
  map.on('click', (e) => {
    const f = map.queryRenderedFeatures(e.point, { layers: dataLayers })[0];
    if (!f) return;
    const rows = Object.entries(f.properties).map(([k, v]) => el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, String(v))));
    new maplibregl.Popup({ maxWidth: '320px' }).setLngLat(e.lngLat)
      .setDOMContent(el('table', { class: 'popup' }, el('tbody', {}, rows))).addTo(map);
  });
  for (const l of dataLayers) {
    map.on('mouseenter', l, () => { map.getCanvas().style.cursor = 'pointer'; });
    map.on('mouseleave', l, () => { map.getCanvas().style.cursor = ''; });
  }
}

/** The attribute table: its state and how it draws a page. */
const table = { start: 0, sort: '', order: 'ascending', columns: [], total: 0 };

async function showTable() {
  const tmsg = document.getElementById('table-status');
  const p = new URLSearchParams({ geojson: '1', start: String(table.start), limit: String(rowsPerPage) });
  if (table.sort) {
    p.set('sort', table.sort);
    p.set('order', table.order);
  }
  status(tmsg, 'Loading…');
  let fc;
  try {
    fc = await api(`/datasets/${id}/features.json?` + p);
  } catch (e) {
    status(tmsg, 'The features could not be loaded: ' + e.message, true);
    return;
  }
  const head = el('tr', {}, table.columns.map((c) => {
    const sorted = table.sort === c;
    const dir = sorted ? table.order : 'none';
    return el('th', { scope: 'col', 'aria-sort': dir },
      el('button', { type: 'button', 'data-column': c, onclick: () => sortBy(c) }, c, sorted ? (table.order === 'ascending' ? ' ▲' : ' ▼') : ''));
  }));
  const body = fc.features.map((f) => el('tr', {}, table.columns.map((c) => el('td', {}, f.properties[c] == null ? '' : String(f.properties[c])))));
  document.getElementById('table').replaceChildren(el('thead', {}, head), el('tbody', {}, body));
  const last = Math.min(table.start + fc.features.length, table.total);
  status(tmsg, table.total ? `Rows ${table.start + 1}–${last} of ${table.total}` : 'No features.');
  document.getElementById('prev').disabled = table.start === 0;
  document.getElementById('next').disabled = last >= table.total;
}

/** sortBy sorts the table by a column, or reverses its order when it is the sort. */
function sortBy(c) {
  if (table.sort === c) table.order = table.order === 'ascending' ? 'descending' : 'ascending';
  else Object.assign(table, { sort: c, order: 'ascending' });
  table.start = 0;
  showTable();
}

document.getElementById('prev').addEventListener('click', () => { table.start = Math.max(0, table.start - rowsPerPage); showTable(); });
document.getElementById('next').addEventListener('click', () => { table.start += rowsPerPage; showTable(); });

async function main() {
  let ds;
  try {
    ds = await api(`/datasets/${id}.json?include_attributes=1`);
  } catch (e) {
    status(msg, e.status === 404 ? 'There is no such dataset, or it is not shared with you.' : 'The dataset could not be loaded: ' + e.message, true);
    document.getElementById('title').textContent = 'Dataset not found';
    return;
  }
  status(msg, '');
  root.hidden = false;
  showMetadata(ds);
  showDownloads(ds);
  table.columns = (ds.data_attributes || []).map((a) => a.name);
  table.total = ds.feature_count;
  showTable();
  showMap(ds);
}

main();
