// The pure part of drawing a map's layers (layers.js): how a layer doc of
// GET /maps/{id}.json and its dataset's attributes become MapLibre layer
// specs and expressions, the classes' expressions from the API's breaks,
// templates, times and the legend's texts. Nothing here touches the page,
// the map or the network: the tests (web/test) import it in Node.

/** The colours of a layer whose styles name none (those of the map's KML). */
export const defaults = { fill: 0x4682b4, stroke: 0x333333, icon: 0xe6550d };
/** none is a transparent colour (features of no class). */
export const none = 'rgba(0,0,0,0)';

/** hex writes an 0xRRGGBB number as #rrggbb. */
export const hex = (c) => '#' + ((Number(c) >>> 0) & 0xffffff).toString(16).padStart(6, '0');

// The filters of a geometry type's features.
export const polygons = ['in', ['geometry-type'], ['literal', ['Polygon', 'MultiPolygon']]];
export const lines = ['in', ['geometry-type'], ['literal', ['LineString', 'MultiLineString']]];
export const points = ['in', ['geometry-type'], ['literal', ['Point', 'MultiPoint']]];

// Density: a layer of points drawn from the vector tiles past this many
// features shows how many points each drawn one stands for (the tiles thin
// points on a grid: a kept point's point_count is how many it stands for).
export const densityMin = 5000;
/** densityNote is what the legend says of a layer drawn for density. */
export const densityNote = 'Clustered: circle size and number show how many points.';
/** The font of the clusters' numbers: the server's glyphs (GET /basemap/fonts). */
export const densityFont = ['Go Bold'];
/** countOf is how many points a tile's point stands for (1 unthinned). */
const countOf = ['coalesce', ['to-number', ['get', 'point_count'], 1], 1];
/** clustered and single filter a source's points by what they stand for. */
export const clustered = ['all', points, ['>', countOf, 1]];
export const single = ['all', points, ['<=', countOf, 1]];

/** densityWanted says whether a layer of type (layerPlan's) over a dataset
 * of count features drawn from tiles is drawn for density when its styles
 * leave it to the page (density auto): a layer whose symbols say nothing
 * of size or class (POINT, PRIMITIVE) past densityMin. */
export const densityWanted = (type, classed, tiled, count) =>
  Boolean(tiled) && count > densityMin && !classed && (type === 'POINT' || type === 'PRIMITIVE');

/** densityChoices are the values of a layer's styles.density (an extension
 * of the GeoCommons styles), with what the editor calls them: auto leaves
 * it to densityWanted, none draws every point with its own symbol. */
export const densityChoices = [['auto', 'Automatic'], ['clusters', 'Clusters'], ['heatmap', 'Heatmap'], ['none', 'Every point']];

/** densityChoice is a layer's styles.density as the API keeps it (lower
 * case), auto when absent or unknown. */
export function densityChoice(layer) {
  const d = String(layer?.styles?.density ?? '').trim().toLowerCase();
  return densityChoices.some(([v]) => v === d) ? d : 'auto';
}

/** densityOf is how a drawn layer shows its points' density: 'clusters',
 * 'heatmap' or null (every point its own symbol). plan is layerPlan's;
 * tiled says it is drawn from the vector tiles, count is its dataset's
 * features, points whether it may have points, timed whether it has a time
 * slider (a cluster or a heatmap's colour has no time: never then). An
 * explicit clusters or heatmap applies whatever the layer's size or type;
 * auto clusters as densityWanted says. */
export function densityOf(layer, plan, { tiled = false, count = 0, points = true, timed = false } = {}) {
  if (timed || !points) return null;
  const d = densityChoice(layer);
  if (d === 'clusters' || d === 'heatmap') return d;
  if (d === 'none') return null;
  return densityWanted(plan.type, plan.classed, tiled, count) ? 'clusters' : null;
}

/** heatmapNote is what the legend says of a layer drawn as a heatmap. */
export const heatmapNote = 'Heatmap: colour shows where points are dense.';
/** densityNotes are the legend's notes by densityOf's answer. */
export const densityNotes = { clusters: densityNote, heatmap: heatmapNote };

/** The zooms over which a heatmap gives way to the layer's own symbols:
 * from heatFade[0] the points appear, at heatFade[1] the heatmap is gone
 * (by zoom 12 the tiles hardly thin points: each one can be clicked). */
export const heatFade = [11, 13];

/** mix is colour c (#rrggbb) moved a fraction t towards colour to, as
 * rgba with alpha a. */
