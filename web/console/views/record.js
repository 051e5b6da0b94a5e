// A record's story: its fields (edited by type), its `_Timeline` history (who, when, what
// changed, from which door: Referer and updatedByTrigger) and the trigger runs it caused
// (`_syslogTriggers`). Each part is read through the record API with the tab's credential, so a
// part that credential may not read says so.
import { h, clear, asText } from '../dom.js';
import { call, getSchema, encode, session } from '../api.js';
import { go, link } from '../app.js';
import { typeOf, cellContent, editorFor, privatePreview } from '../cells.js';

const HISTORY_ROWS = 100;

export async function render(main, route) {
  const className = route.a;
  const objectId = route.b;
  const app = encode(session.appId);
  document.title = `${className} ${objectId} · crmd console`;
  const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
  clear(main, h('p', {}, link(`${app}/classes/${encode(className)}`, `← ${className}`)), h('h1', {}, `${className} ${objectId}`), status);
  const schema = await getSchema(className);
  let record;
  try {
    record = await call('GET', `classes/${encode(className)}/${encode(objectId)}`);
  } catch (e) {
    main.append(h('p', { role: 'alert' }, e.text || String(e)));
    return;
  }
  const list = h('dl', { class: 'fields', id: 'record-fields' });
  const draw = () => {
    clear(list);
    const fields = [...new Set([...Object.keys(record), ...Object.keys(schema?.fields || {})])].filter((f) => f !== 'ACL' || record.ACL);
    for (const f of fields) {
      const type = typeOf(f, record[f], schema);
      const dd = h('span', {}, cellContent(record[f], type, { className, objectId, field: f }),
        (type.type === 'PrivateFile' || type.type === 'File') && record[f] ? [' ', privatePreview(record[f])] : null,
        type.type === 'Relation' ? relationList(className, objectId, f, type.targetClass) : null);
      const editable = !['objectId', 'createdAt', 'updatedAt'].includes(f) && type.type !== 'Relation';
      list.append(h('dt', {}, f, h('span', { class: 'muted' }, ` ${type.type}`)), h('dd', {}, dd, ' ',
        editable ? h('button', { type: 'button', class: 'quiet', 'aria-label': `Edit ${f}`, onclick: () => edit(f, type, dd) }, 'Edit') : null));
    }
  };
  function edit(f, type, dd) {
    const editor = editorFor(type, record[f], `New value of ${f}`);
    const save = h('button', { type: 'submit' }, 'Save');
    const form = h('form', { class: 'row' }, editor.el, save, h('button', { type: 'button', class: 'quiet', onclick: draw }, 'Cancel'));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      try {
        await call('PUT', `classes/${encode(className)}/${encode(objectId)}`, { body: { [f]: editor.read() } });
        record = await call('GET', `classes/${encode(className)}/${encode(objectId)}`);
        clear(status, h('p', { class: 'ok' }, `Saved ${f}.`));
        draw();
        loadHistory();
      } catch (err) { clear(status, h('p', { role: 'alert' }, err.text || err.message)); }
    });
    clear(dd, form);
    editor.focus.focus();
  }
  draw();
  const remove = h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (!confirm(`Delete ${className} ${objectId}?`)) return;
    try {
      await call('DELETE', `classes/${encode(className)}/${encode(objectId)}`);
      go(`${app}/classes/${encode(className)}`, {});
    } catch (e) { clear(status, h('p', { role: 'alert' }, e.text || String(e))); }
  } }, 'Delete this record');
  const history = h('section', { id: 'history', 'aria-labelledby': 'history-title' }, h('h2', { id: 'history-title' }, 'History'));
  const runs = h('section', { id: 'trigger-runs', 'aria-labelledby': 'runs-title' }, h('h2', { id: 'runs-title' }, 'Trigger runs'));
  main.append(list, h('p', {}, remove), history, runs);

  async function loadHistory() {
    const body = h('div', {});
    clear(history, h('h2', { id: 'history-title' }, 'History'), body);
    try {
      const rows = (await call('GET', 'classes/_Timeline', { query: {
        where: { objectClass: className, objectIdValue: objectId }, order: '-createdAt', limit: String(HISTORY_ROWS) } })).results;
      if (!rows.length) body.append(h('p', { class: 'muted' }, 'No history (is this class\'s timeline on?).'));
      for (const row of rows) {
        const data = row.data && typeof row.data === 'object' ? row.data : null;
        const byTrigger = data?.updatedByTrigger;
        body.append(h('div', { class: 'card history-row' },
          h('strong', {}, row.event), ' ', h('time', { datetime: row.createdAt }, row.createdAt),
          ' by ', asText(row.user ?? 'unknown'),
          row.Referer ? [' from ', h('span', {}, asText(row.Referer))] : ' through the API',
          byTrigger ? [' · trigger ', h('span', {}, asText(byTrigger))] : null,
          data ? h('pre', {}, JSON.stringify(data, null, 1)) : null));
      }
    } catch (e) { body.append(h('p', { role: 'alert' }, e.text || String(e))); }
  }
  async function loadRuns() {
    const body = h('div', {});
    clear(runs, h('h2', { id: 'runs-title' }, 'Trigger runs'), body);
    try {
      const rows = (await call('GET', 'classes/_syslogTriggers', { query: {
        where: { objectIdValue: objectId }, order: '-createdAt', limit: String(HISTORY_ROWS) } })).results;
      if (!rows.length) body.append(h('p', { class: 'muted' }, 'No trigger ran for this record.'));
      for (const row of rows) body.append(runCard(row));
    } catch (e) { body.append(h('p', { role: 'alert' }, e.text || String(e))); }
  }
  loadHistory();
  loadRuns();
}

// One `_syslogTriggers` row: fired (no actionId) or an action's run, with its answer or error.
export function runCard(row) {
  return h('div', { class: 'card trigger-run' },
    h('strong', {}, row.actionId ? `action ${asText(row.actionId)}` : 'fired'), ' ',
    h('time', { datetime: row.createdAt }, row.createdAt), ' · trigger ', asText(row.triggerId), ' · ', asText(row.event),
    row.error ? h('pre', { class: 'error' }, asText(row.error)) : null,
    row.data ? h('pre', {}, asText(row.data)) : null);
}

// A Relation's first records as a list of links (the whole list is the link beside it).
const RELATED_SHOWN = 20;
function relationList(className, objectId, field, target) {
  const list = h('ul', { class: 'related', 'aria-label': `${field}: related ${target}` });
  const where = { $relatedTo: { object: { __type: 'Pointer', className, objectId }, key: field } };
  call('GET', `classes/${encode(target)}`, { query: { where, limit: String(RELATED_SHOWN), keys: 'objectId' } })
    .then((r) => {
      if (!r.results.length) list.append(h('li', { class: 'muted' }, 'none'));
      for (const o of r.results) list.append(h('li', {}, link(`${encode(session.appId)}/classes/${encode(target)}/${encode(o.objectId)}`, o.objectId)));
    })
    .catch((e) => list.append(h('li', { role: 'alert' }, e.text || String(e))));
  return list;
}
