// A class's schema through the schema API (keys only): fields (add, delete), indexes, class-level
// permissions, the timeline on or off, and triggers (edit with the API's validation error shown
// where it was made, active on/off, each one's runs from `_syslogTriggers`).
import { h, clear, asText } from '../dom.js';
import { call, getSchemas, forgetSchemas, encode, session } from '../api.js';
import { go, link, draw as redraw } from '../app.js';
import { TYPES } from '../cells.js';
import { runCard } from './record.js';

const RUNS_SHOWN = 20;

export async function render(main, route) {
  const app = encode(session.appId);
  if (!route.a) return renderList(main, app);
  const className = route.a;
  document.title = `Schema of ${className} · crmd console`;
  const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
  clear(main, h('p', {}, link(`${app}/schema`, '← Schema'), ' · ', link(`${app}/classes/${encode(className)}`, `Records of ${className}`)),
    h('h1', {}, `Schema of ${className}`), status);
  let schema;
  try { schema = await call('GET', `schemas/${encode(className)}`); } catch (e) { main.append(h('p', { role: 'alert' }, e.text || String(e))); return; }
  // A change, then the page again from the server's answer.
  const change = async (body, where = status) => {
    try {
      await call('PUT', `schemas/${encode(className)}`, { body });
      forgetSchemas();
      redraw();
      return true;
    } catch (e) {
      clear(where, h('p', { role: 'alert' }, e.text || String(e)));
      return false;
    }
  };

  // Fields.
  const fieldRows = Object.entries(schema.fields).sort(([a], [b]) => a.localeCompare(b)).map(([name, f]) =>
    h('tr', {}, h('td', {}, name), h('td', {}, f.type, f.targetClass ? `<${f.targetClass}>` : ''),
      h('td', {}, ['objectId', 'createdAt', 'updatedAt', 'ACL'].includes(name) ? '' :
        h('button', { type: 'button', class: 'quiet', 'aria-label': `Delete field ${name}`, onclick: () => {
          if (confirm(`Delete the field ${name} and its values?`)) change({ fields: { [name]: { __op: 'Delete' } } });
        } }, 'Delete'))));
  const fname = h('input', { id: 'field-name', required: true });
  const ftype = h('select', { id: 'field-type' }, TYPES.filter((t) => t !== 'ACL').map((t) => h('option', { value: t }, t)));
  const ftarget = h('input', { id: 'field-target', placeholder: 'for Pointer and Relation' });
  const addField = h('form', { class: 'row', 'aria-label': 'Add a field' },
    h('label', { for: 'field-name' }, 'Name'), fname, h('label', { for: 'field-type' }, 'Type'), ftype,
    h('label', { for: 'field-target' }, 'Target class'), ftarget, h('button', { type: 'submit' }, 'Add field'));
  addField.addEventListener('submit', (e) => {
    e.preventDefault();
    const def = { type: ftype.value };
    if (ftarget.value.trim()) def.targetClass = ftarget.value.trim();
    change({ fields: { [fname.value.trim()]: def } });
  });
  main.append(h('h2', {}, 'Fields'), h('div', { class: 'table-wrap' }, h('table', { class: 'grid', 'aria-label': 'Fields' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Delete'))),
    h('tbody', {}, fieldRows))), addField);

  // Indexes, CLPs: JSON, as the API takes them.
  main.append(h('h2', {}, 'Indexes'), h('pre', { class: 'json' }, JSON.stringify(schema.indexes || {}, null, 1)),
    jsonForm('index', 'Add an index: {"name": {"Field": 1}}', '{}', (v) => change({ indexes: v })),
    h('h2', {}, 'Class-level permissions'),
    jsonForm('clp', 'classLevelPermissions', JSON.stringify(schema.classLevelPermissions || {}, null, 1), (v) => change({ classLevelPermissions: v })));

  // Timeline.
  const on = Boolean(schema.timeline);
  main.append(h('h2', {}, 'Timeline'), h('p', {}, on ? 'The history of this class\'s records is kept.' : 'No history is kept.', ' ',
    h('button', { type: 'button', id: 'timeline-toggle', onclick: () => change({ timeline: on ? null : {} }) }, on ? 'Turn the timeline off' : 'Turn the timeline on')));

  // Triggers.
  const triggers = schema.triggers || [];
  const list = h('div', { id: 'triggers' });
  triggers.forEach((t, i) => list.append(triggerCard(t, i)));
  function triggerCard(t, i) {
    const where = h('div', { class: 'status' });
    const text = h('textarea', { id: `trigger-${i}`, rows: '8', class: 'wide', value: JSON.stringify(t, null, 1) });
    const active = h('input', { type: 'checkbox', id: `trigger-active-${i}`, checked: t.active !== false });
    const save = async (replacement) => {
      const next = triggers.slice();
      if (replacement === null) next.splice(i, 1); else next[i] = replacement;
      await change({ triggers: next }, where);
    };
    active.addEventListener('change', () => save({ ...t, active: active.checked }));
    const form = h('form', { class: 'card', 'aria-label': `Trigger ${t.name || t._id}` },
      h('h3', {}, asText(t.name || t._id), ' ', h('span', { class: 'muted' }, `${t.event} · ${t._id}`)),
      h('label', { class: 'inline', for: `trigger-active-${i}` }, active, 'Active'),
      h('label', { for: `trigger-${i}` }, 'Definition'), text, where,
      h('div', { class: 'row' }, h('button', { type: 'submit' }, 'Save trigger'),
        h('button', { type: 'button', class: 'danger', onclick: () => { if (confirm('Delete this trigger?')) save(null); } }, 'Delete trigger'),
        h('button', { type: 'button', class: 'quiet', onclick: () => showRuns(t, runs) }, 'Runs')));
    const runs = h('div', {});
    form.append(runs);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      try { save(JSON.parse(text.value)); } catch (err) { clear(where, h('p', { role: 'alert' }, `Not JSON: ${err.message}`)); }
    });
    return form;
  }
  const template = { name: 'New trigger', active: true, event: 'create', conditions: [],
    actions: [{ actionType: 'update-record', actionData: { 'update-record': { data: {} } } }] };
  const newWhere = h('div', { class: 'status' });
  const newText = h('textarea', { id: 'new-trigger', rows: '8', class: 'wide', value: JSON.stringify(template, null, 1) });
  const addTrigger = h('form', { 'aria-label': 'New trigger' }, h('label', { for: 'new-trigger' }, 'New trigger (docs/TRIGGERS.md)'), newText, newWhere,
    h('button', { type: 'submit' }, 'Add trigger'));
  addTrigger.addEventListener('submit', (e) => {
    e.preventDefault();
    let t;
    try { t = JSON.parse(newText.value); } catch (err) { clear(newWhere, h('p', { role: 'alert' }, `Not JSON: ${err.message}`)); return; }
    change({ triggers: [...triggers, t] }, newWhere);
  });
  main.append(h('h2', {}, 'Triggers'), list, addTrigger);
}

