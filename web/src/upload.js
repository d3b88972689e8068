// The upload page. Files dropped on the zone or chosen with the picker are
// sent as the API takes them: one multipart part dataset[EXT] a file, EXT
// its extension (a shapefile's .shp, .shx, .dbf and .prj together), with
// the title, description, tags and a GeoPackage's table. XMLHttpRequest
// (fetch cannot report an upload's progress) drives the transfer bar; once
// the last byte is sent the server reads and stores the features before it
// answers, shown as an indeterminate bar. The API's error is shown as it
// states it; a new dataset opens on its page. A second form registers a URL.
import './style.css';
import { api, el, requestHeaders, status } from './lib/common.js';
import { requireSession } from './lib/header.js';
import { busy } from './lib/forms.js';
import { hostedNotice } from './lib/levels.js';
import { counted, size } from './lib/format.js';

const form = document.getElementById('upload-form');
const msg = document.getElementById('upload-status');
const input = document.getElementById('files');
const zone = document.getElementById('dropzone');
const fileList = document.getElementById('file-list');
const progress = document.getElementById('progress');
const transfer = document.getElementById('transfer');
const transferText = document.getElementById('transfer-text');
const processing = document.getElementById('processing');
const cancel = document.getElementById('upload-cancel');

let files = [];
let xhr = null;
let ticking = null; // the timer counting the seconds of processing

/** extension is a file name's extension, lower case ("" for none). */
function extension(name) {
  const i = name.lastIndexOf('.');
  return i > 0 ? name.slice(i + 1).toLowerCase() : '';
}

/** showFiles lists the chosen files, each with a button removing it. */
function showFiles() {
  fileList.replaceChildren(...files.map((f, i) => {
    const remove = el('button', { type: 'button', 'aria-label': 'Remove ' + f.name }, 'Remove');
    remove.addEventListener('click', () => {
      files.splice(i, 1);
      showFiles();
      input.focus();
    });
    return el('li', {}, el('span', {}, f.name + ' (' + size(f.size) + ')'), remove);
  }));
}

/** addFiles adds files to the upload; one of the same name replaces it. */
function addFiles(list) {
  for (const f of list) {
    files = files.filter((g) => g.name !== f.name);
    files.push(f);
  }
  showFiles();
  status(msg, files.length ? files.length + (files.length === 1 ? ' file chosen.' : ' files chosen.') : '');
}

input.addEventListener('change', () => {
  addFiles(input.files);
  input.value = ''; // the same file may be chosen again after its removal
});
zone.addEventListener('dragover', (ev) => {
  ev.preventDefault();
  ev.dataTransfer.dropEffect = 'copy';
  zone.classList.add('over');
});
zone.addEventListener('dragleave', () => zone.classList.remove('over'));
zone.addEventListener('drop', (ev) => {
  ev.preventDefault();
  zone.classList.remove('over');
  addFiles(ev.dataTransfer.files);
});

/** answerError is the API's message in a failed answer, else its status. */
function answerError(x) {
  try {
    const body = JSON.parse(x.responseText);
    if (body.error) return body.error;
  } catch { /* not JSON */ }
  return x.status ? x.status + ' ' + x.statusText : 'the connection to the server failed';
}

/** done ends an upload that did not make a dataset: the form usable again. */
function done(text, isError) {
  xhr = null;
  clearInterval(ticking);
  busy(form, false);
  progress.hidden = true;
  processing.hidden = true;
  status(msg, text, isError);
}

/** onProgress moves the transfer bar. */
function onProgress(ev) {
  if (!ev.lengthComputable) return;
  transfer.max = ev.total;
  transfer.value = ev.loaded;
  transferText.textContent = 'Sent ' + size(ev.loaded) + ' of ' + size(ev.total) + ' (' + Math.floor((100 * ev.loaded) / ev.total) + '%)';
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  if (!files.length) {
    status(msg, 'Choose the files to upload first.', true);
    input.focus();
    return;
  }
  const data = new FormData();
  for (const f of files) data.append('dataset[' + (extension(f.name) || 'unknown') + ']', f, f.name);
  for (const [name, id] of [['title', 'title-field'], ['description', 'description'], ['tags', 'tags'], ['layer', 'layer']]) {
    const v = document.getElementById(id).value.trim();
    if (v) data.append(name, v);
  }
  const headers = await requestHeaders('POST');
  xhr = new XMLHttpRequest();
  xhr.open('POST', '/datasets.json');
  for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
  xhr.upload.addEventListener('progress', onProgress);
  xhr.upload.addEventListener('load', () => {
    // Every byte is sent: now the server reads the data.
    transfer.value = transfer.max;
    transferText.textContent = 'Sent all ' + size(transfer.max) + '.';
    processing.hidden = false;
    status(msg, 'Sent. The server is reading and storing the features…');
    // A big file takes a while: the seconds show that it goes on.
    const start = Date.now();
    ticking = setInterval(() => {
      transferText.textContent = 'Sent all ' + size(transfer.max) + '. Processing for ' + Math.round((Date.now() - start) / 1000) + ' s…';
    }, 1000);
  });
  xhr.addEventListener('load', () => {
    const x = xhr;
    clearInterval(ticking);
    if (x.status !== 200 && x.status !== 201) {
      done('The upload was refused: ' + answerError(x), true);
      return;
    }
    let doc;
    try {
      doc = JSON.parse(x.responseText);
    } catch {
      done('The server answered something that is not a dataset.', true);
      return;
    }
    status(msg, 'Stored ' + counted(doc.feature_count, 'feature') + '. Opening the dataset…');
    location.assign('/app/datasets/' + encodeURIComponent(doc.id));
  });
  xhr.addEventListener('error', () => done('The upload failed: ' + answerError(xhr), true));
  xhr.addEventListener('abort', () => done('The upload was cancelled.'));
  busy(form, true);
  cancel.disabled = false;
  transfer.max = 100;
  transfer.value = 0;
  transferText.textContent = '';
  processing.hidden = true;
  progress.hidden = false;
  status(msg, 'Sending ' + files.length + (files.length === 1 ? ' file…' : ' files…'));
  xhr.send(data);
});

cancel.addEventListener('click', () => xhr?.abort());

// Registering a URL: the server fetches it before it answers.
const urlForm = document.getElementById('url-form');
const urlMsg = document.getElementById('url-status');
urlForm.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const body = new URLSearchParams();
  for (const name of ['url', 'type', 'title']) {
    const v = urlForm.elements[name].value.trim();
    if (v) body.set(name, v);
  }
  busy(urlForm, true);
  const bar = document.getElementById('url-progress');
  bar.hidden = false;
  status(urlMsg, 'The server is fetching the URL…');
  try {
    const doc = await api('/datasets.json', { method: 'POST', body });
    status(urlMsg, 'Registered. Opening the dataset…');
    location.assign('/app/datasets/' + encodeURIComponent(doc.id));
  } catch (e) {
    status(urlMsg, 'The URL was not registered: ' + e.message, true);
    busy(urlForm, false);
    bar.hidden = true;
    urlForm.elements.url.focus();
  }
});

/** main shows the forms to a signed-in user (a visitor goes to sign in). */
async function main() {
  const me = await requireSession();
  if (!me) return;
  // On a hosted server what is uploaded is anyone's to read: said first.
  const notice = document.getElementById('hosted-notice');
  notice.textContent = hostedNotice(me.mode, 'dataset');
  notice.hidden = !notice.textContent;
  status(msg, '');
  form.hidden = false;
  document.getElementById('url-section').hidden = false;
}

main();
