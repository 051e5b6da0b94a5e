// The application's operations (keys): the Config flags of the form functions, the deployed
// functions (listed by the keys-only `GET /<prefix>/functions`, called through the functions
// route with a test body), the request log with filters, and file uploads.
import { h, clear, asText } from '../dom.js';
import { call, callFunction, encode, session } from '../api.js';
import { link, go } from '../app.js';

const LOG_PAGE = 50;

export async function render(main, route) {
  document.title = 'Operations · crmd console';
  const app = encode(session.appId);
  clear(main, h('h1', {}, 'Operations'));
  const section = (id, title) => { const s = h('section', { 'aria-labelledby': id }, h('h2', { id }, title)); main.append(s); return s; };
  const fail = (into, e) => into.append(h('p', { role: 'alert' }, e.text || String(e)));

  // Config flags.
  const config = section('config-title', 'Config flags');
  try {
    const rows = (await call('GET', 'classes/Config', { query: { order: 'Name', limit: '200' } })).results;
    config.append(rows.length ? h('ul', {}, rows.map((r) => h('li', {}, link(`${app}/classes/Config/${encode(r.objectId)}`, asText(r.Name)), ': ', h('code', {}, asText(r.Value)))))
      : h('p', { class: 'muted' }, 'No flags.'));
  } catch (e) { fail(config, e); }

  // Functions.
  const fns = section('functions-title', 'Functions');
  try {
    const list = (await call('GET', 'functions')).results;
    const name = h('select', { id: 'fn-name' }, list.map((f) => h('option', { value: f.name }, `${f.name} (${f.kind})`)));
    const body = h('textarea', { id: 'fn-body', rows: '4', class: 'wide', value: '{}' });
    const out = h('pre', { class: 'json', id: 'fn-answer', 'aria-live': 'polite' });
    const form = h('form', { 'aria-label': 'Call a function' }, h('label', { for: 'fn-name' }, 'Function'), name,
      h('label', { for: 'fn-body' }, 'Test body (JSON)'), body, h('p', {}, h('button', { type: 'submit' }, 'Call')), out);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try { out.textContent = JSON.stringify(await callFunction(name.value, JSON.parse(body.value)), null, 1); } catch (err) { out.textContent = err.text || err.message; }
    });
    fns.append(form);
  } catch (e) { fail(fns, e); }

  // Request log.
  const log = section('log-title', 'Request log');
  const q = route.query;
  const filters = { path: q.get('path') || '', method: q.get('method') || '', status: q.get('status') || '' };
  const skip = Math.max(0, Number.parseInt(q.get('skip') || '0', 10) || 0);
  const fpath = h('input', { id: 'log-path', value: filters.path, placeholder: 'regex' });
  const fmethod = h('select', { id: 'log-method' }, ['', 'POST', 'PUT', 'DELETE'].map((m) => h('option', { value: m }, m || 'any')));
  fmethod.value = filters.method;
  const fstatus = h('input', { id: 'log-status', value: filters.status, inputmode: 'numeric', size: '4' });
  const filterForm = h('form', { class: 'row', 'aria-label': 'Request log filter' },
    h('label', { for: 'log-path' }, 'Path'), fpath, h('label', { for: 'log-method' }, 'Method'), fmethod,
    h('label', { for: 'log-status' }, 'Status'), fstatus, h('button', { type: 'submit' }, 'Filter'));
  filterForm.addEventListener('submit', (e) => { e.preventDefault(); go(`${app}/operations`, { path: fpath.value, method: fmethod.value, status: fstatus.value }); });
  log.append(filterForm);
  const where = {};
  if (filters.path) where.path = { $regex: filters.path };
  if (filters.method) where.method = filters.method;
  if (filters.status && Number.isFinite(Number(filters.status))) where.statusCode = Number(filters.status);
  try {
    const page = await call('GET', 'classes/_RequestLog', { query: { where, order: '-createdAt', limit: String(LOG_PAGE), skip: String(skip) } });
    log.append(h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Request log rows' }, h('table', { class: 'grid', 'aria-label': 'Request log' },
      h('thead', {}, h('tr', {}, ['When', 'Method', 'Path', 'Status', 'ms', 'IP', 'User'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, page.results.map((r) => h('tr', {}, [r.createdAt, r.method, r.path, r.statusCode, r.duration, r.ip, r.user?.objectId ?? r.user].map((v) => h('td', {}, asText(v ?? '')))))))),
    h('div', { class: 'pager' }, skip > 0 ? link(`${app}/operations`, 'Newer', { ...filters, skip: String(Math.max(0, skip - LOG_PAGE)) }) : null,
      page.results.length === LOG_PAGE ? link(`${app}/operations`, 'Older', { ...filters, skip: String(skip + LOG_PAGE) }) : null));
  } catch (e) { fail(log, e); }

  // Files.
  const files = section('files-title', 'Files');
  const file = h('input', { id: 'upload', type: 'file' });
  const out = h('p', { 'aria-live': 'polite' });
  const upload = h('form', { class: 'row', 'aria-label': 'Upload a file' }, h('label', { for: 'upload' }, 'Upload'), file, h('button', { type: 'submit' }, 'Upload'), out);
  upload.addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = file.files[0];
    if (!f) return;
    try {
      const r = await call('POST', `files/${encode(f.name)}`, { body: f, headers: { 'Content-Type': f.type || 'application/octet-stream' } });
      clear(out, 'Uploaded: ', h('code', {}, asText(r.url)), ' (', asText(r.name), '): put it in a File field to keep it.');
    } catch (err) { clear(out, h('span', { role: 'alert' }, err.text || String(err))); }
  });
  files.append(h('p', { class: 'muted' }, 'Files are kept as values of File and PrivateFile fields; crmd files gc removes those no record holds.'), upload);
}
