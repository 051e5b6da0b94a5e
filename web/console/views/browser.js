// A class's records as a table: one page at a time (never more loaded), sorted by a column, a
// filter, chosen columns, cells shown and edited by type, keyboard navigation (arrows, Home/End,
// Enter or F2 to edit, Escape to cancel, PageDown/PageUp for pages), create and delete. The view's
// state is its URL: where, order, skip, limit, cols.
import { h, clear, asText } from '../dom.js';
import { call, getSchema, encode, session, isKey, opened } from '../api.js';
import { go, link } from '../app.js';
import { typeOf, cellContent, editorFor } from '../cells.js';
import { filterBuilder } from './filter.js';

export const PAGE_SIZES = [25, 50, 100, 200];
const DEFAULT_LIMIT = 50;
const SYSTEM_FIELDS = ['objectId', 'createdAt', 'updatedAt'];

export async function render(main, route) {
  const className = route.a;
  const app = encode(session.appId);
  const q = route.query;
  const limit = PAGE_SIZES.includes(Number(q.get('limit'))) ? Number(q.get('limit')) : DEFAULT_LIMIT;
  const skip = Math.max(0, Number.parseInt(q.get('skip') || '0', 10) || 0);
  const order = q.get('order') || '-createdAt';
  let where = null;
  const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
  try { where = q.get('where') ? JSON.parse(q.get('where')) : null; } catch { status.append(h('p', { role: 'alert' }, 'The address\'s where is not JSON; it is ignored.')); }
  document.title = `${className} · crmd console`;
  const state = { where, order, skip, limit, cols: q.get('cols') };
  const navigate = (change) => {
    const next = { ...state, ...change };
    go(`${app}/classes/${encode(className)}`, {
      where: next.where ? JSON.stringify(next.where) : '', order: next.order === '-createdAt' ? '' : next.order,
      skip: next.skip ? String(next.skip) : '', limit: next.limit === DEFAULT_LIMIT ? '' : String(next.limit), cols: next.cols || '' });
  };

  const heading = h('h1', {}, className);
  clear(main, heading, status);
  const schema = await getSchema(className);
  const query = { limit: String(limit), skip: String(skip), order, count: '1' };
  if (where) query.where = JSON.stringify(where);
  let page;
  try {
    page = await call('GET', `classes/${encode(className)}`, { query });
  } catch (e) {
    main.append(h('p', { role: 'alert' }, e.text || String(e)));
    return;
  }
  const records = page.results;
  opened.add(className);
  const allFields = schema ? [...SYSTEM_FIELDS, ...Object.keys(schema.fields).filter((f) => !SYSTEM_FIELDS.includes(f) && schema.fields[f].type !== 'ACL').sort()]
    : [...new Set([...SYSTEM_FIELDS, ...records.flatMap((r) => Object.keys(r))])].filter((f) => f !== 'ACL');
  const shown = state.cols ? state.cols.split(',').filter((c) => allFields.includes(c)) : allFields.slice(0, 12);
  if (!shown.includes('objectId')) shown.unshift('objectId');
  const typeOfField = (f) => typeOf(f, records.find((r) => r[f] !== undefined)?.[f], schema);

  // Tools: filter, columns, page size, new record, schema link.
  const chooser = h('details', {}, h('summary', {}, `Columns (${shown.length} of ${allFields.length})`),
    h('form', { class: 'row', 'aria-label': 'Columns', onchange: (e) => {
      const picked = [...e.currentTarget.querySelectorAll('input:checked')].map((i) => i.value);
      navigate({ cols: picked.join(','), skip: state.skip });
    } }, allFields.map((f) => h('label', { class: 'inline' }, h('input', { type: 'checkbox', value: f, checked: shown.includes(f), disabled: f === 'objectId' }), f))));
  const size = h('select', { id: 'page-size', onchange: (e) => navigate({ limit: Number(e.target.value), skip: 0 }) },
    PAGE_SIZES.map((n) => h('option', { value: String(n) }, String(n))));
  size.value = String(limit);
  const newRecord = newRecordForm(className, status, () => navigate({}));
  main.append(
    h('div', { class: 'row' }, isKey() ? link(`${app}/schema/${encode(className)}`, 'Schema of this class') : null),
    filterBuilder({ fields: allFields, typeOfField, where, apply: (w) => navigate({ where: w, skip: 0 }) }),
    chooser, newRecord);

  // The table.
  const headRow = h('tr', {}, shown.map((f) => {
    const sorted = order === f ? 'ascending' : order === `-${f}` ? 'descending' : undefined;
    return h('th', { scope: 'col', 'aria-sort': sorted },
      h('button', { type: 'button', title: `Sort by ${f}`, onclick: () => navigate({ order: order === f ? `-${f}` : f, skip: 0 }) },
        f, sorted === 'ascending' ? ' ▲' : sorted === 'descending' ? ' ▼' : ''));
  }), h('th', { scope: 'col' }, 'Actions'));
  const body = h('tbody', {});
  const table = h('table', { class: 'grid', id: 'records', 'aria-label': `${className} records`, 'aria-rowcount': String(page.count ?? records.length) },
    h('thead', {}, headRow), body);
  for (const record of records) body.append(rowOf(record));

  function rowOf(record) {
    const tr = h('tr', { 'data-id': record.objectId });
    for (const f of shown) {
      const td = h('td', { tabindex: '-1', 'data-field': f });
      fillCell(td, record, f);
      tr.append(td);
    }
    tr.append(h('td', {}, link(`${app}/classes/${encode(className)}/${encode(record.objectId)}`, 'Open', undefined, { 'aria-label': `Open ${record.objectId}` }), ' ',
      h('button', { type: 'button', class: 'quiet', 'aria-label': `Delete ${record.objectId}`, onclick: () => remove(record, tr) }, 'Delete')));
    tr.record = record;
    return tr;
  }
  function fillCell(td, record, f) {
    clear(td, cellContent(record[f], typeOfField(f), { className, objectId: record.objectId, field: f }));
    td.title = asText(record[f]);
  }
  async function remove(record, tr) {
    if (!confirm(`Delete ${className} ${record.objectId}?`)) return;
    try {
      await call('DELETE', `classes/${encode(className)}/${encode(record.objectId)}`);
      tr.remove();
      clear(status, h('p', { class: 'ok' }, `Deleted ${record.objectId}.`));
    } catch (e) { clear(status, h('p', { role: 'alert' }, e.text || String(e))); }
  }

  // Editing a cell: the API's answer, as it comes.
  function edit(td) {
    const f = td.dataset.field;
    const tr = td.parentElement;
    if (SYSTEM_FIELDS.includes(f)) { clear(status, h('p', {}, `${f} is the server's to write.`)); return; }
    const type = typeOfField(f);
    const editor = editorFor(type, tr.record[f], `New value of ${f}`);
    td.classList.add('editing');
    clear(td, editor.el);
    editor.focus.focus();
    const close = (focus = true) => { td.classList.remove('editing'); fillCell(td, tr.record, f); if (focus) td.focus(); };
    editor.focus.addEventListener('keydown', async (e) => {
      if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); close(); return; }
      if (e.key !== 'Enter' || (editor.multiline && !e.ctrlKey)) return;
      e.preventDefault(); e.stopPropagation();
      let value;
      try { value = editor.read(); } catch (err) { clear(status, h('p', { role: 'alert' }, err.message)); return; }
      try {
        const answer = await call('PUT', `classes/${encode(className)}/${encode(tr.record.objectId)}`, { body: { [f]: value } });
        tr.record = await call('GET', `classes/${encode(className)}/${encode(tr.record.objectId)}`);
        clear(status, h('p', { class: 'ok' }, `Saved ${f} of ${tr.record.objectId} at ${answer.updatedAt}.`));
        close();
      } catch (err) {
        clear(status, h('p', { role: 'alert' }, err.text || String(err)));
      }
    });
  }

  // Keyboard: one focusable cell at a time (roving tabindex).
  const firstCell = body.querySelector('td');
  if (firstCell) firstCell.tabIndex = 0;
  body.addEventListener('focusin', (e) => {
    const td = e.target.closest('td[data-field]');
    if (!td) return;
    for (const other of body.querySelectorAll('td[tabindex="0"]')) if (other !== td) other.tabIndex = -1;
    td.tabIndex = 0;
  });
  body.addEventListener('dblclick', (e) => { const td = e.target.closest('td[data-field]'); if (td && !td.classList.contains('editing')) edit(td); });
  body.addEventListener('keydown', (e) => {
    const td = e.target.closest('td[data-field]');
    if (!td || td.classList.contains('editing')) return;
    const tr = td.parentElement;
    const col = [...tr.children].indexOf(td);
    let next = null;
    switch (e.key) {
      case 'ArrowRight': next = td.nextElementSibling?.dataset.field ? td.nextElementSibling : null; break;
      case 'ArrowLeft': next = td.previousElementSibling; break;
      case 'ArrowDown': next = tr.nextElementSibling?.children[col]; break;
      case 'ArrowUp': next = tr.previousElementSibling?.children[col]; break;
      case 'Home': next = tr.children[0]; break;
      case 'End': next = tr.children[shown.length - 1]; break;
      case 'Enter': case 'F2': e.preventDefault(); edit(td); return;
      case 'PageDown': if (hasNext) { e.preventDefault(); navigate({ skip: skip + limit }); } return;
      case 'PageUp': if (skip > 0) { e.preventDefault(); navigate({ skip: Math.max(0, skip - limit) }); } return;
      default: return;
    }
    if (next) { e.preventDefault(); next.focus(); }
  });

  const total = page.count ?? records.length;
  const hasNext = skip + records.length < total;
  const pager = h('div', { class: 'pager' },
    h('button', { type: 'button', id: 'prev-page', disabled: skip === 0, onclick: () => navigate({ skip: Math.max(0, skip - limit) }) }, 'Previous'),
    h('span', { id: 'page-info' }, records.length ? `${skip + 1}–${skip + records.length} of ${total}` : `0 of ${total}`),
    h('button', { type: 'button', id: 'next-page', disabled: !hasNext, onclick: () => navigate({ skip: skip + limit }) }, 'Next'),
    h('label', { class: 'inline', for: 'page-size' }, 'Rows per page'), size);
  main.append(pager, h('div', { class: 'table-wrap' }, table),
    h('p', { class: 'muted' }, 'Arrow keys move between cells; Enter or F2 edits (Ctrl+Enter in a JSON editor), Escape cancels; PageDown and PageUp change pages.'));
}

// A new record from JSON, as the API takes it.
function newRecordForm(className, status, done) {
  const text = h('textarea', { id: 'new-record', rows: '4', class: 'wide', value: '{}' });
  const form = h('form', { 'aria-label': 'New record' }, h('details', {}, h('summary', {}, 'New record'),
    h('label', { for: 'new-record' }, 'Fields (JSON)'), text, h('p', {}, h('button', { type: 'submit' }, 'Create'))));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    let body;
    try { body = JSON.parse(text.value); } catch (err) { clear(status, h('p', { role: 'alert' }, `Not JSON: ${err.message}`)); return; }
    try {
      const created = await call('POST', `classes/${encode(className)}`, { body });
      done();
      clear(document.querySelector('.status') || status, h('p', { class: 'ok' }, `Created ${created.objectId}.`));
    } catch (err) { clear(status, h('p', { role: 'alert' }, err.text || String(err))); }
  });
  return form;
}
