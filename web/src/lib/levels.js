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

/** flagsOf are the permission flags of a level. */
export function flagsOf(level) {
  const i = levels.indexOf(level);
  return { view: i >= 1, download: i >= 2, edit: i >= 3 };
}
