// Drawing a map's layers (the layers of GET /maps/{id}.json) on a MapLibre
// map, and their legend: the map page draws them, the editor previews with
// them. Each layer's style type (POINT, PRIMITIVE, GRADUATED, PROPORTIONAL,
// CHOROPLETH) decides how its features are drawn; the colours and breaks of
// a classed layer are the API's `classification`, never recomputed here.
// Icons of the palette are drawn on a canvas (no icon files, nothing from
// elsewhere). Templates ($[attribute]) give text only, never HTML.
import * as maplibregl from 'maplibre-gl';
import { api, credentialsMode, el } from './common.js';
import { count } from './format.js';
import {
  classOf, dateText, defaults, densityChoice, densityChoices, densityMin, densityNotes, densityOf, fmtBreak, heatRamp, hex, layerPlan, layerSpecs,
  scanFeatures, centroid, sliderSpan, sliderStart, statsMax, symbols, template, timeOf, timeRange, timeWindow,
} from './style.js';

// What the pages take from here (the editor: hex, the palette and the
// density choices).
export { classOf, densityChoice, densityChoices, densityMin, hex, symbols, template, timeOf };

// Datasets up to this many features are read as GeoJSON; bigger ones are
// drawn from the OGC vector tiles.
export const geojsonMax = 5000;

/** abs makes a path of this server absolute, as MapLibre's workers need. */
const abs = (p) => new URL(p, location.href).href;

/** drawSymbol draws palette symbol name in colour on a size×size canvas. */
export function drawSymbol(name, color, size = 48, shadow = false) {
  const c = document.createElement('canvas');
  c.width = c.height = size;
  const g = c.getContext('2d');
  const s = size / 48; // the shapes are written for 48 pixels
  g.scale(s, s);
  if (shadow) Object.assign(g, { shadowColor: 'rgba(0,0,0,.45)', shadowBlur: 4, shadowOffsetX: 2, shadowOffsetY: 2 });
  g.fillStyle = color;
  g.strokeStyle = '#ffffff';
  g.lineWidth = 3;
  const circle = (r) => { g.beginPath(); g.arc(24, 24, r, 0, 2 * Math.PI); };
  const square = (h) => { g.beginPath(); g.rect(24 - h, 24 - h, 2 * h, 2 * h); };
  switch (name) {
    case 'outlineCircle': circle(16); g.fill(); g.strokeStyle = '#222'; g.stroke(); break;
    case 'hollowCircle': circle(16); g.strokeStyle = color; g.lineWidth = 4; g.stroke(); break;
    case 'ringIcon': circle(15); g.strokeStyle = color; g.lineWidth = 8; g.stroke(); break;
    case 'square': case 'propSquare': case 'squareIcon': square(16); g.fill(); g.stroke(); break;
    case 'outlineSquare': square(16); g.fill(); g.strokeStyle = '#222'; g.stroke(); break;
    case 'hollowSquare': square(16); g.strokeStyle = color; g.lineWidth = 4; g.stroke(); break;
    case 'balloonIcon': case 'pushpinIcon':
      g.beginPath(); g.arc(24, 17, 12, Math.PI * 0.8, Math.PI * 2.2); g.lineTo(24, 45); g.closePath(); g.fill(); g.stroke();
      if (name === 'pushpinIcon') { g.fillStyle = '#fff'; g.beginPath(); g.arc(24, 17, 4, 0, 2 * Math.PI); g.fill(); }
      break;
    case 'featherIcon':
      g.beginPath(); g.moveTo(10, 42); g.quadraticCurveTo(12, 8, 40, 6); g.quadraticCurveTo(36, 34, 10, 42); g.fill(); g.stroke(); break;
    case 'flagIcon':
      g.fillRect(10, 4, 4, 40); g.beginPath(); g.moveTo(14, 6); g.lineTo(40, 14); g.lineTo(14, 24); g.closePath(); g.fill(); break;
    case 'xPointIcon':
      g.strokeStyle = color; g.lineWidth = 8; g.beginPath(); g.moveTo(10, 10); g.lineTo(38, 38); g.moveTo(38, 10); g.lineTo(10, 38); g.stroke(); break;
    default: circle(16); g.fill(); g.stroke(); // circle, propCircle, circleIcon
  }
  return c;
}