export function mix(c, to, t, a = 1) {
  const n = (x) => [1, 3, 5].map((i) => parseInt(x.slice(i, i + 2), 16));
  const [p, q] = [n(c), n(to)];
  return `rgba(${p.map((v, i) => Math.round(v + (q[i] - v) * t)).join(',')},${a})`;
}

/** heatRamp is the colours of a heatmap in the family of colour (#rrggbb),
 * by density from 0 to 1: transparent, a pale tint, the colour, then a
 * darker one where points are densest. */
export function heatRamp(color) {
  return [[0, 'rgba(0,0,0,0)'], [0.1, mix(color, '#ffffff', 0.7, 0.35)], [0.35, mix(color, '#ffffff', 0.35, 0.65)],
    [0.65, mix(color, '#ffffff', 0, 0.85)], [1, mix(color, '#000000', 0.45, 0.95)]];
}

/** heatWeight is how much a tile's point weighs in a heatmap: about the
 * square root of how many points it stands for (1 unthinned), so that a
 * point of thousands colours its place without swamping its neighbours. */
export const heatWeight = ['interpolate', ['linear'], countOf, 1, 1, 10, 3, 100, 10, 1000, 30, 10000, 60];

/** heatmapSpecs are the layers of a heatmap of a source's points, id
 * prefix-heat: weighed by heatWeight, its radius growing with the zoom,
 * coloured by heatRamp(color), fading out over heatFade while the layer's
 * own symbols (layerSpecs) fade in. */
export function heatmapSpecs(prefix, color, opacity = 1) {
  return [{ id: prefix + '-heat', type: 'heatmap', filter: points, maxzoom: heatFade[1], paint: {
    'heatmap-weight': heatWeight,
    // A lone point is a faint spot, a few hundred points a full colour.
    'heatmap-intensity': ['interpolate', ['linear'], ['zoom'], 0, 0.4, heatFade[1], 1.2],
    'heatmap-radius': ['interpolate', ['linear'], ['zoom'], 0, 6, 6, 14, heatFade[1], 28],
    'heatmap-color': ['interpolate', ['linear'], ['heatmap-density'], ...heatRamp(color).flat()],
    'heatmap-opacity': ['interpolate', ['linear'], ['zoom'], heatFade[0], opacity, heatFade[1], 0] } }];
}

/** densitySpecs are the layers of the clusters of a source's thinned
 * points, ids prefix-cluster and prefix-cluster-count: circles of colour
 * whose area grows with point_count, and the number on each. Points that
 * stand for one are left to the layer's own symbols. */
export function densitySpecs(prefix, color, opacity = 1) {
  return [
    { id: prefix + '-cluster', type: 'circle', filter: clustered, paint: {
      'circle-color': color, 'circle-opacity': 0.7 * opacity,
      // The area grows with the count: 3 pixels for 2 points, 30 for 10,000.
      'circle-radius': ['interpolate', ['linear'], ['sqrt', countOf], 1, 2, 10, 10, 100, 30],
      'circle-stroke-color': '#ffffff', 'circle-stroke-width': 1, 'circle-stroke-opacity': opacity } },
    // The numbers, the biggest placed first; one that would cover another
    // is left out (the circle still shows it).
    { id: prefix + '-cluster-count', type: 'symbol', filter: clustered,
      layout: { 'text-field': ['number-format', countOf, { locale: 'en' }], 'text-font': densityFont, 'text-size': 11,
        'symbol-sort-key': ['-', countOf], 'text-padding': 1 },
      paint: { 'text-color': '#ffffff', 'text-halo-color': 'rgba(0,0,0,0.6)', 'text-halo-width': 1.2, 'text-opacity': opacity } },
  ];
}

// The palette of the spec: each symbol name draws on a canvas.
export const symbols = ['circle', 'propCircle', 'outlineCircle', 'hollowCircle', 'square', 'propSquare', 'outlineSquare',
  'hollowSquare', 'balloonIcon', 'pushpinIcon', 'circleIcon', 'featherIcon', 'flagIcon', 'ringIcon', 'squareIcon', 'xPointIcon'];

/** columnName is the name of the column an attribute name of a layer
 * finds among a dataset's attributes (its data_attributes), by the
 * server's rule: the column whose name it is, else the one whose
 * original_name it is. Features carry the column's name, so that is what
 * is read. Without the attributes (a url: layer), or when no column
 * matches, the name is used as given. */
export function columnName(attrs, name) {
  if (name == null || !Array.isArray(attrs)) return name;
  const a = attrs.find((x) => x.name === name) || attrs.find((x) => x.original_name === name);
  return a ? a.name : name;
}

