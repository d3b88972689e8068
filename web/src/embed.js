// The embed page (GET /app/maps/{id}/embed): a public map alone, for an
// <iframe> on any site: the map filling the frame, its legend folded away
// in a small frame, a link to the map's page. Every request goes without
// the visitor's credentials: an embed shows what anyone may see. Once the
// map is drawn the page tells the page holding the frame (postMessage
// {type: 'mapcommons:embed', id, state}): 'idle' drawn, 'error' not
// shown; the tests wait for it.
import 'maplibre-gl/dist/maplibre-gl.css';
import './style.css';
import './embed.css';
import { api, omitCredentials, status } from './lib/common.js';
import { showMap } from './lib/layers.js';

omitCredentials();
const root = document.getElementById('embed');
const id = root.dataset.id;
const msg = document.getElementById('map-status');

/** tell says the map's state to the page holding the frame (nothing but
 * the public map's id and the state). */
function tell(state) {
  if (window.parent !== window) window.parent.postMessage({ type: 'mapcommons:embed', id: Number(id), state }, '*');
}

/** main reads the map, as anyone may, and draws it with its legend. */
async function main() {
  // A small frame keeps the map in view: the legend starts folded.
  if (window.innerWidth < 480 || window.innerHeight < 320) document.getElementById('legend-box').open = false;
  let doc;
  try {
    doc = await api(`/maps/${id}.json`);
  } catch {
    status(msg, 'This map cannot be shown.', true);
    tell('error');
    return;
  }
  document.title = (doc.title || 'Map') + ' · mapcommons';
  document.getElementById('legend-title').textContent = doc.title || 'Layers';
  const container = document.getElementById('map');
  const map = await showMap(container, document.getElementById('legend'), doc);
  status(msg, map.basemapNote || '');
  container.dataset.state = 'idle';
  window.mcMap = map;
  tell('idle');
}

main();