/** iconImage adds (once) the image of a symbol in a colour to the map and
 * returns its name. */
function iconImage(map, symbol, color, shadow) {
  const name = `mc-${symbol}-${color.slice(1)}${shadow ? '-s' : ''}`;
  if (!map.hasImage(name)) {
    const c = drawSymbol(symbol, color, 48, shadow);
    map.addImage(name, c.getContext('2d').getImageData(0, 0, 48, 48), { pixelRatio: 2 });
  }
  return name;
}

/** datasetOf reads the dataset a finder: source names (null for others or
 * when the visitor may not read it). */
export function datasetOf(source) {
  const m = /^finder:(\d+)$/.exec(source || '');
  if (!m) return Promise.resolve(null);
  if (!datasets.has(m[1])) datasets.set(m[1], api(`/datasets/${m[1]}.json?include_attributes=1`).catch(() => null));
  return datasets.get(m[1]);
}

// The datasets and features read by this page, by dataset id: the editor
// draws the same layers again at each change.
const datasets = new Map();
const features = new Map();

/** drawnFromTiles tells whether a dataset is drawn from its vector tiles
 * (too big for GeoJSON, or the page asks for tiles) rather than GeoJSON. */
const drawnFromTiles = (ds) => ds.feature_count > geojsonMax || new URLSearchParams(location.search).get('tiles') === '1';

/** readFeatures starts reading a small dataset's features as GeoJSON, once
 * per page (the promise kept in features). */
function readFeatures(ds) {
  if (!features.has(ds.id)) {
    const p = api(`/datasets/${ds.id}/features.json?geojson=1&limit=${geojsonMax}`);
    p.catch(() => {}); // its reader (sourceFor) says what failed
    features.set(ds.id, p);
  }
  return features.get(ds.id);
}

/** prefetch starts reading what the layers of map document doc draw (their
 * datasets, and the features of those drawn from GeoJSON), so that they
 * load beside the basemap rather than after it. */
export function prefetch(doc) {
  for (const layer of doc.layers || []) {
    datasetOf(layer.source).then((ds) => { if (ds && !drawnFromTiles(ds)) readFeatures(ds); });
  }
}

/** sourceFor adds the map source of a layer: its dataset's features as
 * GeoJSON (small datasets, and url: layers of this origin) or vector tiles,
 * with what styling needs from the data (times, centroids, the largest
 * value). It returns {source, sourceLayer, note, data}. */
async function sourceFor(map, id, layer) {
  const src = layer.source || '';
  if (src.startsWith('url:')) {
    const url = src.slice(4);
    let u;
    try {
      u = new URL(url, location.href);
    } catch {
      return { note: 'Its source is not a URL this page can read.' };
    }
    if (u.origin !== location.origin) return { note: `It comes from another site (${u.host}), which this page may not load.` };
    try {
      // A url: layer is public data: read without the visitor's session or
      // saved logins (a map's author chooses the URL, not its viewer), and
      // as a script, so that a 401 opens no login prompt.
      const res = await fetch(u.href, { credentials: 'omit', headers: { Accept: 'application/geo+json, application/json', 'X-Requested-With': 'XMLHttpRequest' } });
      const fc = await res.json();
      if (!res.ok || fc?.type !== 'FeatureCollection') throw new Error();
      return { data: fc };
    } catch {
      return { note: 'Its source is not GeoJSON this page can draw.' };
    }
  }
  const ds = await datasetOf(src);
  if (!ds) return { note: 'Its dataset does not exist, or is not shared with you.' };
  if (drawnFromTiles(ds)) {
    map.addSource(id, { type: 'vector', url: abs(`/ogc/collections/${ds.id}/tiles/WebMercatorQuad/tilejson.json`) });
    return { source: id, sourceLayer: String(ds.id), ds };
  }
  try {
    readFeatures(ds);
    // A copy: drawLayer adds to the features' properties.
    const fc = structuredClone(await features.get(ds.id));
    return { data: fc, ds };
  } catch (e) {
    features.delete(ds.id);
    return { note: 'Its features could not be read: ' + e.message };
  }
}

