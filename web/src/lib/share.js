// The sharing panel of a dataset or a map: everyone and each group at a
// level (none, view, download, edit), saved as the object's whole sharing
// list through PUT /datasets/{id}.json or PUT /maps/{id}.json with a JSON
// body {"permissions": [...]} (spec "Permissions"). Groups are named by
// their id (their names are shown to administrators, who may read groups).

import { api, el, session, status } from './common.js';
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

/** sharePanel builds the panel of the dataset or map (kind 'dataset' or
 * 'map') with that id into container, from the object's current sharing
 * list (read from the API). onSaved, if given, receives the saved list. */
export async function sharePanel(container, kind, id, onSaved) {
  const obj = await api(objectPath(kind, id));
  const me = await session();
  const perms = obj.permissions || [];
  // On a hosted server a dataset is anyone's to read: the panel says so,
  // and offers edit or not (levelsFor).
  const offered = levelsFor(me?.mode, kind);
  const notice = hostedNotice(me?.mode, kind);
  const everyone = perms.find((p) => p.group_id === 'everyone');
  const everyoneSel = levelSelect('Everyone', shownLevel(everyone?.permissions, offered), offered);
  everyoneSel.id = `share-everyone-${kind}`;
  const rows = el('tbody', {});
  const msg = el('p', { role: 'status', 'aria-live': 'polite', class: 'share-status' });

  /** addRow adds a group's row, its name asked for when the caller may read groups. */
  function addRow(groupID, level) {
    const name = el('span', { class: 'group-name' });
    const tr = el('tr', { 'data-group': groupID },
      el('th', { scope: 'row' }, `Group ${groupID} `, name),
      el('td', {}, levelSelect(`Level for group ${groupID}`, shownLevel(flagsOf(level), offered), offered)),
      el('td', {}, el('button', { type: 'button', class: 'secondary', onclick: () => tr.remove() }, 'Remove', el('span', { class: 'visually-hidden' }, ` group ${groupID}`))));
    rows.append(tr);
    if (me?.admin) api(`/groups/${groupID}.json`).then((g) => { name.textContent = `(${g.name})`; }, () => {});
  }
  for (const p of perms) if (p.group_id !== 'everyone') addRow(p.group_id, levelOf(p.permissions));

  const groupInput = el('input', { type: 'number', min: '1', step: '1', id: `share-group-${kind}`, inputmode: 'numeric' });
  const add = el('button', {
    type: 'button', class: 'secondary', onclick: () => {
      const g = Number(groupInput.value);
      if (!Number.isInteger(g) || g < 1) return status(msg, 'A group is named by its number (its id).', true);
      if (rows.querySelector(`tr[data-group="${g}"]`)) return status(msg, `Group ${g} is already in the list.`, true);
      addRow(g, offered.includes('view') ? 'view' : 'edit');
      groupInput.value = '';
      status(msg, '');
    },
  }, 'Add group');
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
    el('p', {}, el('label', { for: groupInput.id }, 'Group number '), groupInput, ' ', add),
    el('p', {}, save), msg));
}
