// The bar chart's numbers and geometry (web/src/lib/chart.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import { barLayout, fmt } from '../src/lib/chart.js';

test('fmt writes numbers briefly and anything else as text', () => {
  assert.equal(fmt(1234567), '1,234,567');
  assert.equal(fmt(3.14159265), '3.14159');
  assert.equal(fmt(0.000123456789), '0.000123457');
  assert.equal(fmt(null), '');
  assert.equal(fmt(undefined), '');
  assert.equal(fmt('n/a'), 'n/a');
});

test('barLayout: the largest value fills the plot, negatives are empty bars, long names are cut', () => {
  // Rows as GET /datasets/{id}/features.json?group_by= answers them.
  const rows = [
    { region: 'Flanders', count: 300 },
    { region: 'Brussels-Capital Region of Belgium', count: 150 },
    { region: 'Wallonia', count: -20 },
    { region: 'unknown', count: null },
  ];
  const { width, height, bars } = barLayout(rows, (r) => r.region, (r) => r.count);
  assert.equal(width, 640);
  assert.equal(height, 4 * 22 + 4);
  assert.deepEqual(bars.map((b) => b.y), [4, 26, 48, 70]);
  assert.deepEqual(bars.map((b) => b.w), [390, 195, 0, 0]);
  assert.deepEqual(bars.map((b) => b.text), ['300', '150', '-20', '']);
  assert.equal(bars[1].name, 'Brussels-Capital Region of Belgium');
  assert.equal(bars[1].shortName, 'Brussels-Capital Regi…');
  assert.equal(bars[1].shortName.length, 22);
  assert.equal(bars[0].shortName, 'Flanders');
});

test('barLayout: all values zero or negative draw no bar', () => {
  const { bars } = barLayout([{ v: 0 }, { v: -5 }], () => 'x', (r) => r.v);
  assert.deepEqual(bars.map((b) => b.w), [0, 0]);
});
