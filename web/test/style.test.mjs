// The pure part of drawing a map's layers (web/src/lib/style.js): the
// MapLibre layers and expressions a layer doc of GET /maps/{id}.json gives.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createExpression, latest, validateStyleMin } from '@maplibre/maplibre-gl-style-spec';
import {
  byClass, centroid, classIndex, classOf, clustered, dateText, densityChoice, densityChoices, densityMin, densityNotes, densityOf,
  densityWanted, fmtBreak, heatFade, heatRamp, hex, layerPlan, layerSpecs, mix, scanFeatures, single,
  sliderSpan, sliderStart, statsMax, template, timeOf, timeRange, timeWindow,
} from '../src/lib/style.js';

// The classification the API gives a CHOROPLETH layer over a population
// column: 4 quantile classes, their colours (a ramp) and counts.
const popClasses = {
  attribute: 'pop', method: 'Quantile', breaks: [10, 100, 1000, 5000, 20000],
  counts: [3, 3, 2, 2], colors: [0xffffcc, 0xa1dab4, 0x41b6c4, 0x225ea8], nulls: 1, outside: 0,
};

// image names a palette symbol's image as layers.js does.
const image = (symbol, color, shadow) => `mc-${symbol}-${color.slice(1)}${shadow ? '-s' : ''}`;

/** ev evaluates the subset of MapLibre expressions layerSpecs writes on a
 * feature's properties, to check what an expression gives, not its shape. */
function ev(e, props) {
  if (!Array.isArray(e)) return e;
  const [op, ...a] = e;
  const v = (x) => ev(x, props);
  switch (op) {
    case 'get': return props[a[0]] ?? null;
    case 'typeof': { const x = v(a[0]); return x === null ? 'null' : typeof x; }
    case '!=': return v(a[0]) !== v(a[1]);
    case '<': return v(a[0]) < v(a[1]);
    case '>': return v(a[0]) > v(a[1]);
    case 'case': {
      for (let i = 0; i + 1 < a.length; i += 2) if (v(a[i])) return v(a[i + 1]);
      return v(a[a.length - 1]);
    }
    case 'step': {
      const x = v(a[0]);
      let out = v(a[1]);
      for (let i = 2; i < a.length; i += 2) if (x >= a[i]) out = v(a[i + 1]);
      return out;
    }
    case 'match': {
      const x = v(a[0]);
      for (let i = 1; i + 1 < a.length; i += 2) if (x === a[i]) return v(a[i + 1]);
      return v(a[a.length - 1]);
    }
    case 'to-number': { const x = Number(v(a[0])); return v(a[0]) == null || Number.isNaN(x) ? v(a[1]) : x; }
    case 'abs': return Math.abs(v(a[0]));
    case 'max': return Math.max(...a.map(v));
    case 'sqrt': return Math.sqrt(v(a[0]));
    case 'coalesce': { for (const x of a) { const y = v(x); if (y != null) return y; } return null; }
    case 'all': return a.every(v);
    case '<=': return v(a[0]) <= v(a[1]);
    case 'in': return v(a[1]).includes(v(a[0]));
    case 'literal': return a[0];
    case 'geometry-type': return props.$type;
    case 'number-format': return String(v(a[0]));
    case 'interpolate': {
      const x = v(a[1]);
      const stops = a.slice(2);
      if (x <= stops[0]) return stops[1];
      for (let i = 2; i < stops.length; i += 2) {
        if (x <= stops[i]) return stops[i - 1] + (stops[i + 1] - stops[i - 1]) * (x - stops[i - 2]) / (stops[i] - stops[i - 2]);
      }
      return stops[stops.length - 1];
    }
    case '/': return v(a[0]) / v(a[1]);
    case '*': return a.map(v).reduce((x, y) => x * y, 1);
    default: throw new Error('ev: no ' + op);
  }
}