/**
 * drawLayer draws layer doc `layer` (index i of the map) and returns its
 * handle: {ids (MapLibre layer ids), note (why it is not drawn, or
 * null), time (the slider's state for a temporal layer), setVisible(on),
 * remove()}. before names a MapLibre layer to draw under.
 */
export async function drawLayer(map, layer, i, before) {
  const id = `mc${i}-${Math.random().toString(36).slice(2, 7)}`;
  const st = layer.styles || {};
  const h = { id, ids: [], note: null, time: null, layer, sources: [] };
  h.setVisible = (on) => h.ids.forEach((l) => map.getLayer(l) && map.setLayoutProperty(l, 'visibility', on ? 'visible' : 'none'));
  h.remove = () => {
    h.ids.forEach((l) => map.getLayer(l) && map.removeLayer(l));
    h.sources.forEach((s) => map.getSource(s) && map.removeSource(s));
  };
  const got = await sourceFor(map, id, layer);
  if (got.note) {
    h.note = got.note;
    return h;
  }
  // The attributes the layer names are read as the features name them
  // (a layer may name a column by its original name).
  h.attrs = got.ds?.data_attributes || null;
  const plan = layerPlan(layer, h.attrs);
  const { type, temporal, sizeAttr } = plan;
  let maxValue = 1;
  let hasPolygons = true;

  // GeoJSON: the times and the largest value are read here; polygons get
  // a centroid for their symbol.
  let pointsId = id;
  if (got.data) {
    const fc = got.data;
    const scan = scanFeatures(fc, temporal, sizeAttr);
    maxValue = scan.maxValue;
    hasPolygons = fc.features.some((f) => /Polygon/.test(f.geometry?.type || ''));
    map.addSource(id, { type: 'geojson', data: fc });
    h.sources.push(id);
    if (hasPolygons && (type === 'GRADUATED' || type === 'PROPORTIONAL' || type === 'POINT')) {
      pointsId = id + '-pt';
      map.addSource(pointsId, { type: 'geojson', data: { type: 'FeatureCollection', features: fc.features
        .filter((f) => /Polygon/.test(f.geometry?.type || ''))
        .map((f) => ({ type: 'Feature', properties: f.properties, geometry: { type: 'Point', coordinates: centroid(f.geometry) } })) } });
      h.sources.push(pointsId);
    }
    if (temporal && scan.tmin <= scan.tmax) h.time = { attr: '__mc_t', range: timeRange(st.timeline, scan.tmin, scan.tmax) };
  } else {
    h.sources.push(id);
    const attr = got.ds?.data_attributes?.find((a) => a.name === temporal);
    if (temporal && attr && ['integer', 'float'].includes(attr.data_type)) {
      const r = timeRange(st.timeline, NaN, NaN);
      if (!Number.isNaN(r[0]) && !Number.isNaN(r[1])) h.time = { attr: temporal, range: r };
    } else if (temporal) {
      h.note = 'Its time slider needs the dataset drawn from GeoJSON (it is too big).';
    }
    // The largest value: the column's stats (when the visitor may see them).
    maxValue = statsMax(got.ds, sizeAttr) ?? maxValue;
  }
  const sl = got.sourceLayer ? { 'source-layer': got.sourceLayer } : {};
  // A layer of points shows its density as its styles say (densityOf): a
  // big one from the tiles by default as clusters sized and numbered by
  // the points each stands for; clusters or a heatmap when asked, whatever
  // its size (not with a time slider: a cluster has no time).
  const geoms = got.ds?.geometry_types || [];
  h.density = densityOf(layer, plan, { tiled: !got.data, count: got.ds?.feature_count ?? 0, timed: Boolean(temporal),
    points: got.data ? got.data.features.some((f) => /Point/.test(f.geometry?.type || '')) : !geoms.length || geoms.includes('point') });
  // GeoJSON's points are clustered by MapLibre, from a source of their own
  // (the tiles' are thinned by the server already).
  let clusterSource = null;
  if (h.density === 'clusters' && got.data) {
    clusterSource = id + '-cl';
    map.addSource(clusterSource, { type: 'geojson', cluster: true, clusterRadius: 40,
      data: { type: 'FeatureCollection', features: got.data.features.filter((f) => /Point/.test(f.geometry?.type || '')) } });
    h.sources.push(clusterSource);
  }
  const drawn = layerSpecs(layer, plan, { id, pointsId, maxValue, density: h.density, clusterSource,
    image: (symbol, color, shadow) => iconImage(map, symbol, color, shadow) });
  if (drawn.note) h.note = drawn.note;
  for (const spec of drawn.specs) {
    map.addLayer({ ...spec, source: spec.source || id, ...(spec.source && spec.source !== id ? {} : sl) }, before);
    h.ids.push(spec.id);
  }

  // A temporal layer shows the features of its slider's window.
  if (h.time) {
    const [b, e] = h.time.range;
    const sp = st.slider;
    const span = sliderSpan(sp, b, e); // null: everything from the timeline's begin
    h.time.span = span;
    h.time.setPosition = (pos) => {
      h.time.pos = pos;
      const lo = span == null ? b : pos - span;
      for (const l of h.ids) map.setFilter(l, timeWindow(l, h.time.attr, lo, pos));
    };
    h.time.setPosition(sliderStart(sp, b, e));
  }
  if (!layer.visible) h.setVisible(false);
  return h;
}

