// The addresses a GIS user pastes to open a dataset elsewhere: its OGC API
// – Features collection, the TileJSON of its vector tiles, the WMS and
// the layer's name there, the OGC map tiles' template; each with how to
// open it in QGIS (docs/ogc.md). Pure: the tests (web/test) read it.

const maxNameTitle = 48;

/** readableName is a dataset's name in the OGC API's collections and the
 * WMS's layers, as the server makes it (mapcommons.ReadableName): the
 * title in lower case, each run of anything but ASCII letters and digits
 * one underscore, at most 48 characters of it (cut at an underscore when
 * one is in its last third), then "-" and the id. */
export function readableName(title, id) {
  let s = String(title || '').toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  if (s.length > maxNameTitle) {
    s = s.slice(0, maxNameTitle);
    const i = s.lastIndexOf('_');
    if (i >= Math.floor(maxNameTitle * 2 / 3)) s = s.slice(0, i);
  }
  return (s || 'dataset') + '-' + id;
}

/** gisURLs are the addresses of dataset ds ({id, title}) on the server at
 * origin ("https://maps.example.org"), each {key, label, url, qgis}, with
 * a layer name where the service lists the dataset by one. */
export function gisURLs(origin, ds) {
  const base = String(origin).replace(/\/+$/, '');
  const name = readableName(ds.title, ds.id);
  const coll = `${base}/ogc/collections/${ds.id}`;
  return [
    { key: 'features', label: 'OGC API – Features', url: `${base}/ogc`, also: coll, layer: name,
      qgis: `Layer ▸ Add Layer ▸ Add WFS / OGC API – Features Layer…, New, paste the URL, Connect, pick ${name}, Add.` },
    { key: 'tilejson', label: 'Vector tiles (TileJSON)', url: `${coll}/tiles/WebMercatorQuad/tilejson.json`, layer: String(ds.id),
      qgis: `Layer ▸ Add Layer ▸ Add Vector Tile Layer…, New Generic Connection, URL ${coll}/tiles/WebMercatorQuad/{z}/{y}/{x} (zooms 0 to 22); MapLibre takes the TileJSON as a vector source, its layer "${ds.id}".` },
    { key: 'wms', label: 'WMS 1.3.0', url: `${base}/wms?SERVICE=WMS&REQUEST=GetCapabilities`, layer: name,
      qgis: `Layer ▸ Add Layer ▸ Add WMS/WMTS Layer…, New, paste the URL, Connect, pick the layer ${name}, Add.` },
    { key: 'maptiles', label: 'Map tiles (PNG, XYZ)', url: `${coll}/map/tiles/WebMercatorQuad/{z}/{y}/{x}`,
      qgis: 'Browser ▸ XYZ Tiles ▸ New Connection…, paste the URL (zooms 0 to 22), then add it to the map.' },
  ];
}
