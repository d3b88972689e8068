// The search page: the API's search (GET /search.json) with the query,
// type and page of the address, so that every result page has a link.
import './style.css';
import { api, entryItem, el, status } from './lib/common.js';

const perPage = 10;
const params = new URLSearchParams(location.search);
const q = params.get('q') || '';
const type = params.get('type') || '';
const page = Math.max(1, Number(params.get('page')) || 1);

document.getElementById('q').value = q;
document.getElementById('type').value = type;

const list = document.getElementById('results');
const msg = document.getElementById('results-status');
const pager = document.getElementById('pager');

/** pageHref is the address of another page of these results. */
function pageHref(n) {
  const p = new URLSearchParams();
  if (q) p.set('q', q);
  if (type) p.set('type', type);
  if (n > 1) p.set('page', String(n));
  const s = p.toString();
  return '/app/search' + (s ? '?' + s : '');
}

async function run() {
  status(msg, 'Searching…');
  const p = new URLSearchParams({ query: q, limit: String(perPage), page: String(page) });
  if (type) p.set('model', type);
  try {
    const res = await api('/search.json?' + p);
    list.replaceChildren(...res.entries.map(entryItem));
    const total = res.totalResults || 0;
    const first = (page - 1) * perPage + 1;
    status(msg, total === 0 ? 'No results.' : `Results ${first}–${first + res.entries.length - 1} of ${total}`);
    const last = Math.max(1, Math.ceil(total / perPage));
    pager.replaceChildren(
      page > 1 ? el('a', { href: pageHref(page - 1), rel: 'prev' }, '← Previous') : '',
      el('span', {}, ` Page ${page} of ${last} `),
      page < last ? el('a', { href: pageHref(page + 1), rel: 'next' }, 'Next →') : '');
  } catch (e) {
    status(msg, 'The search failed: ' + e.message, true);
  }
}

run();
