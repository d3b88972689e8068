// The map of the OGC API's HTML pages (/ogc/collections/{id}?f=html, its
// items?f=html and items/{featureId}?f=html): the page's features, read
// as GeoJSON from the URL the page names (its own JSON form: the same
// items), drawn over the server's basemap. The page is plain HTML whose
// table stays the content: the map is hidden until this script shows it.
// Once the features are drawn the map says so for the tests: data-state
// "idle" and, in data-features, how many features it draws.
import 'maplibre-gl/dist/maplibre-gl.css';
import './ogcdoc.css';
import './ogc.css';
import * as maplibregl from 'maplibre-gl';
import { basemapStyle } from './lib/geo.js';

const worker = document.querySelector('meta[name="mc-worker"]');
if (worker) maplibregl.setWorkerUrl(worker.content);

const polygons = ['in', ['geometry-type'], ['literal', ['Polygon', 'MultiPolygon']]];
const lines = ['in', ['geometry-type'], ['literal', ['LineString', 'MultiLineString']]];
const points = ['in', ['geometry-type'], ['literal', ['Point', 'MultiPoint']]];
const layers = ['features-fill', 'features-line', 'features-point'];

/** bbox is the box [west, south, east, north] of a GeoJSON object's
 * coordinates, or null when it has none. */
function bbox(geojson) {
  const b = [Infinity, Infinity, -Infinity, -Infinity];
  const walk = (c) => {
    if (!Array.isArray(c)) return;
    if (typeof c[0] === 'number') {
      b[0] = Math.min(b[0], c[0]); b[1] = Math.min(b[1], c[1]);
      b[2] = Math.max(b[2], c[0]); b[3] = Math.max(b[3], c[1]);
      return;
    }
    c.forEach(walk);
  };
  const geom = (g) => {
    if (!g) return;
    if (g.type === 'GeometryCollection') g.geometries.forEach(geom);
    else walk(g.coordinates);
  };
  const features = geojson.type === 'FeatureCollection' ? geojson.features : [geojson];
  features.forEach((f) => geom(f.geometry));
  return b[0] <= b[2] ? b : null;
}

/** show draws the features of the page in the map's container. */
async function show(container) {
  const msg = document.getElementById('ogc-map-status');
  container.hidden = false;
  let data;
  try {
    const res = await fetch(new URL(container.dataset.geojson, location.href), {
      credentials: 'same-origin', headers: { Accept: 'application/geo+json' },
    });
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    data = await res.json();
  } catch (err) {
    container.hidden = true;
    if (msg) msg.textContent = 'The map could not be drawn: ' + err.message;
    return;
  }
  const style = structuredClone(await basemapStyle());
  style.sources = { ...style.sources, features: { type: 'geojson', data } };
  style.layers = [...style.layers,
    { id: 'features-fill', type: 'fill', source: 'features', filter: polygons, paint: { 'fill-color': '#d9480f', 'fill-opacity': 0.55 } },
    { id: 'features-line', type: 'line', source: 'features', filter: ['any', polygons, lines], paint: { 'line-color': '#7a2906', 'line-width': 1 } },
    { id: 'features-point', type: 'circle', source: 'features', filter: points,
      paint: { 'circle-color': '#d9480f', 'circle-radius': 5, 'circle-stroke-color': '#fff', 'circle-stroke-width': 1 } },
  ];
  const box = bbox(data);
  const map = new maplibregl.Map({
    container,
    style,
    bounds: box ? [[box[0], box[1]], [box[2], box[3]]] : undefined,
    fitBoundsOptions: { padding: 20, maxZoom: 14 },
    // Kept so that the tests can read the drawn pixels.
    canvasContextAttributes: { preserveDrawingBuffer: true },
    attributionControl: { compact: true },
    fadeDuration: 0,
  });
  map.addControl(new maplibregl.NavigationControl(), 'top-right');
  map.on('click', (e) => {
    const f = map.queryRenderedFeatures(e.point, { layers })[0];
    if (f?.id === undefined) return;
    // The feature's own page: items/{id} of the collection the GeoJSON
    // came from.
    const u = new URL(container.dataset.geojson, location.href);
    u.pathname = u.pathname.replace(/\/items(\/[^/]*)?$/, '/items/' + encodeURIComponent(f.id));
    u.search = '?f=html';
    if (u.href !== location.href) location.href = u.href;
  });
  for (const l of layers) {
    map.on('mouseenter', l, () => { map.getCanvas().style.cursor = 'pointer'; });
    map.on('mouseleave', l, () => { map.getCanvas().style.cursor = ''; });
  }
  map.once('load', () => {
    map.once('idle', () => {
      const ids = new Set(map.queryRenderedFeatures({ layers }).map((f) => f.id));
      container.dataset.features = String(ids.size);
      container.dataset.state = 'idle';
    });
    map.triggerRepaint();
  });
}

const container = document.getElementById('ogc-map');
if (container) show(container);