test('hex writes colour numbers as #rrggbb', () => {
  assert.equal(hex(0x4682b4), '#4682b4');
  assert.equal(hex(255), '#0000ff');
  assert.equal(hex('16711680'), '#ff0000');
  assert.equal(hex(0x1ff0000), '#ff0000'); // only 24 bits
});

test('classIndex: a feature falls in the class of its value, [lo, hi) and the last closed', () => {
  const e = classIndex(popClasses);
  const cls = (pop) => ev(e, { pop });
  assert.equal(cls(10), 0);
  assert.equal(cls(99.9), 0);
  assert.equal(cls(100), 1);
  assert.equal(cls(4999), 2);
  assert.equal(cls(5000), 3);
  assert.equal(cls(20000), 3); // the last class is closed
  assert.equal(cls(20001), -1);
  assert.equal(cls(9), -1);
  assert.equal(ev(e, {}), -1); // no value
  assert.equal(cls('1000'), -1); // a string is no number
});

test('classIndex: equal breaks leave an empty class and increasing stops', () => {
  const cd = { attribute: 'n', breaks: [0, 5, 5, 10], counts: [4, 0, 6], colors: [1, 2, 3] };
  const e = classIndex(cd);
  const stops = e[e.length - 1];
  assert.deepEqual(stops, ['step', ['get', 'n'], 0, 5, 1]);
  assert.equal(ev(e, { n: 7 }), 1);
  // One class: no step at all.
  assert.equal(classIndex({ attribute: 'n', breaks: [0, 10], counts: [3] }).at(-1), 0);
});

test('a CHOROPLETH layer fills its polygons with the colours of its classes', () => {
  const layer = { source: 'finder:12', opacity: 0.8, visible: true,
    styles: { type: 'CHOROPLETH', fill: { selectedAttribute: 'pop', opacity: 0.5, classification: popClasses }, stroke: { color: 0x222222, weight: 2 } } };
  const plan = layerPlan(layer);
  assert.equal(plan.type, 'CHOROPLETH');
  assert.equal(plan.classed, true);
  const { specs, note } = layerSpecs(layer, plan, { id: 'mc0', image });
  assert.equal(note, null);
  assert.deepEqual(specs.map((s) => s.id), ['mc0-fill', 'mc0-line', 'mc0-point']);
  const fill = specs[0];
  assert.deepEqual(fill.filter, ['in', ['geometry-type'], ['literal', ['Polygon', 'MultiPolygon']]]);
  assert.equal(fill.paint['fill-opacity'], 0.5 * 0.8);
  const color = fill.paint['fill-color'];
  assert.deepEqual(color, byClass(popClasses, ['#ffffcc', '#a1dab4', '#41b6c4', '#225ea8'], 'rgba(0,0,0,0)'));
  assert.equal(ev(color, { pop: 50 }), '#ffffcc');
  assert.equal(ev(color, { pop: 6000 }), '#225ea8');
  assert.equal(ev(color, { pop: null }), 'rgba(0,0,0,0)');
  const line = specs[1];
  assert.equal(line.paint['line-color'], '#222222');
  assert.equal(line.paint['line-width'], 2);
  assert.equal(line.paint['line-opacity'], 0.75 * 0.8);
  // Points of the layer get the class's colour of the default circle.
  assert.equal(ev(specs[2].layout['icon-image'], { pop: 150 }), 'mc-circle-a1dab4');
  assert.equal(ev(specs[2].layout['icon-image'], {}), 'mc-circle-9e9e9e');
});

test('a CHOROPLETH layer without classes is filled with its own colour', () => {
  const layer = { styles: { type: 'choropleth', fill: { selectedAttribute: 'pop', color: 0x00ff00 } } };
  const plan = layerPlan(layer);
  assert.equal(plan.classed, false);
  const { specs } = layerSpecs(layer, plan, { id: 'x', image });
  assert.equal(specs[0].paint['fill-color'], '#00ff00');
  assert.equal(specs[0].paint['fill-opacity'], 0.75);
});

