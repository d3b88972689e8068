// The map editor: makes a map (POST /maps.json) or edits one
// (/app/maps/{id}/edit): its title, description and basemap, layers added
// from a search of the datasets, each layer's style with a live preview,
// their order, all saved with PUT /maps/{id}.json. The preview's classes
// and legend are the API's: each change of a layer's style is sent to
// POST /maps/{id}/preview.json, which classes it as the map would, and
// its answer is drawn (lib/layers.js). The ramp picker shows the named
// ramps of GET /ramps.json.
import 'maplibre-gl/dist/maplibre-gl.css';
import './style.css';
import { api, el, entryID, session, status } from './lib/common.js';
import { bindPopups, datasetOf, densityChoice, densityChoices, densityMin, drawAll, hex, legendItem, newMap, symbols, whenIdle } from './lib/layers.js';
import { payload } from './lib/layerdoc.js';

const root = document.getElementById('editor');
const msg = document.getElementById('editor-status');
const types = ['POINT', 'PRIMITIVE', 'GRADUATED', 'PROPORTIONAL', 'CHOROPLETH'];
const methods = ['Equal Interval', 'Quantile', 'Standard Deviation', 'Max Breaks', 'Natural Breaks', 'Critical Value', 'Manual'];

// The editor's state: the map as the API last answered with the local
// changes, the selected layer, the drawn layers and the ramps.
const state = { id: Number(root.dataset.id) || 0, doc: null, selected: -1, map: null, handles: [], ramps: [], dirty: false };

// The number of the last preview asked: only its answer is drawn.
let previewSeq = 0;

/** preview asks the API for layer i as the map would hold it (its
 * classes included) and draws the answer. */
async function preview(i) {
  const seq = ++previewSeq;
  root.dataset.busy = 'true';
  try {
    const l = await api(`/maps/${state.id}/preview.json`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload(state.doc.layers[i])) });
    if (seq !== previewSeq) return;
    state.doc.layers[i] = l;
    status(msg, 'Not saved yet.');
  } catch (e) {
    if (seq === previewSeq) {
      status(msg, 'This style cannot be used: ' + e.message, true);
      delete root.dataset.busy;
    }
    return;
  }
  await showStyle();
  await redraw();
  // The page is still (the tests wait for it) once the last change is drawn.
  if (seq === previewSeq) delete root.dataset.busy;
}

// The drawing under way: drawings follow each other.
let drawing = Promise.resolve();

/** redraw draws every layer again, the legend with them; one drawing at a
 * time, in the order asked. */
function redraw() {
  drawing = drawing.then(drawNow, drawNow);
  return drawing;
}

/** drawNow draws the layers and the legend of the editor's state. */
async function drawNow() {
  const container = document.getElementById('map');
  container.dataset.state = 'drawing';
  state.handles.forEach((h) => h.remove());
  state.handles = await drawAll(state.map, state.doc);
  document.getElementById('legend').replaceChildren(...state.handles.map((h, i) => legendItem(h, i, (on) => { state.doc.layers[i].visible = on; markDirty(); })));
  await whenIdle(state.map);
  container.dataset.state = 'idle';
}

/** markDirty says there are changes to save. */
function markDirty() {
  state.dirty = true;
  status(msg, 'Not saved yet.');
}

/** showLayers lists the layers with their buttons (move, style, remove). */
function showLayers(focus) {
  const list = document.getElementById('layers');
  const n = state.doc.layers.length;
  list.replaceChildren(...state.doc.layers.map((l, i) => {
    const name = l.title || l.source;
    const b = (label, act, what, disabled) => el('button', { type: 'button', class: 'small secondary', id: `layer-${i}-${act}`, 'aria-label': `${what} ${name}`, disabled, onclick: () => layerAction(act, i) }, label);
    return el('li', { class: i === state.selected ? 'selected' : null, 'data-source': l.source },
      el('span', { class: 'layer-title' }, name), ' ',
      b('↑ Up', 'up', 'Move up', i === 0), ' ', b('↓ Down', 'down', 'Move down', i === n - 1), ' ',
      b('Style', 'style', 'Style of', false), ' ', b('Remove', 'remove', 'Remove', false));
  }));
  if (!n) list.append(el('li', {}, 'No layers yet: find a dataset below.'));
  if (focus) document.getElementById(focus)?.focus();
}

