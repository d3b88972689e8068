// The map page: a map of the API (GET /maps/{id}.json) drawn with every
// layer's style on a MapLibre map (lib/layers.js), its legend with the
// API's classes, visibility toggles, time sliders and popups.
import 'maplibre-gl/dist/maplibre-gl.css';
import './style.css';
import { api, el, session, status } from './lib/common.js';
import { showMap } from './lib/layers.js';
import { sharePanel } from './lib/share.js';

const root = document.getElementById('mapview');
const id = root.dataset.id;
const msg = document.getElementById('map-status');

/** showFacts fills the title, description and the owner's edit link. */
async function showFacts(doc) {
  document.title = (doc.title || 'Map') + ' · mapcommons';
  document.getElementById('title').textContent = doc.title || '(untitled)';
  document.getElementById('description').textContent = doc.description || '';
  const me = await session();
  const actions = [el('span', {}, `By ${doc.contributor || 'someone'} · `), el('a', { href: `/maps/${doc.id}.kml` }, 'Download KML')];
  const owner = me && (me.admin || me.login === doc.contributor);
  if (owner) actions.push(' · ', el('a', { href: `/app/maps/${doc.id}/edit` }, 'Edit this map'));
  document.getElementById('actions').replaceChildren(...actions);
  if (owner) showSharing(doc);
}

/** showSharing gives the owner (and administrators) the sharing panel. */
async function showSharing(doc) {
  const panel = document.getElementById('share-panel');
  document.getElementById('share-section').hidden = false;
  try {
    await sharePanel(panel, 'map', doc.id);
  } catch (e) {
    panel.textContent = 'The sharing panel could not be loaded: ' + e.message;
  }
}

/** main reads the map (or says it is not found), draws it and its legend. */
async function main() {
  let doc;
  try {
    doc = await api(`/maps/${id}.json`);
  } catch (e) {
    document.getElementById('title').textContent = 'Map not found';
    status(msg, e.status === 404 || e.status === 401 || e.status === 403
      ? 'There is no such map, or it is not shared with you (' + e.message + ').'
      : 'The map could not be loaded: ' + e.message, true);
    return;
  }
  root.hidden = false;
  // The title, owner and sharing panel beside the map, not before it.
  showFacts(doc).catch((e) => status(msg, 'The map\'s details could not be loaded: ' + e.message, true));
  status(msg, 'Drawing the map…');
  const container = document.getElementById('map');
  const map = await showMap(container, document.getElementById('legend'), doc);
  status(msg, map.basemapNote || '');
  // The map is drawn: say so (the tests wait for it).
  container.dataset.state = 'idle';
  performance.mark('mc-map-drawn'); // the time to a map drawn whole, for the benchmarks
  window.mcMap = map;
}

main();