/** bindPopups opens the click template's text (or the attributes) of the
 * topmost clicked feature in a popup, and the hover template's on hover;
 * handles gives the drawn layers' handles (they change in the editor). */
export function bindPopups(map, handles) {
  const hit = (point) => {
    const byId = new Map();
    handles().forEach((h) => h.ids.forEach((l) => byId.set(l, h)));
    // A heatmap's colour is no one point's: it opens no popup.
    const ids = [...byId.keys()].filter((l) => map.getLayer(l) && map.getLayer(l).type !== 'heatmap' && map.getLayoutProperty(l, 'visibility') !== 'none');
    const f = ids.length ? map.queryRenderedFeatures(point, { layers: ids })[0] : null;
    return f && { f, h: byId.get(f.layer.id) };
  };
  map.on('click', (e) => {
    const got = hit(e.point);
    if (!got) return;
    const st = got.h.layer.styles || {};
    const props = Object.fromEntries(Object.entries(got.f.properties).filter(([k]) => !k.startsWith('__mc_')));
    let content;
    if (st.click) {
      const text = template(st.click, props, got.h.attrs);
      // A URL becomes a link; anything else (a javascript: call) is text.
      content = /^https?:\/\//i.test(text) ? el('a', { href: text, rel: 'noopener noreferrer', target: '_blank' }, text) : el('p', { class: 'popup-text' }, text);
    } else {
      content = el('table', { class: 'popup' }, el('tbody', {}, Object.entries(props).map(([k, v]) =>
        el('tr', {}, el('th', { scope: 'row' }, k), el('td', {}, String(v))))));
    }
    new maplibregl.Popup({ maxWidth: '320px' }).setLngLat(e.lngLat).setDOMContent(el('div', { class: 'popup-body' }, content)).addTo(map);
  });
  const tip = new maplibregl.Popup({ closeButton: false, closeOnClick: false, className: 'hover-tip' });
  map.on('mousemove', (e) => {
    const got = hit(e.point);
    const hover = got?.h.layer.styles?.hover;
    map.getCanvas().style.cursor = got ? 'pointer' : '';
    if (!hover) {
      tip.remove();
      return;
    }
    tip.setLngLat(e.lngLat).setDOMContent(el('p', { class: 'popup-text' }, template(hover, got.f.properties, got.h.attrs))).addTo(map);
  });
}

/** legendItem is the legend entry of a drawn layer: a visibility checkbox
 * with its title, its classes (the API's breaks, colours and counts), its
 * symbol, its note and, for a temporal layer, its time slider. */