/** layerAction moves, selects or removes layer i. */
async function layerAction(act, i) {
  const ls = state.doc.layers;
  let focus = `layer-${i}-${act}`;
  if (act === 'up' || act === 'down') {
    const j = act === 'up' ? i - 1 : i + 1;
    [ls[i], ls[j]] = [ls[j], ls[i]];
    if (state.selected === i) state.selected = j;
    else if (state.selected === j) state.selected = i;
    // The moved layer keeps the focus, on the same button when it can.
    focus = `layer-${j}-${j === 0 ? 'down' : j === ls.length - 1 ? 'up' : act}`;
  } else if (act === 'remove') {
    ls.splice(i, 1);
    state.selected = state.selected === i ? -1 : state.selected > i ? state.selected - 1 : state.selected;
    focus = 'add-q';
  } else {
    state.selected = i;
    showLayers();
    showStyle();
    document.getElementById('style-type')?.focus();
    return;
  }
  markDirty();
  showLayers(focus);
  showStyle();
  await redraw();
}

/** current is the selected layer with its style's parts, as they are
 * now (a preview replaces the layer's document). */
function current() {
  const l = state.doc.layers[state.selected];
  const st = (l.styles ??= {});
  return { l, st, fill: (st.fill ??= {}), icon: (st.icon ??= {}), stroke: (st.stroke ??= {}) };
}

/** changed previews the selected layer after a change of its style. */
function changed() {
  markDirty();
  preview(state.selected);
}

/** field makes a labelled control whose change sets part of the selected
 * layer (onchange is given the control and current()) and previews it. */
function field(label, id, control, onchange) {
  control.id = id;
  control.addEventListener('change', () => {
    onchange(control, current());
    changed();
  });
  return [el('label', { for: id }, label), control];
}

/** select makes a <select> of options (value or [value, text]) with one chosen. */
function select(options, chosen) {
  return el('select', {}, options.map((o) => {
    const [v, t] = Array.isArray(o) ? o : [o, o];
    return el('option', { value: v, selected: String(v) === String(chosen ?? '') }, t);
  }));
}

/** rampPicker is a radio group of the named ramps, each shown with its
 * colours for k classes. */
function rampPicker(fill, k) {
  const n = Math.min(Math.max(k, 2), 7);
  const set = el('fieldset', { class: 'ramps' }, el('legend', {}, `Colour ramp (${n} colours)`));
  state.ramps.forEach((r, i) => {
    const input = el('input', { type: 'radio', name: 'ramp', id: `ramp-${i}`, value: r.name, checked: fill.ramp === r.name });
    input.addEventListener('change', () => {
      current().fill.ramp = r.name;
      changed();
    });
    const sw = el('span', { class: 'ramp-swatches', 'aria-hidden': 'true' }, r.ramps[n - 2].map((c) => {
      const s = el('span');
      s.style.background = hex(c);
      return s;
    }));
    set.append(el('label', { for: input.id }, input, sw, r.name));
  });
  return set;
}

