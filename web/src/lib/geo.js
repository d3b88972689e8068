// Map helpers the pages share: the basemap style, a box drawn on a MapLibre
// map with the mouse (shown as an outline layer), and a circle around a
// point, drawn as a polygon.

/** basemapStyle is the server's basemap for the pages that draw no map
 * document (a dataset's, search's, the OGC pages): its first PMTiles
 * basemap when it has one (streets and labels), else the built-in one,
 * else a plain background. */
export async function basemapStyle() {
  const read = async (url) => {
    try {
      const res = await fetch(url, { credentials: 'same-origin' });
      if (res.ok) return await res.json();
    } catch { /* none */ }
    return null;
  };
  const builtin = read('/basemap/style.json'); // beside the list: most servers have no other
  const list = await read('/basemaps.json');
  const pm = Array.isArray(list) && list.find((b) => b.pmtiles);
  const style = (pm && await read(pm.style)) || await builtin;
  return style || { version: 8, sources: {}, layers: [{ id: 'background', type: 'background', paint: { 'background-color': '#e8eef2' } }] };
}

/** round5 rounds a coordinate to 5 decimals (about a metre). */
const round5 = (v) => Math.round(v * 1e5) / 1e5;

/** boxDrawer lets the mouse drag a box on map while it is active; onBox
 * receives [west, south, east, north]. The map does not pan meanwhile. */
export function boxDrawer(map, onBox) {
  const canvas = map.getCanvasContainer();
  let active = false;
  let start = null;
  let frame = null;
  /** pos is the pointer's position in the map's pixels. */
  const pos = (e) => {
    const r = canvas.getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };
  canvas.addEventListener('pointerdown', (e) => {
    if (!active || e.button !== 0) return;
    e.preventDefault();
    e.stopPropagation();
    start = pos(e);
    frame = document.createElement('div');
    frame.className = 'drawn-box';
    canvas.append(frame);
    canvas.setPointerCapture(e.pointerId);
  }, true);
  canvas.addEventListener('pointermove', (e) => {
    if (!start) return;
    const p = pos(e);
    Object.assign(frame.style, {
      left: Math.min(p.x, start.x) + 'px', top: Math.min(p.y, start.y) + 'px',
      width: Math.abs(p.x - start.x) + 'px', height: Math.abs(p.y - start.y) + 'px',
    });
  });
  canvas.addEventListener('pointerup', (e) => {
    if (!start) return;
    const p = pos(e);
    const a = map.unproject([Math.min(p.x, start.x), Math.max(p.y, start.y)]);
    const b = map.unproject([Math.max(p.x, start.x), Math.min(p.y, start.y)]);
    frame.remove();
    const moved = Math.abs(p.x - start.x) > 3 && Math.abs(p.y - start.y) > 3;
    start = null;
    if (moved) onBox([a.lng, a.lat, b.lng, b.lat].map(round5));
  });
  return {
    /** setActive turns drawing on (the map stops panning) or off. */
    setActive(on) {
      active = on;
      if (on) map.dragPan.disable(); else map.dragPan.enable();
      canvas.classList.toggle('drawing', on);
    },
    get active() { return active; },
  };
}

/** boxPolygon is the GeoJSON polygon of [w, s, e, n]. */
export function boxPolygon(b) {
  const [w, s, e, n] = b;
  return { type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] };
}

/** kmPer is how many kilometres one of each radius unit is. */
const kmPer = { km: 1, m: 0.001, ft: 0.0003048, miles: 1.609344 };

/** circlePolygon approximates the circle of radius (in units) around
 * lon, lat with 64 vertices; degrees are degrees of arc. */
export function circlePolygon(lon, lat, radius, units) {
  const arc = units === 'degrees' ? radius * Math.PI / 180 : radius * (kmPer[units] ?? 1) / 6371.0088;
  const φ1 = lat * Math.PI / 180;
  const λ1 = lon * Math.PI / 180;
  const ring = [];
  for (let i = 0; i <= 64; i++) {
    const θ = (i % 64) / 64 * 2 * Math.PI;
    const φ2 = Math.asin(Math.sin(φ1) * Math.cos(arc) + Math.cos(φ1) * Math.sin(arc) * Math.cos(θ));
    const λ2 = λ1 + Math.atan2(Math.sin(θ) * Math.sin(arc) * Math.cos(φ1), Math.cos(arc) - Math.sin(φ1) * Math.sin(φ2));
    ring.push([round5(λ2 * 180 / Math.PI), round5(φ2 * 180 / Math.PI)]);
  }
  return { type: 'Polygon', coordinates: [ring] };
}

/** showOutline draws (or with geometry null removes) a dashed outline
 * named id on the map: the drawn box or the radius's circle. */
export function showOutline(map, id, geometry) {
  const data = { type: 'FeatureCollection', features: geometry ? [{ type: 'Feature', geometry, properties: {} }] : [] };
  const src = map.getSource(id);
  if (src) {
    src.setData(data);
    return;
  }
  map.addSource(id, { type: 'geojson', data });
  map.addLayer({ id: id + '-fill', type: 'fill', source: id, paint: { 'fill-color': '#1c7ed6', 'fill-opacity': 0.06 } });
  map.addLayer({ id: id + '-line', type: 'line', source: id, paint: { 'line-color': '#0b4f8a', 'line-width': 2, 'line-dasharray': [2, 1] } });
}
