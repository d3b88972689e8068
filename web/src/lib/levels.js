// The sharing levels of a dataset or a map (none, view, download, edit)
// and the permission flags of the API's sharing list (spec
// "Permissions"). Pure: share.js builds the panel, the tests read this.

/** levels are the sharing levels, each implying those before it. */
export const levels = ['none', 'view', 'download', 'edit'];

/** levelOf is the level a permission entry gives (edit implies download
 * implies view). */
export function levelOf(perms = {}) {
  if (perms.edit) return 'edit';
  if (perms.download) return 'download';
  if (perms.view) return 'view';
  return 'none';
}

/** hostedNotice is what a hosted server (mode 'hosted', the GeoCommons
 * service's behaviour) does with what is shared there, said where one
 * uploads and shares a dataset ('dataset') or a map ('map'); '' on an
 * appliance, where the sharing list decides every right. */
export function hostedNotice(mode, kind = 'dataset') {
  if (mode !== 'hosted') return '';
  if (kind === 'map') {
    return 'On this server every dataset, those of this map\'s layers too, can be viewed and downloaded by anyone: '
      + 'sharing sets who may see this map and who may edit it.';
  }
  return 'On this server anything you upload can be viewed and downloaded by anyone, signed in or not: '
    + 'sharing sets who may edit it.';
}

/** levelsFor are the levels a sharing panel offers for an object of kind
 * on a server of mode: on a hosted server a dataset is readable by anyone
 * whatever its list, so only edit (or not) is a choice there, and the
 * lesser levels read as 'download'. */
export function levelsFor(mode, kind) {
  return mode === 'hosted' && kind === 'dataset' ? ['download', 'edit'] : levels;
}

/** shownLevel is the level a panel of those levels shows for an entry's
 * flags: the entry's own, or the least offered that it is under. */
export function shownLevel(perms, offered) {
  const l = levelOf(perms);
  return offered.includes(l) ? l : offered.find((o) => levels.indexOf(o) >= levels.indexOf(l));
}

/** flagsOf are the permission flags of a level. */
export function flagsOf(level) {
  const i = levels.indexOf(level);
  return { view: i >= 1, download: i >= 2, edit: i >= 3 };
}