/** showStyle shows the style controls of the selected layer. */
async function showStyle() {
  const panel = document.getElementById('style-panel');
  const form = document.getElementById('style-form');
  const l = state.doc.layers[state.selected];
  if (!l) {
    panel.hidden = true;
    return;
  }
  panel.hidden = false;
  document.getElementById('style-h').textContent = 'Style of ' + (l.title || l.source);
  const st = (l.styles ??= {});
  const fill = (st.fill ??= {});
  const icon = (st.icon ??= {});
  const stroke = (st.stroke ??= {});
  const ds = await datasetOf(l.source);
  if (l !== state.doc.layers[state.selected]) return;
  const numeric = (ds?.data_attributes || []).filter((a) => ['integer', 'float'].includes(a.data_type)).map((a) => a.name);
  const attr = fill.selectedAttribute || icon.selectedAttribute || '';
  const cd = fill.classification || icon.classification;
  const k = fill.classificationType === 'Manual' ? (fill.classificationBreaks?.length || 3) - 1 : fill.categories || cd?.counts?.length || 5;
  const color = (c, def) => el('input', { type: 'color', value: hex(c ?? def) });
  const num = (v, min, max, step) => el('input', { type: 'number', value: v == null ? '' : String(v), min, max, step });
  const manual = fill.classificationType === 'Manual';
  // The density of a layer that may have points (a url: layer's dataset is
  // not known): automatic is no option stored.
  const density = !ds || !ds.geometry_types?.length || ds.geometry_types.includes('point') ? [
    ...field('Point density', 'style-density', el('select', { 'aria-describedby': 'density-hint' },
      densityChoices.map(([v, t]) => el('option', { value: v, selected: v === densityChoice(l) }, t))), (c, { st }) => {
      if (c.value === 'auto') delete st.density;
      else st.density = c.value;
    }),
    el('p', { class: 'hint wide', id: 'density-hint' }, `Automatic: clusters past ${densityMin.toLocaleString('en')} points of plain symbols. Every point: no clusters or heatmap.`),
  ] : [];
  form.replaceChildren(
    ...field('Layer title', 'style-title', el('input', { value: l.title || '' }), (c, { l }) => { l.title = c.value; showLayers(); }),
    ...field('Style type', 'style-type', select(types, st.type || 'PRIMITIVE'), (c, { st, fill, icon }) => {
      st.type = c.value;
      // A classed layer needs an attribute: the first number, unless one is chosen.
      if (['CHOROPLETH', 'GRADUATED', 'PROPORTIONAL'].includes(c.value) && !fill.selectedAttribute && !icon.selectedAttribute && numeric.length) fill.selectedAttribute = numeric[0];
    }),
    ...field('Attribute to class or size by', 'style-attribute', select([['', '(none)'], ...numeric], attr), (c, { fill, icon }) => {
      // The classes are read from the fill's options (the icon's stay empty).
      fill.selectedAttribute = c.value || null;
      icon.selectedAttribute = null;
    }),
    ...field('Classification method', 'style-method', select(methods, fill.classificationType || 'Equal Interval'), (c, { fill }) => {
      fill.classificationType = c.value;
      const was = fill.classification;
      if (c.value === 'Manual' && !(fill.classificationBreaks?.length >= 2) && was) fill.classificationBreaks = was.breaks;
    }),
    ...field('Number of classes', 'style-classes', num(manual ? null : k, 2, 7, 1), (c, { fill }) => { fill.categories = Number(c.value) || null; }),
    ...field('Manual breaks (comma-separated)', 'style-breaks', el('input', { value: (fill.classificationBreaks || []).join(', '), disabled: !manual, 'aria-describedby': 'breaks-hint' }), (c, { fill }) => {
      fill.classificationBreaks = c.value.split(',').map((x) => Number(x.trim())).filter((x) => x === x && c.value.trim() !== '');
    }),
    el('p', { class: 'hint wide', id: 'breaks-hint' }, 'Manual classes: from the first break to the last, e.g. 0, 1000, 5000, 25000.'),
    rampPicker(fill, k),
    ...field('Fill colour (unclassed)', 'style-fill', color(fill.color, 0x4682b4), (c, { fill }) => { fill.color = parseInt(c.value.slice(1), 16); }),
    ...field('Fill opacity', 'style-fill-opacity', num(fill.opacity ?? 0.75, 0, 1, 0.05), (c, { fill }) => { fill.opacity = Number(c.value); }),
    ...field('Outline colour', 'style-stroke', color(stroke.color, 0x333333), (c, { stroke }) => { stroke.color = parseInt(c.value.slice(1), 16); }),
    ...field('Outline weight', 'style-weight', num(stroke.weight ?? 1, 0, 20, 0.5), (c, { stroke }) => { stroke.weight = Number(c.value); }),
    ...field('Layer opacity', 'style-opacity', num(l.opacity ?? 1, 0, 1, 0.05), (c, { l }) => { l.opacity = Number(c.value); }),
    ...field('Icon', 'style-symbol', select(symbols, icon.symbol || 'circle'), (c, { icon }) => { icon.symbol = c.value; }),
    ...field('Icon colour', 'style-icon-color', color(icon.color, 0xe6550d), (c, { icon }) => { icon.color = parseInt(c.value.slice(1), 16); }),
    ...field('Icon size', 'style-icon-size', num(icon.size || 1, 0.1, 10, 0.1), (c, { icon }) => { icon.size = Number(c.value) || 1; }),
    ...density,
    ...field('On click ($[attribute])', 'style-click', el('input', { value: st.click || '' }), (c, { st }) => { st.click = c.value || null; }),
    ...field('On hover ($[attribute])', 'style-hover', el('input', { value: st.hover || '' }), (c, { st }) => { st.hover = c.value || null; }),
  );
}

/** findDatasets lists the datasets a search found, each with an Add button. */
async function findDatasets(q) {
  const out = document.getElementById('add-results');
  out.replaceChildren(el('li', {}, 'Searching…'));
  let res;
  try {
    res = await api('/search.json?' + new URLSearchParams({ query: q || '*', model: 'Overlay', limit: '10' }));
  } catch (e) {
    out.replaceChildren(el('li', {}, 'The search failed: ' + e.message));
    return;
  }
  const entries = (res.entries || []).filter((e) => entryID(e).kind === 'dataset');
  out.replaceChildren(...entries.map((e) => {
    const { pk } = entryID(e);
    const title = e.title || `Dataset ${pk}`;
    return el('li', {}, el('button', { type: 'button', class: 'small', 'aria-label': 'Add ' + title, 'data-dataset': pk, onclick: () => addLayer(pk, title) }, 'Add'), ' ', title);
  }));
  if (!entries.length) out.append(el('li', {}, 'No dataset found.'));
}

