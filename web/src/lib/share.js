// The sharing panel of a dataset or a map: everyone and each group at a
// level (none, view, download, edit), saved as the object's whole sharing
// list through PUT /datasets/{id}.json or PUT /maps/{id}.json with a JSON
// body {"permissions": [...]} (spec "Permissions"). Groups are picked and
// listed by name: the names the owner may see, her own groups (every group
// for an administrator) from GET /groups.json and the list's group_name
// (docs/api.md "Groups"). A group she is not in is added by its number,
// and listed so.

import { api, el, session, status } from './common.js';
import { groupLabel, groupNames, groupOf } from './groupnames.js';
import { flagsOf, hostedNotice, levelOf, levels, levelsFor, shownLevel } from './levels.js';

export { flagsOf, levelOf };

/** levelName is how a select names a level: on a hosted server's dataset,
 * download is what anyone has ("view and download"). */
const levelName = (l, hosted) => (l === 'none' ? 'not shared' : hosted && l === 'download' ? 'view and download (as anyone)' : l);

/** objectPath is the API path of a dataset or a map. */
const objectPath = (kind, id) => `/${kind === 'map' ? 'maps' : 'datasets'}/${id}.json`;

/** levelSelect is a labelled select of the levels offered. */
function levelSelect(label, value, offered = levels) {
  const hosted = offered !== levels;
  return el('select', { 'aria-label': label, class: 'share-level' },
    offered.map((l) => el('option', { value: l, selected: l === value }, levelName(l, hosted))));
}

/** myGroups are the groups the caller may see by name (none for a
 * visitor, or where the store has no groups). */
async function myGroups() {
  if (!(await session())) return [];
  try {
    return (await api('/groups.json')) || [];
  } catch {
    return [];
  }
}

/** sharePanel builds the panel of the dataset or map (kind 'dataset' or
 * 'map') with that id into container, from the object's current sharing
 * list (read from the API). onSaved, if given, receives the saved list. */
export async function sharePanel(container, kind, id, onSaved) {
  const [obj, groups, me] = await Promise.all([api(objectPath(kind, id)), myGroups(), session()]);
  const perms = obj.permissions || [];
  const names = groupNames(groups, perms);
  // On a hosted server a dataset is anyone's to read: the panel says so,
  // and offers edit or not (levelsFor).
  const offered = levelsFor(me?.mode, kind);
  const notice = hostedNotice(me?.mode, kind);
  const everyone = perms.find((p) => p.group_id === 'everyone');
  const everyoneSel = levelSelect('Everyone', shownLevel(everyone?.permissions, offered), offered);
  everyoneSel.id = `share-everyone-${kind}`;
  const rows = el('tbody', {});
  const msg = el('p', { role: 'status', 'aria-live': 'polite', class: 'share-status' });
  const listed = (g) => rows.querySelector(`tr[data-group="${g}"]`) !== null;

  // The names to pick from: the groups she sees, less those listed.
  const choices = el('datalist', { id: `share-groups-${kind}` });
  function fillChoices() {
    choices.replaceChildren(...[...names].filter(([g]) => !listed(g))
      .sort((a, b) => a[1].localeCompare(b[1], undefined, { sensitivity: 'base' }))
      .map(([, name]) => el('option', { value: name })));
  }

  /** addRow adds a group's row: its name when she may see it, else its number. */
  function addRow(groupID, level) {
    const label = groupLabel(groupID, names);
    const tr = el('tr', { 'data-group': groupID },
      el('th', { scope: 'row', class: 'group-name' }, label,
        names.has(groupID) ? null : el('span', { class: 'hint' }, ' (not one of your groups)')),
      el('td', {}, levelSelect(`Level for ${label}`, shownLevel(flagsOf(level), offered), offered)),
      el('td', {}, el('button', {
        type: 'button', class: 'secondary', onclick: () => {
          tr.remove();
          fillChoices();
          status(msg, `${label} removed: save to apply.`);
        },
      }, 'Remove', el('span', { class: 'visually-hidden' }, ` ${label}`))));
    rows.append(tr);
  }
  for (const p of perms) if (p.group_id !== 'everyone') addRow(p.group_id, levelOf(p.permissions));
  fillChoices();

  const hint = el('p', { class: 'hint', id: `share-group-hint-${kind}` }, names.size > 0
    ? 'Pick one of your groups by its name, or type the number of a group you are not in.'
    : 'You are in no group: type the number of the group to share with.');
  const groupInput = el('input', {
    type: 'text', id: `share-group-${kind}`, list: choices.id, autocomplete: 'off', class: 'share-group',
    'aria-describedby': hint.id, onkeydown: (e) => { if (e.key === 'Enter') { e.preventDefault(); addGroup(); } },
  });
  function addGroup() {
    const g = groupOf(groupInput.value, names);
    if (g.error) return status(msg, g.error, true);
    const label = groupLabel(g.id, names);
    if (listed(g.id)) return status(msg, `${label} is already in the list.`, true);
    const level = offered.includes('view') ? 'view' : 'edit';
    addRow(g.id, level);
    fillChoices();
    groupInput.value = '';
    status(msg, `${label} added at ${level}: choose its level, then save.`);
  }
  const add = el('button', { type: 'button', class: 'secondary share-add', onclick: addGroup }, 'Add group');
  const save = el('button', {
    type: 'button', class: 'share-save', onclick: async () => {
      const list = [];
      if (everyoneSel.value !== 'none') list.push({ group_id: 'everyone', permissions: flagsOf(everyoneSel.value) });
      for (const tr of rows.querySelectorAll('tr')) {
        const level = tr.querySelector('select').value;
        if (level !== 'none') list.push({ group_id: Number(tr.dataset.group), permissions: flagsOf(level) });
      }
      status(msg, 'Saving…');
      try {
        await api(objectPath(kind, id), { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ permissions: list }) });
        status(msg, 'Sharing saved.');
        onSaved?.(list);
      } catch (e) {
        status(msg, 'The sharing could not be saved: ' + e.message, true);
      }
    },
  }, 'Save sharing');

  container.replaceChildren(el('div', { class: 'share-panel' },
    notice && el('p', { class: 'hosted-notice', id: `hosted-notice-${kind}` }, notice),
    el('p', {}, el('label', { for: everyoneSel.id }, 'Everyone: '), everyoneSel),
    el('table', { class: 'share-groups' },
      el('caption', {}, 'Groups'),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Group'), el('th', { scope: 'col' }, 'Level'), el('th', { scope: 'col' }, el('span', { class: 'visually-hidden' }, 'Remove')))),
      rows),
    el('p', { class: 'share-add-group' }, el('label', { for: groupInput.id }, 'Group name '), groupInput, choices, ' ', add),
    hint,
    el('p', {}, save), msg));
}