export function legendItem(h, i, onToggle) {
  const layer = h.layer;
  const st = layer.styles || {};
  const cd = classOf(layer);
  const box = el('input', { type: 'checkbox', id: `layer-${i}-visible`, 'data-layer': i, checked: layer.visible !== false });
  box.addEventListener('change', () => {
    h.setVisible(box.checked);
    onToggle?.(box.checked);
  });
  const item = el('li', { class: 'legend-layer', 'data-layer': i },
    el('label', { for: box.id }, box, ' ', layer.title || layer.source),
    layer.subtitle && el('p', { class: 'subtitle' }, layer.subtitle));
  if (cd && cd.counts?.length) {
    item.append(el('p', { class: 'method' }, `${cd.method} of ${cd.attribute}`));
    const list = el('ul', { class: 'classes', 'aria-label': `Classes of ${cd.attribute}` });
    cd.counts.forEach((n, k) => {
      const sw = el('span', { class: 'swatch', 'aria-hidden': 'true' });
      sw.style.background = hex(cd.colors[k]);
      list.append(el('li', { class: 'class', 'data-lo': String(cd.breaks[k]), 'data-hi': String(cd.breaks[k + 1]),
        'data-color': hex(cd.colors[k]), 'data-count': String(n) }, sw, `${fmtBreak(cd.breaks[k])} – ${fmtBreak(cd.breaks[k + 1])} (${count(n)})`));
    });
    item.append(list);
    if (cd.nulls || cd.outside) item.append(el('p', { class: 'subtitle' }, `${count(cd.nulls)} without a value, ${count(cd.outside)} outside the classes`));
  } else if (!h.note || h.ids.length) {
    const sw = el('span', { class: 'swatch', 'aria-hidden': 'true' });
    sw.style.background = hex(st.fill?.color ?? defaults.fill);
    const icon = drawSymbol(symbols.includes(st.icon?.symbol) ? st.icon.symbol : 'circle', hex(st.icon?.color ?? defaults.icon), 20);
    icon.setAttribute('aria-hidden', 'true');
    item.append(el('p', { class: 'plain' }, sw, icon, ' ', (st.type || 'PRIMITIVE').toLowerCase()));
  }
  if (h.density === 'heatmap') {
    // The heatmap's colours, sparse to dense, beside what they mean.
    const ramp = el('span', { class: 'heat-ramp', 'aria-hidden': 'true' });
    ramp.style.background = `linear-gradient(to right, ${heatRamp(hex(st.icon?.color ?? defaults.icon)).slice(1).map(([, c]) => c).join(', ')})`;
    item.append(el('p', { class: 'density' }, ramp, densityNotes.heatmap));
  } else if (h.density) item.append(el('p', { class: 'density' }, densityNotes[h.density]));
  if (h.note) item.append(el('p', { class: 'note' }, (h.ids.length ? '' : 'This layer cannot be shown. ') + h.note));
  if (h.time) {
    const [b, e] = h.time.range;
    const label = el('span', { class: 'time-label' }, dateText(h.time.pos));
    const slider = el('input', { type: 'range', id: `layer-${i}-time`, class: 'time-slider', min: String(b), max: String(e),
      step: String(Math.max(1, Math.round((e - b) / 200))), value: String(h.time.pos), 'aria-valuetext': dateText(h.time.pos) });
    slider.addEventListener('input', () => {
      h.time.setPosition(Number(slider.value));
      label.textContent = dateText(h.time.pos);
      slider.setAttribute('aria-valuetext', dateText(h.time.pos));
    });
    item.append(el('p', { class: 'time' }, el('label', { for: slider.id }, 'Time '), slider, ' ', label,
      h.time.span ? el('span', { class: 'subtitle' }, ` (window ${Math.round(h.time.span / 3600000 * 10) / 10} h)`) : ''));
  }
  return item;
}

/** withGlyphs gives a style without glyphs (a raster basemap's) the
 * server's, which the clusters' numbers need. */
export function withGlyphs(style) {
  if (!style.glyphs) style.glyphs = location.origin + '/basemap/fonts/{fontstack}/{range}.pbf';
  return style;
}

/** basemapStyle is the style of the basemap a map names, when the server
 * has it configured (GET /basemaps.json: the page's policy lets its tiles
 * load from their site), else the server's first PMTiles basemap (streets
 * and labels from a local file, --basemap-pmtiles), else the built-in one
 * (a plain background when there is none); note says why the named one is
 * not shown. */