/** classOf is the classification the API gave a layer, or null. */
export function classOf(layer) {
  const st = layer.styles || {};
  return st.fill?.classification || st.icon?.classification || null;
}

/** sizeAttribute is the attribute a PROPORTIONAL layer is sized by, as
 * the layer names it. */
export function sizeAttribute(layer) {
  const st = layer.styles || {};
  return st.icon?.selectedAttribute || st.fill?.selectedAttribute || null;
}

/** layerPlan is what styling a layer needs from its doc and its dataset's
 * attributes (null when unknown): its style type, its classes (cd: the
 * API's classification, null for none), whether it is drawn by class,
 * and the feature properties of its time (temporal) and of its size
 * (sizeAttr, PROPORTIONAL layers), as the features name them. */
export function layerPlan(layer, attrs) {
  const st = layer.styles || {};
  const type = (st.type || layer.type || 'PRIMITIVE').toUpperCase();
  let cd = classOf(layer);
  if (cd?.attribute != null) cd = { ...cd, attribute: columnName(attrs, cd.attribute) };
  const classed = Boolean(cd && cd.counts?.length > 0 && (type === 'CHOROPLETH' || type === 'GRADUATED'));
  const temporal = columnName(attrs, st.temporal?.attributes?.[0]);
  const sizeAttr = type === 'PROPORTIONAL' ? columnName(attrs, sizeAttribute(layer)) : null;
  return { type, cd, classed, temporal, sizeAttr };
}

/** classIndex is an expression giving the class of a feature (-1: none)
 * from the API's breaks: class i is [breaks[i], breaks[i+1]), the last one
 * closed, as the API classes. */
export function classIndex(cd) {
  const v = ['get', cd.attribute];
  const b = cd.breaks;
  const n = cd.counts.length;
  const stops = ['step', v, 0];
  for (let i = 1; i < n; i++) {
    // Equal breaks leave an empty class: MapLibre's stops must increase.
    if (b[i] > stops[stops.length - 2] || stops.length === 3) stops.push(b[i], i);
  }
  return ['case',
    ['!=', ['typeof', v], 'number'], -1,
    ['<', v, b[0]], -1,
    ['>', v, b[n]], -1,
    stops.length > 3 ? stops : 0];
}

/** byClass maps the class index of a feature to one of values (fallback
 * for no class). */
export function byClass(cd, values, fallback) {
  return ['match', classIndex(cd), ...values.flatMap((v, i) => [i, v]), fallback];
}

/** template replaces each $[name] of a click or hover template with the
 * feature's value (blank for null or unknown names); the result is text.
 * With the dataset's attributes, a name is found as the server finds it
 * (columnName). */
export function template(tmpl, props, attrs) {
  return String(tmpl).replace(/\$\[([^\]]*)\]/g, (_, name) => {
    const v = props[columnName(attrs, name)];
    return v == null ? '' : String(v);
  });
}

/** timeOf reads a time element or a temporal attribute's value: ms since
 * the epoch (a number), now, ISO 8601 (also YYYYMMDDTHH:MM:SSZ); NaN else. */
