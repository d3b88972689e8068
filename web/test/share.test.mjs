// The sharing levels and their permission flags (web/src/lib/levels.js,
// which share.js's panel reads and writes), and the groups' names the
// panel shows and reads (web/src/lib/groupnames.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import { flagsOf, hostedNotice, levelOf, levels, levelsFor, shownLevel } from '../src/lib/levels.js';
import { groupLabel, groupNames, groupOf } from '../src/lib/groupnames.js';

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

test('groupNames: the groups listed and the names of a sharing list, by id', () => {
  const names = groupNames([{ id: 3, name: 'Field team' }, { id: 'x', name: 'bad' }],
    [{ group_id: 'everyone', permissions: {} }, { group_id: 7, group_name: 'Auditors', permissions: {} }, { group_id: 9, permissions: {} }]);
  assert.deepEqual([...names], [[3, 'Field team'], [7, 'Auditors']]);
  assert.equal(groupLabel(7, names), 'Auditors');
  assert.equal(groupLabel(9, names), 'Group 9');
});

test('groupOf: a name (any case), else a number; an unknown name is no group', () => {
  const names = groupNames([{ id: 3, name: 'Field team' }, { id: 4, name: '2024' }]);
  assert.deepEqual(groupOf('  field TEAM ', names), { id: 3 });
  assert.deepEqual(groupOf('2024', names), { id: 4 }); // a name before a number
  assert.deepEqual(groupOf('12', names), { id: 12 });
  assert.match(groupOf('Auditors', names).error, /named “Auditors”.*number/);
  assert.match(groupOf('', names).error, /name/);
  assert.match(groupOf('', new Map()).error, /number/);
  for (const bad of ['0', '-3', '1.5', '99999999999999999999']) assert.ok(groupOf(bad, names).error, bad);
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