test('a GRADUATED layer sizes and colours its symbols by class, its polygons faint', () => {
  const layer = { styles: { type: 'GRADUATED', icon: { symbol: 'square', size: 4, selectedAttribute: 'pop', classification: popClasses }, fill: { color: 0x123456 } } };
  const plan = layerPlan(layer);
  const { specs } = layerSpecs(layer, plan, { id: 'g', pointsId: 'g-pt', image });
  assert.deepEqual(specs.map((s) => s.id), ['g-fill', 'g-line', 'g-point', 'g-centroid']);
  assert.equal(specs[0].paint['fill-color'], '#123456');
  assert.equal(specs[0].paint['fill-opacity'], 0.75 * 0.3);
  const size = specs[2].layout['icon-size'];
  // scale √4 = 2; classes from 0.6 to 1.5 times it; no class 0.4 times.
  assert.equal(ev(size, { pop: 10 }), 2 * 0.6);
  assert.equal(ev(size, { pop: 20000 }), 2 * 1.5);
  assert.equal(ev(size, { pop: 1 }), 2 * 0.4);
  assert.equal(ev(specs[2].layout['icon-image'], { pop: 20000 }), 'mc-square-225ea8');
  const centroids = specs[3];
  assert.equal(centroids.source, 'g-pt');
  assert.equal(centroids.filter, undefined);
  assert.equal(centroids.layout, specs[2].layout);
});

test('a PROPORTIONAL layer sizes its symbols by the square root of the value over the largest', () => {
  const layer = { styles: { type: 'PROPORTIONAL', icon: { selectedAttribute: 'pop', color: 0xff0000, opacity: 0.5 } } };
  const plan = layerPlan(layer);
  assert.equal(plan.sizeAttr, 'pop');
  const { specs } = layerSpecs(layer, plan, { id: 'p', maxValue: 400, image });
  const pt = specs.find((s) => s.id === 'p-point');
  assert.equal(pt.layout['icon-image'], 'mc-propCircle-ff0000');
  assert.equal(pt.paint['icon-opacity'], 0.5);
  const size = pt.layout['icon-size'];
  assert.deepEqual(size, ['*', 1.6, ['sqrt', ['/', ['max', ['abs', ['to-number', ['get', 'pop'], 0]], 0], 400]]]);
  assert.equal(ev(size, { pop: 400 }), 1.6);
  assert.equal(ev(size, { pop: 100 }), 0.8);
  assert.equal(ev(size, { pop: -100 }), 0.8);
  assert.equal(ev(size, {}), 0);
});

test('line styles: cased draws a white casing under, dashed and thick change the line', () => {
  const mk = (lineStyle) => layerSpecs({ styles: { icon: { lineStyle }, stroke: { weight: 2, alpha: 1 } } },
    layerPlan({ styles: {} }), { id: 'l', image }).specs;
  const cased = mk('cased');
  assert.deepEqual(cased.map((s) => s.id), ['l-fill', 'l-case', 'l-line', 'l-point']);
  assert.deepEqual(cased[1].paint, { 'line-color': '#ffffff', 'line-width': 5, 'line-opacity': 1 });
  const dt = mk('dashedThick').find((s) => s.id === 'l-line');
  assert.equal(dt.paint['line-width'], 6);
  assert.deepEqual(dt.paint['line-dasharray'], [3, 2]);
  assert.equal(mk('regular').find((s) => s.id === 'l-line').paint['line-dasharray'], undefined);
});

test('an icon outside the palette is drawn as a circle, with a note', () => {
  const layer = { styles: { type: 'POINT', icon: { symbol: 'http://example.com/pin.png', dropshadow: 1 } } };
  const { specs, note } = layerSpecs(layer, layerPlan(layer), { id: 'i', image });
  assert.match(note, /pin\.png.*circle/);
  assert.equal(specs.at(-1).layout['icon-image'], 'mc-circle-e6550d-s');
});

