// The map helpers' geometry (web/src/lib/geo.js): boxes and circles as
// GeoJSON polygons.
import test from 'node:test';
import assert from 'node:assert/strict';
import { boxPolygon, circlePolygon } from '../src/lib/geo.js';

/** km is the great-circle distance in kilometres (haversine). */
function km([lon1, lat1], [lon2, lat2]) {
  const r = Math.PI / 180;
  const a = Math.sin((lat2 - lat1) * r / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin((lon2 - lon1) * r / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.sqrt(a));
}

test('boxPolygon is the closed ring of [w, s, e, n], counter-clockwise', () => {
  assert.deepEqual(boxPolygon([3, 50, 6, 52]), { type: 'Polygon', coordinates: [[[3, 50], [6, 50], [6, 52], [3, 52], [3, 50]]] });
});

test('circlePolygon: 64 vertices, closed, each at the radius in its units', () => {
  const cases = [[10, 'km', 10], [5000, 'm', 5], [1, 'miles', 1.609344], [10000, 'ft', 3.048], [1, 'degrees', 6371.0088 * Math.PI / 180]];
  for (const [radius, units, want] of cases) {
    const p = circlePolygon(4.35, 50.85, radius, units);
    const ring = p.coordinates[0];
    assert.equal(p.type, 'Polygon');
    assert.equal(ring.length, 65);
    assert.deepEqual(ring[0], ring[64]);
    for (const v of ring) {
      // Coordinates are rounded to 5 decimals: about a metre.
      assert.ok(Math.abs(km([4.35, 50.85], v) - want) < 0.002, `${radius} ${units}: ${v} is ${km([4.35, 50.85], v)} km away`);
      assert.equal(v[0], Math.round(v[0] * 1e5) / 1e5);
    }
  }
  // The first vertex is due north; an unknown unit is kilometres.
  const ring = circlePolygon(0, 0, 111.195, 'furlongs').coordinates[0];
  assert.deepEqual(ring[0], [0, 1]);
});
