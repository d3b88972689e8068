// The sharing levels and their permission flags (web/src/lib/levels.js,
// which share.js's panel reads and writes).
import test from 'node:test';
import assert from 'node:assert/strict';
import { flagsOf, hostedNotice, levelOf, levels, levelsFor, shownLevel } from '../src/lib/levels.js';

test('levelOf: the highest flag of an entry decides (edit implies download implies view)', () => {
  assert.equal(levelOf({ view: true, download: false, edit: false }), 'view');
  assert.equal(levelOf({ view: true, download: true, edit: false }), 'download');
  assert.equal(levelOf({ edit: true }), 'edit');
  assert.equal(levelOf({ view: false }), 'none');
  assert.equal(levelOf(), 'none');
});

test('flagsOf writes each level as the API takes it, and reads back as itself', () => {
  assert.deepEqual(flagsOf('none'), { view: false, download: false, edit: false });
  assert.deepEqual(flagsOf('download'), { view: true, download: true, edit: false });
  assert.deepEqual(flagsOf('edit'), { view: true, download: true, edit: true });
  assert.deepEqual(flagsOf('owner'), { view: false, download: false, edit: false });
  for (const l of levels) assert.equal(levelOf(flagsOf(l)), l);
});

test('a hosted server: the notice says anyone reads what is uploaded; a dataset offers edit or not', () => {
  assert.match(hostedNotice('hosted', 'dataset'), /viewed and downloaded by anyone/);
  assert.match(hostedNotice('hosted', 'map'), /viewed and downloaded by anyone/);
  assert.equal(hostedNotice('appliance', 'dataset'), '');
  assert.equal(hostedNotice(undefined, 'dataset'), '');
  assert.deepEqual(levelsFor('hosted', 'dataset'), ['download', 'edit']);
  assert.deepEqual(levelsFor('hosted', 'map'), levels);
  assert.deepEqual(levelsFor('appliance', 'dataset'), levels);
  const hosted = levelsFor('hosted', 'dataset');
  assert.equal(shownLevel({}, hosted), 'download');
  assert.equal(shownLevel({ view: true }, hosted), 'download');
  assert.equal(shownLevel({ edit: true }, hosted), 'edit');
  assert.equal(shownLevel({ view: true }, levels), 'view');
});
