// What the pages share without the DOM: search entries and the search
// query (web/src/lib/entries.js), where to go after signing in
// (web/src/lib/next.js), a layer's payload for the API (lib/layerdoc.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import { entryBox, entryExtent, entryHref, entryID, entryImage, entryImageSrcset, footprints, searchQuery, tagList, thumbSize } from '../src/lib/entries.js';
import { safeNext } from '../src/lib/next.js';
import { clean, payload } from '../src/lib/layerdoc.js';

const origin = 'https://maps.example.org';

test('entryID and entryHref: datasets (Overlay:…) and maps', () => {
  assert.deepEqual(entryID({ id: 'Overlay:12' }), { kind: 'dataset', pk: 12 });
  assert.deepEqual(entryID({ id: 'Map:7' }), { kind: 'map', pk: 7 });
  assert.deepEqual(entryID({ id: 'map:7', pk: 9 }), { kind: 'map', pk: 9 });
  assert.equal(entryHref({ id: 'Overlay:12' }), '/app/datasets/12');
  assert.equal(entryHref({ id: 'Map:7' }), '/app/maps/7');
});

test("entryExtent: a dataset's s,w,n,e and a map's w,s,e,n both read as W, S, E, N", () => {
  assert.equal(entryExtent({ id: 'Overlay:1', bbox: '50.1,3.2,51.5,5.9' }), 'W 3.2, S 50.1, E 5.9, N 51.5');
  assert.equal(entryExtent({ id: 'Map:1', bbox: '3.2,50.1,5.9,51.5' }), 'W 3.2, S 50.1, E 5.9, N 51.5');
  assert.equal(entryExtent({ id: 'Overlay:1', bbox: [3.2, 50.1, 5.9, 51.5] }), 'W 3.2, S 50.1, E 5.9, N 51.5');
  assert.equal(entryExtent({ id: 'Map:1', bbox: '-180,-85.0511287798,180,85.0511287798' }), 'W -180, S -85.0511, E 180, N 85.0511');
  assert.equal(entryExtent({ id: 'Map:1', bbox: '' }), '');
  assert.equal(entryExtent({ id: 'Map:1', bbox: '1,2,x,4' }), '');
});

test("entryImage: a dataset's or a map's image, sized, at a scale; none for a dataset the viewer may not download", () => {
  assert.deepEqual(thumbSize, { width: 120, height: 90 });
  assert.equal(entryImage({ id: 'Overlay:12' }), '/datasets/12.png?width=120&height=90');
  assert.equal(entryImage({ id: 'Overlay:12', permissions: { view: true, download: true } }, 64, 48), '/datasets/12.png?width=64&height=48');
  assert.equal(entryImage({ id: 'Map:7', pk: 7 }, 120, 90, 2), '/maps/7.png?width=120&height=90&scale=2');
  assert.equal(entryImage({ id: 'Map:7', permissions: { view: true, download: false } }), '/maps/7.png?width=120&height=90');
  assert.equal(entryImage({ id: 'Overlay:12', permissions: { view: true, download: false } }), '');
  assert.equal(entryImage({ id: 'Overlay:' }), '');
  assert.equal(entryImage({ id: 'Overlay:x' }), '');
  assert.equal(entryImage({ id: 'Overlay:1.5' }), '');
  assert.equal(entryImageSrcset({ id: 'Overlay:3' }),
    '/datasets/3.png?width=120&height=90 1x, /datasets/3.png?width=120&height=90&scale=2 2x');
  assert.equal(entryImageSrcset({ id: 'Overlay:3', permissions: { download: false } }), '');
});

test('tagList reads a comma-separated string or a list', () => {
  assert.deepEqual(tagList(' rivers, Belgium ,,water '), ['rivers', 'Belgium', 'water']);
  assert.deepEqual(tagList(['a', '', null, 'b']), ['a', 'b']);
  assert.deepEqual(tagList(undefined), []);
});

test('searchQuery: the words, then tag: and user: terms, quoted when they have spaces', () => {
  assert.equal(searchQuery('  rivers ', '', ''), 'rivers');
  assert.equal(searchQuery('rivers', 'water quality', 'alice'), 'rivers tag:"water quality" user:alice');
  assert.equal(searchQuery('', 'say "hi"', ''), 'tag:"say hi"');
  assert.equal(searchQuery('', '', ''), '');
});

