// The names of groups as the sharing panel shows and reads them. The
// caller sees a group's name when it is one of hers (every group for an
// administrator): GET /groups.json lists them, and a sharing list read by
// who may change it carries them as group_name (docs/api.md "Groups").
// Other groups are named by their number. Pure: share.js builds the panel,
// the tests read this.

/** groupNames maps group ids to names, from GET /groups.json's groups and
 * the group_name of a sharing list's entries. */
export function groupNames(groups = [], perms = []) {
  const names = new Map();
  for (const g of groups) {
    if (Number.isSafeInteger(g?.id) && typeof g.name === 'string' && g.name) names.set(g.id, g.name);
  }
  for (const p of perms) {
    if (Number.isSafeInteger(p?.group_id) && typeof p.group_name === 'string' && p.group_name) names.set(p.group_id, p.group_name);
  }
  return names;
}

/** groupLabel is how the panel names a group: its name, else its number. */
export function groupLabel(id, names) {
  return names.get(id) ?? `Group ${id}`;
}

/** groupOf reads the panel's group field: one of the names (ignoring case
 * and the spaces around it; names are unique ignoring case), else a
 * group's number. It gives {id} or {error}, a sentence to show. */
export function groupOf(text, names) {
  const typed = String(text ?? '').trim();
  if (!typed) {
    return { error: names.size > 0 ? 'Pick a group by its name, or type the number of a group you are not in.' : 'Type the number of the group.' };
  }
  const want = typed.toLowerCase();
  for (const [id, name] of names) if (name.trim().toLowerCase() === want) return { id };
  if (/^[0-9]+$/.test(typed)) {
    const id = Number(typed);
    if (Number.isSafeInteger(id) && id >= 1) return { id };
  }
  return { error: `None of your groups is named “${typed}”. A group you are not in is added by its number.` };
}