export function timeOf(v) {
  if (v == null || v === '') return NaN;
  if (typeof v === 'number') return v;
  const s = String(v).trim();
  if (s.toLowerCase() === 'now') return Date.now();
  if (/^-?\d+$/.test(s)) return Number(s);
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2}):?(\d{2}):?(\d{2})(.*)$/.exec(s);
  return Date.parse(m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[7] || 'Z'}` : s);
}

/** timeRange is [begin, end] of a timeline ({begin, end, period}: two of
 * them), the data's [min, max] filling what it leaves open. */
export function timeRange(tl, dataMin, dataMax) {
  let b = timeOf(tl?.begin);
  let e = timeOf(tl?.end);
  const p = Number(tl?.period) || NaN;
  if (Number.isNaN(b) && !Number.isNaN(e) && p) b = e - p;
  if (Number.isNaN(e) && !Number.isNaN(b) && p) e = b + p;
  if (Number.isNaN(b)) b = dataMin;
  if (Number.isNaN(e)) e = dataMax;
  return [b, e];
}

/** centroid is a point inside-ish a polygon feature (the centre of its
 * largest ring's vertices, weighted by area), for symbols on polygons. */
export function centroid(geom) {
  const polys = geom.type === 'Polygon' ? [geom.coordinates] : geom.coordinates;
  let best = null;
  let bestArea = -1;
  for (const p of polys) {
    const ring = p[0];
    let a = 0;
    let x = 0;
    let y = 0;
    for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
      const f = ring[j][0] * ring[i][1] - ring[i][0] * ring[j][1];
      a += f;
      x += (ring[j][0] + ring[i][0]) * f;
      y += (ring[j][1] + ring[i][1]) * f;
    }
    if (Math.abs(a) > bestArea && a !== 0) {
      bestArea = Math.abs(a);
      best = [x / (3 * a), y / (3 * a)];
    }
  }
  return best || polys[0][0][0];
}

/** scanFeatures prepares a GeoJSON layer's features for styling: each
 * gets its time (property __mc_t, null when unreadable) when the layer
 * has a temporal attribute, and the times' range and the largest size
 * value (at least 1) are read. It returns {tmin, tmax, maxValue}. */
export function scanFeatures(fc, temporal, sizeAttr) {
  let tmin = Infinity;
  let tmax = -Infinity;
  let maxValue = 1;
  for (const f of fc.features) {
    f.properties ??= {};
    if (temporal) {
      const t = timeOf(f.properties[temporal]);
      f.properties.__mc_t = Number.isNaN(t) ? null : t;
      if (!Number.isNaN(t)) { tmin = Math.min(tmin, t); tmax = Math.max(tmax, t); }
    }
    if (sizeAttr && typeof f.properties[sizeAttr] === 'number') maxValue = Math.max(maxValue, Math.abs(f.properties[sizeAttr]));
  }
  return { tmin, tmax, maxValue };
}

/** statsMax is the largest magnitude of a dataset's column (its stats,
 * which the API gives to who may download it) for a proportional layer
 * drawn from tiles, or null when unknown. */
export function statsMax(ds, column) {
  const s = column != null ? ds?.stats?.[column] : null;
  if (s?.max == null) return null;
  return Math.max(Math.abs(s.max), Math.abs(s.min ?? 0)) || 1;
}

/**
 * layerSpecs are the MapLibre layers (without source) drawing a layer
 * doc: polygons' fill, lines (and polygons' outlines, cased or dashed as
 * the icon's lineStyle says), points' symbols and, when pointsId differs
 * from id, the symbols of polygons' centroids. density (densityOf's) draws
 * the points as clusters (from clusterSource when given) or as a heatmap
 * instead. plan is layerPlan's;
 * maxValue the largest size value; image(symbol, colour, shadow) names
 * the map image of a palette symbol in a colour (#rrggbb). It returns
 * {specs, note} (note: why the icon is not the one asked, or null).
 */
export function layerSpecs(layer, plan, { id, pointsId = id, maxValue = 1, image, density = null, clusterSource = null }) {
  const st = layer.styles || {};
  const { type, cd, classed, sizeAttr } = plan;
  const op = layer.opacity ?? 1;
  const specs = [];
  let note = null;

  // Colours: the API's classes for a classed layer, else the styles'.
  const fillColor = classed ? byClass(cd, cd.colors.map(hex), none) : hex(st.fill?.color ?? defaults.fill);
  const iconColor = st.icon?.color ?? defaults.icon;
  const strokeColor = hex(st.stroke?.color ?? defaults.stroke);
  const weight = st.stroke?.weight ?? 1;
  const fillOpacity = (st.fill?.opacity ?? 0.75) * op;
  const symbolic = type === 'GRADUATED' || type === 'PROPORTIONAL';
  specs.push({ id: id + '-fill', type: 'fill', filter: polygons, paint: {
    'fill-color': symbolic ? hex(st.fill?.color ?? defaults.fill) : fillColor,
    'fill-opacity': symbolic ? fillOpacity * 0.3 : fillOpacity } });
  // Lines: the icon's lineStyle says dashed, thick or cased.
  const ls = st.icon?.lineStyle || 'regular';
  const w = ls === 'thick' || ls === 'dashedThick' ? weight * 3 : weight;
  if (ls === 'cased') {
    specs.push({ id: id + '-case', type: 'line', filter: ['any', polygons, lines], paint: { 'line-color': '#ffffff', 'line-width': w + 3, 'line-opacity': (st.stroke?.alpha ?? 0.75) * op } });
  }
  specs.push({ id: id + '-line', type: 'line', filter: ['any', polygons, lines], paint: {
    'line-color': strokeColor,
    'line-width': w, 'line-opacity': (st.stroke?.alpha ?? 0.75) * op,
    ...(ls.startsWith('dashed') ? { 'line-dasharray': [3, 2] } : {}) } });

  // Points (and polygons' centroids for graduated and proportional
  // symbols): the palette's symbol, coloured by class when classed,
  // sized by class (GRADUATED) or by value (PROPORTIONAL).
  const symbol = symbols.includes(st.icon?.symbol) ? st.icon.symbol : (type === 'PROPORTIONAL' ? 'propCircle' : 'circle');
  if (st.icon?.symbol && !symbols.includes(st.icon.symbol)) note = `Its icon (${st.icon.symbol}) is drawn as a circle: only the palette's icons are shown here.`;
  const shadow = st.icon?.dropshadow === 1;
  const scale = Math.sqrt(st.icon?.size > 0 ? st.icon.size : 1);
  let img = image(symbol, hex(iconColor), shadow);
  if (classed) {
    img = byClass(cd, cd.colors.map((c) => image(symbol, hex(c), shadow)), image(symbol, '#9e9e9e', shadow));
  }
  let size = scale;
  if (type === 'GRADUATED' && classed) size = byClass(cd, cd.counts.map((_, k) => scale * (0.6 + (0.9 * k) / Math.max(cd.counts.length - 1, 1))), scale * 0.4);
  if (type === 'PROPORTIONAL' && sizeAttr) {
    size = ['*', scale * 1.6, ['sqrt', ['/', ['max', ['abs', ['to-number', ['get', sizeAttr], 0]], 0], maxValue]]];
  }
  const symbolLayout = { 'icon-image': img, 'icon-size': size, 'icon-allow-overlap': true, 'icon-ignore-placement': true };
  const symbolPaint = { 'icon-opacity': (st.icon?.opacity ?? 1) * op };
  const iconOpacity = (st.icon?.opacity ?? 1) * op;
  if (density === 'heatmap') {
    // A heatmap, giving way to the points themselves as the zoom grows:
    // they are not drawn (nor clicked) under it.
    specs.push(...heatmapSpecs(id, hex(iconColor), iconOpacity));
    specs.push({ id: id + '-point', type: 'symbol', filter: points, minzoom: heatFade[0], layout: symbolLayout,
      paint: { 'icon-opacity': ['interpolate', ['linear'], ['zoom'], heatFade[0], 0, heatFade[1], iconOpacity] } });
  } else if (density) {
    // Points drawn for density: the clusters, then the lone points; a
    // GeoJSON layer's from a source of its points clustered by MapLibre
    // (clusterSource), whose clusters carry point_count too.
    const src = clusterSource ? { source: clusterSource } : {};
    specs.push(...densitySpecs(id, hex(iconColor), iconOpacity).map((l) => ({ ...l, ...src })));
    specs.push({ id: id + '-point', type: 'symbol', ...src, filter: single, layout: symbolLayout, paint: symbolPaint });
  } else {
    specs.push({ id: id + '-point', type: 'symbol', filter: points, layout: symbolLayout, paint: symbolPaint });
  }
  if (pointsId !== id) specs.push({ id: id + '-centroid', type: 'symbol', source: pointsId, layout: symbolLayout, paint: symbolPaint });
  return { specs, note };
}