/** addLayer adds a dataset as a new layer (first, on top), styled as the
 * API's defaults, and selects it. */
async function addLayer(pk, title) {
  const l = { source: `finder:${pk}`, title, visible: true, opacity: 1, styles: { type: 'PRIMITIVE' } };
  try {
    state.doc.layers.unshift(await api(`/maps/${state.id}/preview.json`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(l) }));
  } catch (e) {
    status(msg, 'The layer cannot be added: ' + e.message, true);
    return;
  }
  state.selected = 0;
  markDirty();
  showLayers();
  showStyle();
  // The map's first layer: the preview goes to its data.
  const e = (await datasetOf(l.source))?.extent;
  if (state.doc.layers.length === 1 && e) state.map.fitBounds([[e[0], e[1]], [e[2], e[3]]], { padding: 20, animate: false });
  await redraw();
}

/** save creates the map or stores the changes, then shows the API's answer. */
async function save(ev) {
  ev.preventDefault();
  const body = { title: document.getElementById('map-title').value, description: document.getElementById('map-description').value,
    basemap: document.getElementById('map-basemap').value };
  status(msg, 'Saving…');
  try {
    if (!state.id) {
      const doc = await api('/maps.json', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      history.replaceState(null, '', `/app/maps/${doc.id}/edit`);
      state.id = doc.id;
      await edit(doc);
    } else {
      body.layers = state.doc.layers.map(payload);
      const doc = await api(`/maps/${state.id}.json`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      state.doc = doc;
      showLayers();
      showStyle();
      await redraw();
    }
    state.dirty = false;
    status(msg, 'Saved.');
  } catch (e) {
    status(msg, 'Not saved: ' + e.message, true);
  }
}

/** edit shows a map to edit: its fields, layers, preview and legend. */
async function edit(doc) {
  state.doc = doc;
  document.getElementById('title').textContent = 'Edit “' + doc.title + '”';
  document.title = 'Edit ' + doc.title + ' · mapcommons';
  document.getElementById('map-title').value = doc.title;
  document.getElementById('map-description').value = doc.description || '';
  document.getElementById('map-basemap').value = doc.basemap;
  if (document.getElementById('map-basemap').value !== doc.basemap) {
    document.getElementById('map-basemap').prepend(el('option', { value: doc.basemap, selected: true }, doc.basemap + ' (built-in here)'));
  }
  document.getElementById('save').textContent = 'Save the map';
  const view = document.getElementById('view-link');
  view.href = `/app/maps/${doc.id}`;
  view.hidden = false;
  document.getElementById('editing').hidden = false;
  showLayers();
  if (!state.map) {
    state.map = await newMap(document.getElementById('map'), doc);
    bindPopups(state.map, () => state.handles);
    window.mcMap = state.map;
  }
  await redraw();
}

/** main asks who is signed in, fills the basemaps and ramps, and opens
 * the new map's form or the map to edit. */
async function main() {
  const me = await session();
  if (!me) {
    status(msg, '');
    msg.append('Sign in to make or edit maps: ', el('a', { href: '/app/signin' }, 'sign in'), '.');
    return;
  }
  const [basemaps, ramps] = await Promise.all([api('/basemaps.json').catch(() => []), api('/ramps.json').catch(() => [])]);
  state.ramps = ramps;
  document.getElementById('map-basemap').replaceChildren(...(basemaps.length ? basemaps : [{ name: 'builtin' }]).map((b) =>
    el('option', { value: b.name }, b.name === 'builtin' ? 'Built-in (Natural Earth)' : b.name)));
  document.getElementById('map-form').addEventListener('submit', save);
  document.getElementById('add-form').addEventListener('submit', (e) => {
    e.preventDefault();
    findDatasets(document.getElementById('add-q').value.trim());
  });
  window.addEventListener('beforeunload', (e) => { if (state.dirty) e.preventDefault(); });
  root.hidden = false;
  if (!state.id) {
    document.getElementById('title').textContent = 'New map';
    status(msg, 'Give the map a title, then add its layers.');
    return;
  }
  try {
    await edit(await api(`/maps/${state.id}.json`));
    status(msg, '');
  } catch (e) {
    root.hidden = true;
    document.getElementById('title').textContent = 'Map not found';
    status(msg, e.status === 404 ? 'There is no such map, or it is not shared with you.' : 'The map could not be loaded: ' + e.message, true);
  }
}

main();
