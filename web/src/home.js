// The home page: a search box (a plain form, it works without this script)
// and the most recent public datasets and maps.
import './style.css';
import { api, entryItem, status } from './lib/common.js';

const list = document.getElementById('recent');
const msg = document.getElementById('recent-status');

async function recent() {
  status(msg, 'Loading…');
  try {
    const page = await api('/search.json?query=&limit=10&sort=created&order=descending');
    list.replaceChildren(...page.entries.map(entryItem));
    status(msg, page.entries.length ? '' : 'Nothing has been shared yet.');
  } catch (e) {
    status(msg, 'The recent datasets could not be loaded: ' + e.message, true);
  }
}

recent();