async function showRuns(trigger, into) {
  clear(into, 'Loading runs…');
  try {
    const rows = (await call('GET', 'classes/_syslogTriggers', { query: { where: { triggerId: trigger._id }, order: '-createdAt', limit: String(RUNS_SHOWN) } })).results;
    clear(into, rows.length ? rows.map(runCard) : h('p', { class: 'muted' }, 'No runs yet.'));
  } catch (e) { clear(into, h('p', { role: 'alert' }, e.text || String(e))); }
}

function jsonForm(id, label, value, submit) {
  const where = h('div', { class: 'status' });
  const text = h('textarea', { id: `json-${id}`, rows: '4', class: 'wide', value });
  const form = h('form', { 'aria-label': label }, h('label', { for: `json-${id}` }, label), text, where, h('button', { type: 'submit' }, 'Save'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    let v;
    try { v = JSON.parse(text.value); } catch (err) { clear(where, h('p', { role: 'alert' }, `Not JSON: ${err.message}`)); return; }
    submit(v);
  });
  return form;
}

async function renderList(main, app) {
  document.title = 'Schema · crmd console';
  const status = h('div', { class: 'status' });
  const name = h('input', { id: 'new-class', required: true });
  const create = h('form', { class: 'row', 'aria-label': 'New class' }, h('label', { for: 'new-class' }, 'New class'), name, h('button', { type: 'submit' }, 'Create'));
  create.addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await call('POST', `schemas/${encode(name.value.trim())}`, { body: { className: name.value.trim() } });
      forgetSchemas();
      go(`${app}/schema/${encode(name.value.trim())}`, {});
    } catch (err) { clear(status, h('p', { role: 'alert' }, err.text || String(err))); }
  });
  const schemas = await getSchemas(true);
  clear(main, h('h1', {}, 'Schema'), create, status,
    h('ul', {}, schemas.map((s) => h('li', {}, link(`${app}/schema/${encode(s.className)}`, s.className),
      h('span', { class: 'muted' }, ` ${Object.keys(s.fields).length} fields${s.triggers?.length ? `, ${s.triggers.length} triggers` : ''}${s.timeline ? ', timeline' : ''}`)))));
}