test('layerPlan: the type defaults to PRIMITIVE, GRADUATED and CHOROPLETH are classed, others not', () => {
  assert.equal(layerPlan({}).type, 'PRIMITIVE');
  assert.equal(layerPlan({ type: 'point' }).type, 'POINT');
  const withClasses = (type) => ({ styles: { type, fill: { classification: popClasses } } });
  assert.equal(layerPlan(withClasses('GRADUATED')).classed, true);
  assert.equal(layerPlan(withClasses('PROPORTIONAL')).classed, false);
  assert.equal(layerPlan(withClasses('PRIMITIVE')).classed, false);
  assert.equal(layerPlan({ styles: { type: 'CHOROPLETH', fill: { classification: { ...popClasses, counts: [] } } } }).classed, false);
  assert.equal(classOf({ styles: { icon: { classification: popClasses } } }), popClasses);
  assert.equal(layerPlan({ styles: { type: 'POINT', icon: { selectedAttribute: 'pop' } } }).sizeAttr, null);
  assert.equal(layerPlan({ styles: { temporal: { attributes: ['when', 'other'] } } }).temporal, 'when');
});

test('template writes feature values as text, blanks for nulls and unknown names', () => {
  assert.equal(template('$[name] has $[pop] people$[none]', { name: 'Ghent', pop: 263000, none: null }), 'Ghent has 263000 people');
  assert.equal(template('<b>$[x]</b>', { x: '<script>' }), '<b><script></b>'); // text, the DOM escapes
  assert.equal(template('$[missing]!', {}), '!');
});

test('timeOf reads numbers, ISO 8601, the compact form and now', () => {
  assert.equal(timeOf(1700000000000), 1700000000000);
  assert.equal(timeOf('1700000000000'), 1700000000000);
  assert.equal(timeOf('2024-03-01T12:00:00Z'), Date.UTC(2024, 2, 1, 12));
  assert.equal(timeOf('20240301T12:30:15Z'), Date.UTC(2024, 2, 1, 12, 30, 15));
  assert.equal(timeOf('20240301T123015'), Date.UTC(2024, 2, 1, 12, 30, 15));
  assert.ok(Math.abs(timeOf('now') - Date.now()) < 1000);
  assert.ok(Number.isNaN(timeOf('')));
  assert.ok(Number.isNaN(timeOf(null)));
  assert.ok(Number.isNaN(timeOf('yesterday')));
});

test('timeRange fills what a timeline leaves open from its period or the data', () => {
  const day = 86400000;
  const b = Date.UTC(2024, 0, 1);
  assert.deepEqual(timeRange({ begin: '2024-01-01T00:00:00Z', period: day }, 0, 1), [b, b + day]);
  assert.deepEqual(timeRange({ end: '2024-01-01T00:00:00Z', period: day }, 0, 1), [b - day, b]);
  assert.deepEqual(timeRange(undefined, 5, 9), [5, 9]);
  assert.deepEqual(timeRange({ begin: '2024-01-01T00:00:00Z' }, 5, 9), [b, 9]);
});

test('scanFeatures gives times, their range and the largest size value', () => {
  const fc = { type: 'FeatureCollection', features: [
    { type: 'Feature', properties: { t: '2024-01-02T00:00:00Z', v: -30 } },
    { type: 'Feature', properties: { t: 'garbage', v: '99' } },
    { type: 'Feature', properties: null },
    { type: 'Feature', properties: { t: 1000, v: 12 } },
  ] };
  const got = scanFeatures(fc, 't', 'v');
  assert.deepEqual(got, { tmin: 1000, tmax: Date.UTC(2024, 0, 2), maxValue: 30 });
  assert.deepEqual(fc.features.map((f) => f.properties.__mc_t), [Date.UTC(2024, 0, 2), null, null, 1000]);
  assert.deepEqual(fc.features[2].properties, { __mc_t: null }); // null properties become an object
  // Values under 1 still divide by 1; no temporal attribute adds no time.
  const small = { features: [{ properties: { v: 0.25 } }] };
  assert.equal(scanFeatures(small, undefined, 'v').maxValue, 1);
  assert.equal('__mc_t' in small.features[0].properties, false);
});