/** timeWindow is the filter of a drawn layer (MapLibre id l, of the ids
 * layerSpecs makes) showing the features whose time (property attr) is
 * in [lo, pos]; a centroid layer has no geometry filter of its own. */
export function timeWindow(l, attr, lo, pos) {
  const t = ['to-number', ['get', attr], NaN];
  const window = ['all', ['>=', t, lo], ['<=', t, pos]];
  const base = l.endsWith('-fill') ? polygons : l.endsWith('-line') || l.endsWith('-case') ? ['any', polygons, lines] : l.endsWith('-point') ? points : null;
  return base ? ['all', base, window] : window;
}

/** sliderSpan is the width of a temporal layer's window (ms) from its
 * slider (a number, or a timeline {begin, end, period}) over the range
 * [b, e]; null: everything from the timeline's begin. */
export function sliderSpan(sp, b, e) {
  if (typeof sp === 'number') return sp;
  if (sp && typeof sp === 'object') {
    const r = timeRange(sp, b, e);
    return Number(sp.period) || (r[1] - r[0]) || null;
  }
  return null;
}

/** sliderStart is where a temporal layer's slider starts: its slider's
 * end kept within [b, e], else e. */
export function sliderStart(sp, b, e) {
  return sp && typeof sp === 'object' && sp.end != null ? Math.min(Math.max(timeOf(sp.end), b), e) : e;
}

/** fmtBreak writes a class break for people (the exact value is in data-*). */
export const fmtBreak = (v) => (Math.abs(v) >= 1000 || Number.isInteger(v) ? Math.round(v * 100) / 100 : Number(v.toPrecision(4))).toLocaleString('en');

/** dateText writes a time for the slider's label. */
export const dateText = (t) => new Date(t).toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC');