export async function basemapStyle(name) {
  const read = async (url) => {
    try {
      const res = await fetch(url, { credentials: credentialsMode() });
      if (res.ok) return await res.json();
    } catch { /* none */ }
    return null;
  };
  let note = null;
  const builtin = read('/basemap/style.json'); // beside the list: most maps draw it
  try {
    const list = await api('/basemaps.json');
    const b = name && list.find((x) => x.name.toLowerCase() === String(name).toLowerCase() && x.name !== 'builtin');
    const style = b && await read(b.style);
    if (style) return { style: withGlyphs(style), note };
    const pm = list.find((x) => x.pmtiles && x !== b);
    const pmStyle = pm && await read(pm.style);
    if (b) note = `The basemap ${b.name} could not be read: the ${pmStyle ? pm.name : 'built-in'} basemap is shown.`;
    if (pmStyle) return { style: pmStyle, note };
  } catch { /* the built-in one */ }
  const style = await builtin;
  return { style: withGlyphs(style || { version: 8, sources: {}, layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#e8eef2' } }] }), note };
}

/** newMap makes the MapLibre map of a map document in container; its
 * basemapNote says when the map's basemap could not be used. */
export async function newMap(container, doc) {
  const worker = document.querySelector('meta[name="mc-worker"]');
  if (worker) maplibregl.setWorkerUrl(worker.content);
  const e = doc.extent;
  const basemap = await basemapStyle(doc.basemap);
  const map = new maplibregl.Map({
    container,
    style: basemap.style,
    bounds: e ? [[Math.max(e[0], -180), Math.max(e[1], -85)], [Math.min(e[2], 180), Math.min(e[3], 85)]] : undefined,
    fitBoundsOptions: { padding: 20 },
    // Kept so that the page (and the tests) can read the drawn pixels.
    canvasContextAttributes: { preserveDrawingBuffer: true },
    attributionControl: { compact: true },
    // Symbols appear at once (no fade), as the page's pixels are read.
    fadeDuration: 0,
    // A page without credentials asks its tiles, glyphs and sprites without them too.
    transformRequest: credentialsMode() === 'omit' ? (url) => ({ url, credentials: 'omit' }) : undefined,
  });
  map.addControl(new maplibregl.NavigationControl(), 'top-right');
  map.basemapNote = basemap.note;
  // The layers are added once the style is read, not once the basemap is
  // drawn ('load'): its tiles and the layers' data load and draw together,
  // the first frame with both.
  if (!map.isStyleLoaded()) await new Promise((resolve) => map.once('style.load', resolve));
  return map;
}

/** drawAll draws every layer of a map document, the first layer on top
 * (the spec's list order), and returns their handles. */
export async function drawAll(map, doc) {
  const handles = [];
  let before;
  for (const [i, layer] of (doc.layers || []).entries()) {
    const h = await drawLayer(map, layer, i, before);
    handles.push(h);
    if (h.ids.length) before = h.ids[0];
  }
  return handles;
}

/** showMap draws map document doc in container, its legend's items in
 * list (or a line saying it has no layers) and popups on click, and
 * resolves to the MapLibre map once it is drawn: the map page and the
 * embed page draw a map so. */
export async function showMap(container, list, doc) {
  prefetch(doc);
  const map = await newMap(container, doc);
  const handles = await drawAll(map, doc);
  markFirstLayer(map, handles);
  bindPopups(map, () => handles);
  list.replaceChildren(...handles.map((h, i) => legendItem(h, i)));
  if (!handles.length) list.append(el('li', {}, 'This map has no layers.'));
  await whenIdle(map);
  return map;
}

/** markFirstLayer marks (performance mark mc-first-layer, for the
 * benchmarks) the first frame drawn with every source of the map's first
 * layer that has any loaded: its first layer drawn, the basemap perhaps
 * not yet whole. */
function markFirstLayer(map, handles) {
  const first = handles.find((h) => h.sources.length);
  if (!first) return;
  const check = () => {
    if (first.sources.every((s) => map.getSource(s) && map.isSourceLoaded(s))) {
      map.off('render', check);
      performance.mark('mc-first-layer');
    }
  };
  map.on('render', check);
}

/** whenIdle resolves when the map has drawn what it has. */
export function whenIdle(map) {
  return new Promise((resolve) => {
    if (map.loaded() && map.areTilesLoaded()) {
      map.once('idle', resolve);
      map.triggerRepaint();
    } else map.once('idle', resolve);
  });
}