test('timeWindow keeps each drawn layer to its geometry and the window', () => {
  const w = timeWindow('mc0-abc-fill', '__mc_t', 10, 20);
  assert.deepEqual(w, ['all', ['in', ['geometry-type'], ['literal', ['Polygon', 'MultiPolygon']]],
    ['all', ['>=', ['to-number', ['get', '__mc_t'], NaN], 10], ['<=', ['to-number', ['get', '__mc_t'], NaN], 20]]]);
  assert.equal(timeWindow('x-case', 'a', 0, 1)[1][0], 'any');
  assert.equal(timeWindow('x-point', 'a', 0, 1)[1][2][1][0], 'Point');
  assert.equal(timeWindow('x-centroid', 'a', 0, 1)[0], 'all');
  assert.equal(timeWindow('x-centroid', 'a', 0, 1).length, 3); // the window alone
});

test('the slider: its span and where it starts', () => {
  assert.equal(sliderSpan(3600000, 0, 10), 3600000);
  assert.equal(sliderSpan(undefined, 0, 10), null);
  assert.equal(sliderSpan({ period: 500 }, 0, 10), 500);
  assert.equal(sliderSpan({ begin: 2, end: 6 }, 0, 10), 4);
  assert.equal(sliderStart({ end: 50 }, 0, 10), 10);
  assert.equal(sliderStart({ end: 5 }, 0, 10), 5);
  assert.equal(sliderStart(null, 0, 10), 10);
});

test('centroid is the area-weighted centre of the largest polygon', () => {
  const sq = (x, y, s) => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];
  assert.deepEqual(centroid({ type: 'Polygon', coordinates: sq(0, 0, 2) }), [1, 1]);
  assert.deepEqual(centroid({ type: 'MultiPolygon', coordinates: [sq(10, 10, 1), sq(0, 0, 4)] }), [2, 2]);
  // A degenerate ring: its first vertex.
  assert.deepEqual(centroid({ type: 'Polygon', coordinates: [[[3, 4], [3, 4], [3, 4]]] }), [3, 4]);
});

test('legend texts: class breaks and slider times', () => {
  assert.equal(fmtBreak(1234.5678), '1,234.57');
  assert.equal(fmtBreak(12.3456), '12.35'); // 4 significant digits
  assert.equal(fmtBreak(0.123456), '0.124'); // and at most 3 decimals (toLocaleString's default)
  assert.equal(fmtBreak(42), '42');
  assert.equal(dateText(Date.UTC(2024, 4, 6, 7, 8, 9)), '2024-05-06 07:08 UTC');
});

// The attributes of a dataset (GET /datasets/{id}.json?include_attributes=1)
// whose CSV had the columns pop and POP: POP is stored as POP_2, its
// original name kept; features carry POP_2.
const popAttrs = [
  { id: 0, name: 'name', original_name: 'name', data_type: 'string' },
  { id: 1, name: 'pop', original_name: 'pop', data_type: 'integer' },
  { id: 2, name: 'POP_2', original_name: 'POP', data_type: 'integer' },
  { id: 3, name: 'when', original_name: 'When', data_type: 'date' },
];

test('a PROPORTIONAL layer naming a column by its original name reads the feature property by the column name', () => {
  const layer = { source: 'finder:12', styles: { type: 'PROPORTIONAL', icon: { selectedAttribute: 'POP' } } };
  const plan = layerPlan(layer, popAttrs);
  assert.equal(plan.sizeAttr, 'POP_2');
  const { specs } = layerSpecs(layer, plan, { id: 'p', maxValue: 4000, image });
  const size = specs.find((s) => s.id === 'p-point').layout['icon-size'];
  // A feature as GET /datasets/12/features.json?geojson=1 gives it.
  assert.equal(ev(size, { name: 'a', pop: 40, POP_2: 4000 }), 1.6);
  assert.equal(ev(size, { name: 'b', pop: 10, POP_2: 1000 }), 0.8);
  // The largest value is read from the same property.
  const fc = { features: [{ properties: { pop: 40, POP_2: 4000 } }, { properties: { pop: 10, POP_2: 1000 } }] };
  assert.equal(scanFeatures(fc, plan.temporal, plan.sizeAttr).maxValue, 4000);
});

