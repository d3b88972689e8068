// The numbers a person reads (web/src/lib/format.js) and the addresses a
// GIS user pastes (web/src/lib/gisurls.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import { count, counted, size } from '../src/lib/format.js';
import { gisURLs, readableName } from '../src/lib/gisurls.js';

test('count: thousands separators, at most two decimals, anything else as it is', () => {
  assert.equal(count(0), '0');
  assert.equal(count(999), '999');
  assert.equal(count(1000), '1,000');
  assert.equal(count(1000000), '1,000,000');
  assert.equal(count(-1234567), '-1,234,567');
  assert.equal(count(1234.5), '1,234.5');
  assert.equal(count(1234.5678), '1,234.57');
  assert.equal(count('2500'), '2,500');
  assert.equal(count(null), '');
  assert.equal(count(undefined), '');
  assert.equal(count('n/a'), 'n/a');
});

test('counted: the count and its noun, singular for one', () => {
  assert.equal(counted(1000000, 'feature'), '1,000,000 features');
  assert.equal(counted(1, 'feature'), '1 feature');
  assert.equal(counted(0, 'feature'), '0 features');
  assert.equal(counted(1, 'match', 'matches'), '1 match');
  assert.equal(counted(2000, 'match', 'matches'), '2,000 matches');
});

test('size: bytes in their unit, by thousands', () => {
  assert.equal(size(0), '0 bytes');
  assert.equal(size(1), '1 byte');
  assert.equal(size(999), '999 bytes');
  assert.equal(size(1000), '1 kB');
  assert.equal(size(1536), '1.5 kB');
  assert.equal(size(123456), '123 kB');
  assert.equal(size(2500000), '2.5 MB');
  assert.equal(size(999960), '1 MB');
  assert.equal(size(5e12), '5 TB');
  assert.equal(size(-1), '');
  assert.equal(size('x'), '');
});

test("readableName: the server's collection and WMS layer name", () => {
  assert.equal(readableName('North Carolina counties', 7), 'north_carolina_counties-7');
  assert.equal(readableName('  Births (1974)!  ', 3), 'births_1974-3');
  assert.equal(readableName('***', 7), 'dataset-7');
  assert.equal(readableName('', 7), 'dataset-7');
  assert.equal(readableName('Café Zürich', 2), 'caf_z_rich-2');
  // 48 characters at most, cut at an underscore in their last third.
  const long = 'aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd eeeeeeeeee';
  assert.equal(readableName(long, 1), 'aaaaaaaaaa_bbbbbbbbbb_cccccccccc_dddddddddd-1');
  assert.equal(readableName('x'.repeat(60), 1), 'x'.repeat(48) + '-1');
});

test("gisURLs: every address absolute, of this server, with QGIS's way to open it", () => {
  const urls = gisURLs('https://maps.example.org/', { id: 7, title: 'NC counties' });
  assert.deepEqual(urls.map((u) => u.key), ['features', 'tilejson', 'wms', 'maptiles']);
  const by = Object.fromEntries(urls.map((u) => [u.key, u]));
  assert.equal(by.features.url, 'https://maps.example.org/ogc');
  assert.equal(by.features.also, 'https://maps.example.org/ogc/collections/7');
  assert.equal(by.features.layer, 'nc_counties-7');
  assert.equal(by.tilejson.url, 'https://maps.example.org/ogc/collections/7/tiles/WebMercatorQuad/tilejson.json');
  assert.equal(by.tilejson.layer, '7');
  assert.equal(by.wms.url, 'https://maps.example.org/wms?SERVICE=WMS&REQUEST=GetCapabilities');
  assert.equal(by.wms.layer, 'nc_counties-7');
  assert.equal(by.maptiles.url, 'https://maps.example.org/ogc/collections/7/map/tiles/WebMercatorQuad/{z}/{y}/{x}');
  for (const u of urls) {
    assert.match(u.qgis, /QGIS|Layer ▸|Browser ▸/);
    assert.ok(u.label);
  }
});