test('safeNext keeps paths of this site, resolved', () => {
  assert.equal(safeNext('/app/maps/3?x=1#top', origin), '/app/maps/3?x=1#top');
  assert.equal(safeNext('/app/./maps/../datasets/2', origin), '/app/datasets/2');
  assert.equal(safeNext('/a\\b', origin), '/a/b');
});

test('safeNext sends anything naming another site home', () => {
  for (const raw of ['//evil.example', '/\\evil.example', '/.//evil.example', '/a/..//evil.example', '/%2e//evil.example',
    '/\t/evil.example', 'https://evil.example/', 'javascript:alert(1)', 'app/maps', '', null, undefined, 42]) {
    assert.equal(safeNext(raw, origin), '/', String(raw));
  }
});

test('clean drops nulls, empty lists and empty objects, keeping zeros and false', () => {
  assert.deepEqual(clean({ a: null, b: [], c: {}, d: { e: undefined }, f: 0, g: false, h: '', i: [1] }), { f: 0, g: false, h: '', i: [1] });
  assert.equal(clean({ a: null }), undefined);
});

test("payload: a layer as the API answered it, without what the API computes", () => {
  const layer = {
    source: 'finder:12', title: 'Population', subtitle: null, opacity: 0.8, visible: true,
    styles: {
      type: 'CHOROPLETH',
      fill: { selectedAttribute: 'POP', classificationType: 'Quantile', categories: 5, classificationBreaks: [], ramp: 'YlGnBu',
        colors: [1, 2, 3], classification: { attribute: 'POP_2', breaks: [0, 1], counts: [1] } },
      icon: { symbol: 'circle', classification: null },
      stroke: { color: 0, weight: 1 },
    },
  };
  const p = payload(layer);
  assert.deepEqual(p, {
    source: 'finder:12', title: 'Population', opacity: 0.8, visible: true,
    styles: {
      type: 'CHOROPLETH',
      fill: { selectedAttribute: 'POP', classificationType: 'Quantile', categories: 5, colors: 'YlGnBu' },
      icon: { symbol: 'circle' },
      stroke: { color: 0, weight: 1 },
    },
  });
  // The document itself is left as it was.
  assert.equal(layer.styles.fill.classification.attribute, 'POP_2');
  // A manual classification sends its breaks, not a number of classes.
  const manual = payload({ styles: { fill: { classificationType: 'Manual', categories: 3, classificationBreaks: [0, 10, 20] } } });
  assert.deepEqual(manual.styles.fill, { classificationType: 'Manual', classificationBreaks: [0, 10, 20] });
});

test("entryBox and footprints: the entries' extents as outlines, by their place in the list", () => {
  assert.deepEqual(entryBox({ id: 'Overlay:1', bbox: '50.1,3.2,51.5,5.9' }), [3.2, 50.1, 5.9, 51.5]);
  assert.deepEqual(entryBox({ id: 'Map:1', bbox: '3.2,50.1,5.9,51.5' }), [3.2, 50.1, 5.9, 51.5]);
  assert.equal(entryBox({ id: 'Map:1', bbox: '' }), null);
  const fc = footprints([
    { id: 'Overlay:1', title: 'A', bbox: '50,3,51,5' },
    { id: 'Map:2', title: 'none', bbox: '' },
    { id: 'Overlay:3', title: 'point', bbox: '35.5,-79,35.5,-79' },
    { id: 'Map:4', title: 'world', bbox: '-180,-90,180,90' },
  ]);
  assert.deepEqual(fc.features.map((f) => f.properties.entry), [0, 2, 3]);
  assert.deepEqual(fc.features.map((f) => f.id), [0, 2, 3]);
  assert.deepEqual(fc.features[0].geometry.coordinates[0], [[3, 50], [5, 50], [5, 51], [3, 51], [3, 50]]);
  const [w, s, e, n] = [fc.features[1].geometry.coordinates[0][0][0], fc.features[1].geometry.coordinates[0][0][1],
    fc.features[1].geometry.coordinates[0][2][0], fc.features[1].geometry.coordinates[0][2][1]];
  assert.ok(w < -79 && e > -79 && s < 35.5 && n > 35.5, 'a point is widened');
  assert.deepEqual(fc.features[2].geometry.coordinates[0][0], [-180, -85]);
});