test('the name wins over an original name, and an unknown name or no attributes leave it as given', () => {
  const attrs = [{ name: 'POP', original_name: 'pop' }, { name: 'pop_2', original_name: 'POP' }];
  const layer = { styles: { type: 'PROPORTIONAL', fill: { selectedAttribute: 'POP' } } };
  assert.equal(layerPlan(layer, attrs).sizeAttr, 'POP');
  assert.equal(layerPlan({ styles: { type: 'PROPORTIONAL', fill: { selectedAttribute: 'pop' } } }, attrs).sizeAttr, 'POP');
  assert.equal(layerPlan({ styles: { type: 'PROPORTIONAL', fill: { selectedAttribute: 'area' } } }, attrs).sizeAttr, 'area');
  assert.equal(layerPlan(layer, null).sizeAttr, 'POP'); // a url: layer
});

test("a layer's time, classes and templates find their column as the server does", () => {
  const layer = { styles: { type: 'CHOROPLETH', temporal: { attributes: ['When'] },
    fill: { selectedAttribute: 'POP', classification: { ...popClasses, attribute: 'POP' } } } };
  const plan = layerPlan(layer, popAttrs);
  assert.equal(plan.temporal, 'when');
  assert.equal(plan.cd.attribute, 'POP_2');
  const { specs } = layerSpecs(layer, plan, { id: 'c', image });
  assert.equal(ev(specs[0].paint['fill-color'], { pop: 1, POP_2: 6000 }), '#225ea8');
  assert.equal(template('$[name]: $[POP] people', { name: 'Ghent', pop: 1, POP_2: 263000 }, popAttrs), 'Ghent: 263000 people');
});

test('statsMax: a proportional layer drawn from tiles is sized by its column\'s stats', () => {
  const ds = { stats: { POP_2: { min: -500, max: 4000 }, pop: { min: 0, max: 0 } } };
  assert.equal(statsMax(ds, 'POP_2'), 4000);
  assert.equal(statsMax({ stats: { d: { min: -9000, max: 10 } } }, 'd'), 9000);
  assert.equal(statsMax(ds, 'pop'), 1);
  assert.equal(statsMax({ stats: {} }, 'POP_2'), null); // stats hidden from who may not download
  assert.equal(statsMax(ds, null), null);
});

test('density: past densityMin tiled points of POINT and PRIMITIVE layers, not classed or small ones', () => {
  assert.equal(densityWanted('POINT', false, true, densityMin + 1), true);
  assert.equal(densityWanted('PRIMITIVE', false, true, 20000), true);
  assert.equal(densityWanted('POINT', false, true, densityMin), false);
  assert.equal(densityWanted('POINT', false, false, 20000), false);
  assert.equal(densityWanted('GRADUATED', true, true, 20000), false);
  assert.equal(densityWanted('CHOROPLETH', true, true, 20000), false);
});

