// The groups page. Administrators list the groups (GET /groups.json),
// create one, add and remove members and delete a group, through the
// /groups routes of the API. Anyone else is told that only administrators
// manage groups, and sees the groups they belong to. A visitor is sent to
// sign in.
import './style.css';
import { api, el, status } from './lib/common.js';
import { requireSession } from './lib/header.js';

const msg = document.getElementById('groups-status');
const list = document.getElementById('group-list');

/** groupPath is the API path of a group, or of something under it. */
function groupPath(id, rest = '') {
  return '/groups/' + encodeURIComponent(id) + rest + '.json';
}

/** say shows the outcome of an action in the page's live region. */
function say(text, isError = false) {
  status(msg, text, isError);
}

/** memberItem is one member, with the button that removes them. */
function memberItem(group, user) {
  const remove = el('button', { type: 'button', 'aria-label': 'Remove ' + user.login + ' from ' + group.name }, 'Remove');
  remove.addEventListener('click', async () => {
    remove.disabled = true;
    try {
      await api(groupPath(group.id, '/users/' + encodeURIComponent(user.login)), { method: 'DELETE' });
      await render();
      say(user.login + ' is no longer a member of ' + group.name + '.');
    } catch (e) {
      remove.disabled = false;
      say('Not removed: ' + e.message, true);
    }
  });
  return el('li', {}, el('span', { class: 'login' }, user.login), user.fullname ? ' (' + user.fullname + ')' : '', remove);
}

/** groupItem shows a group: its members, a form adding one, and its
 * deletion (a second press confirms). */
function groupItem(group) {
  const hid = 'group-' + group.id + '-h';
  const inputID = 'group-' + group.id + '-login';
  const members = group.users.map((u) => u.User);
  const add = el('form', { class: 'inline', 'data-group': group.id },
    el('label', { for: inputID }, 'Add a member (login)',
      el('input', { id: inputID, name: 'login', required: true, autocomplete: 'off', autocapitalize: 'none', spellcheck: 'false' })),
    el('button', { type: 'submit' }, 'Add'));
  add.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const login = add.elements.login.value.trim();
    try {
      await api(groupPath(group.id, '/users'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ login }),
      });
      await render();
      say(login + ' is now a member of ' + group.name + '.');
      document.getElementById(inputID)?.focus();
    } catch (e) {
      say('Not added: ' + e.message, true);
      add.elements.login.focus();
    }
  });
  const del = el('button', { type: 'button', class: 'danger' }, 'Delete the group');
  del.addEventListener('click', async () => {
    if (!del.dataset.armed) {
      // A first press asks again: the group leaves every sharing list.
      del.dataset.armed = '1';
      del.textContent = 'Press again to delete ' + group.name;
      say('Deleting ' + group.name + ' removes it from every sharing list. Press the button again to delete it.');
      return;
    }
    del.disabled = true;
    try {
      await api(groupPath(group.id), { method: 'DELETE' });
      await render();
      say('The group ' + group.name + ' is deleted.');
    } catch (e) {
      del.disabled = false;
      say('Not deleted: ' + e.message, true);
    }
  });
  return el('li', { 'aria-labelledby': hid, 'data-group': group.id },
    el('h3', { id: hid }, group.name),
    el('p', { class: 'meta' }, members.length === 1 ? '1 member' : members.length + ' members'),
    members.length > 0 && el('ul', { class: 'members', 'aria-label': 'Members of ' + group.name }, members.map((u) => memberItem(group, u))),
    add,
    el('p', { class: 'group-actions' }, del));
}

/** render lists the groups with their members. */
async function render() {
  const groups = await api('/groups.json');
  const docs = await Promise.all(groups.map((g) => api(groupPath(g.id))));
  list.replaceChildren(...docs.map(groupItem));
  if (!docs.length) list.replaceChildren(el('li', {}, 'No group yet.'));
}

/** main shows the administrators' page, or tells anyone else why not. */
async function main() {
  const s = await requireSession();
  if (!s) return;
  if (!s.admin) {
    say('Only administrators manage groups. Ask one to add you to a group or to make one.', true);
    try {
      const mine = await api('/groups.json');
      document.getElementById('my-groups').replaceChildren(
        ...(mine.length ? mine.map((g) => el('li', {}, g.name)) : [el('li', {}, 'You belong to no group.')]));
      document.getElementById('groups-mine').hidden = false;
    } catch { /* the message above is enough */ }
    return;
  }
  try {
    await render();
    say('');
  } catch (e) {
    say('The groups could not be loaded: ' + e.message, true);
    return;
  }
  document.getElementById('groups-admin').hidden = false;
  const create = document.getElementById('group-create');
  create.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const name = create.elements.name.value.trim();
    try {
      await api('/groups.json', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name }) });
      create.reset();
      await render();
      say('The group ' + name + ' is created.');
    } catch (e) {
      say('Not created: ' + e.message, true);
      create.elements.name.focus();
    }
  });
}

main();