test('density: thinned points are clusters sized and numbered by point_count, lone points their own symbols', () => {
  const layer = { styles: { type: 'POINT', icon: { color: 0x2b8cbe } } };
  const plan = layerPlan(layer);
  const { specs } = layerSpecs(layer, plan, { id: 'd', image, density: 'clusters' });
  assert.deepEqual(specs.map((s) => s.id), ['d-fill', 'd-line', 'd-cluster', 'd-cluster-count', 'd-point']);
  const [cluster, count, lone] = specs.slice(2);
  const pt = (n) => ({ $type: 'Point', ...(n == null ? {} : { point_count: n }) });
  assert.equal(ev(cluster.filter, pt(5)), true);
  assert.equal(ev(cluster.filter, pt(1)), false);
  assert.equal(ev(cluster.filter, pt()), false);
  assert.equal(ev(lone.filter, pt(1)), true);
  assert.equal(ev(lone.filter, pt()), true);
  assert.equal(ev(lone.filter, pt(2)), false);
  assert.equal(ev(count.filter, pt(5)), true);
  assert.equal(cluster.paint['circle-color'], '#2b8cbe');
  const r = (n) => ev(cluster.paint['circle-radius'], pt(n));
  assert.ok(r(2) < r(10) && r(10) < r(100) && r(100) < r(10000) && r(10000) <= 30, `radii ${[2, 10, 100, 10000].map(r)}`);
  assert.equal(ev(count.layout['text-field'], pt(1234)), '1234');
  assert.deepEqual(count.layout['text-font'], ['Go Bold']);
  assert.deepEqual(clustered[0], 'all');
  assert.deepEqual(single[0], 'all');
  // Without density, one point layer of every point, as before.
  const plain = layerSpecs(layer, plan, { id: 'd', image }).specs;
  assert.deepEqual(plain.map((s) => s.id), ['d-fill', 'd-line', 'd-point']);
  assert.equal(ev(plain[2].filter, pt(5)), true);
});

test('density: a layer\'s styles.density chooses clusters, a heatmap or every point; auto as before', () => {
  const plain = { styles: { type: 'POINT' } };
  const with_ = (density, type = 'POINT') => ({ styles: { type, density } });
  const plan = (l) => layerPlan(l);
  const big = { tiled: true, count: 20000 };
  const small = { tiled: false, count: 30 };
  assert.deepEqual(densityChoices.map(([v]) => v), ['auto', 'clusters', 'heatmap', 'none']);
  assert.equal(densityChoice(plain), 'auto');
  assert.equal(densityChoice(with_('Heatmap')), 'heatmap');
  assert.equal(densityChoice(with_('hexbins')), 'auto');
  // Automatic: clusters past densityMin tiled points of plain symbols only.
  assert.equal(densityOf(plain, plan(plain), big), 'clusters');
  assert.equal(densityOf(with_('auto'), plan(with_('auto')), big), 'clusters');
  assert.equal(densityOf(plain, plan(plain), small), null);
  assert.equal(densityOf(plain, plan(plain), { tiled: true, count: densityMin }), null);
  // Asked for: whatever the size, drawn from GeoJSON or of another type.
  for (const d of ['clusters', 'heatmap']) {
    assert.equal(densityOf(with_(d), plan(with_(d)), small), d);
    assert.equal(densityOf(with_(d), plan(with_(d)), big), d);
    assert.equal(densityOf(with_(d, 'PROPORTIONAL'), plan(with_(d, 'PROPORTIONAL')), small), d);
    // Never with a time slider, nor without points.
    assert.equal(densityOf(with_(d), plan(with_(d)), { ...big, timed: true }), null);
    assert.equal(densityOf(with_(d), plan(with_(d)), { ...big, points: false }), null);
  }
  // Every point: none even past densityMin.
  assert.equal(densityOf(with_('none'), plan(with_('none')), big), null);
  assert.equal(densityNotes.clusters, 'Clustered: circle size and number show how many points.');
  assert.equal(densityNotes.heatmap, 'Heatmap: colour shows where points are dense.');
});

// The style spec's properties of heatmap and symbol layers' paint, which
// createExpression types an expression by.
const heatSpec = latest.paint_heatmap;
const symSpec = latest.paint_symbol;

test('density: a heatmap weighed by point_count, coloured in the layer\'s colour, giving way to the points as the zoom grows', () => {
  const layer = { opacity: 0.8, styles: { type: 'POINT', density: 'heatmap', icon: { color: 0x2b8cbe, symbol: 'square' } } };
  const plan = layerPlan(layer);
  const { specs } = layerSpecs(layer, plan, { id: 'd', image, density: densityOf(layer, plan) });
  assert.deepEqual(specs.map((s) => [s.id, s.type]), [['d-fill', 'fill'], ['d-line', 'line'], ['d-heat', 'heatmap'], ['d-point', 'symbol']]);
  // Valid MapLibre layers, as the style spec reads them.
  const style = { version: 8, glyphs: 'http://x/{fontstack}/{range}.pbf', sources: { d: { type: 'geojson', data: { type: 'FeatureCollection', features: [] } } },
    layers: specs.map((l) => ({ ...l, source: 'd' })) };
  assert.deepEqual(validateStyleMin(style), []);
  const [heat, pt] = specs.slice(2);
  const at = (prop, zoom, props = {}, layerType = heat) => {
    const spec = (layerType === heat ? heatSpec : symSpec)[prop];
    const e = createExpression(layerType.paint[prop], `${layerType.id}.paint.${prop}`, spec);
    assert.equal(e.result, 'success', JSON.stringify(e.value));
    return e.value.evaluate({ zoom }, { type: 'Point', properties: props });
  };
  // The weight grows with the points a tile's point stands for, less than
  // in proportion: 1 for an unthinned point, far below 10,000 for 10,000.
  const w = (n) => at('heatmap-weight', 3, n == null ? {} : { point_count: n });
  assert.equal(w(), 1);
  assert.equal(w(1), 1);
  assert.ok(w(1) < w(10) && w(10) < w(100) && w(100) < w(10000) && w(10000) <= 100, `weights ${[1, 10, 100, 10000].map(w)}`);
  // The server's images weigh so too (style/heat_test.go: the same values).
  assert.deepEqual([w(10), w(55), w(10000), w(1e6)], [3, 6.5, 60, 60]);
  const r = (z) => at('heatmap-radius', z);
  assert.ok(r(0) < r(6) && r(6) < r(12), `radii ${[0, 6, 12].map(r)}`);
  // The heatmap fades out over heatFade, the points (their own symbol)
  // fade in, and are not drawn below it.
  assert.equal(at('heatmap-opacity', heatFade[0] - 2), 0.8);
  assert.equal(at('heatmap-opacity', heatFade[1]), 0);
  assert.equal(heat.maxzoom, heatFade[1]);
  assert.equal(pt.minzoom, heatFade[0]);
  assert.equal(at('icon-opacity', heatFade[0], {}, pt), 0);
  assert.equal(at('icon-opacity', heatFade[1] + 1, {}, pt), 0.8);
  assert.equal(pt.layout['icon-image'], 'mc-square-2b8cbe');
  // The colours: transparent where there are no points, the layer's
  // colour at mid density, darker at the densest.
  const ramp = heatRamp('#2b8cbe');
  assert.equal(ramp[0][1], 'rgba(0,0,0,0)');
  assert.ok(ramp.some(([, c]) => c.startsWith('rgba(43,140,190,')), JSON.stringify(ramp));
  assert.equal(mix('#2b8cbe', '#000000', 0.5, 1), 'rgba(22,70,95,1)');
  const color = createExpression(heat.paint['heatmap-color'], 'd-heat.paint.heatmap-color', heatSpec['heatmap-color']);
  assert.equal(color.result, 'success');
  assert.equal(color.value.evaluate({ zoom: 0, heatmapDensity: 0 }).a, 0);
  assert.ok(color.value.evaluate({ zoom: 0, heatmapDensity: 1 }).a > 0.9);
});

test('density: clusters of a GeoJSON layer come from its clustered source', () => {
  const layer = { styles: { type: 'POINT', density: 'clusters' } };
  const { specs } = layerSpecs(layer, layerPlan(layer), { id: 'd', image, density: 'clusters', clusterSource: 'd-cl' });
  assert.deepEqual(specs.map((s) => [s.id, s.source ?? null]), [['d-fill', null], ['d-line', null], ['d-cluster', 'd-cl'], ['d-cluster-count', 'd-cl'], ['d-point', 'd-cl']]);
});
