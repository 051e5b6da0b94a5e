// The application's classes with their record counts (keys: from the schema API); a user, whom
// the schema API refuses, opens a class by name.
import { h, clear } from '../dom.js';
import { call, getSchemas, isKey, encode, session, opened } from '../api.js';
import { link, go } from '../app.js';

// Counts asked a few at a time: a fresh application has 111 classes.
const COUNT_WIDTH = 6;

export async function render(main) {
  document.title = 'Data · crmd console';
  const name = h('input', { id: 'open-class', required: true, autocomplete: 'off' });
  const open = h('form', { class: 'row' }, h('label', { for: 'open-class' }, 'Open a class by name'), name,
    h('button', { type: 'submit' }, 'Open'));
  open.onsubmit = (e) => { e.preventDefault(); go(`${encode(session.appId)}/classes/${encode(name.value.trim())}`, {}); };
  clear(main, h('h1', {}, 'Data'), open);
  if (!isKey()) {
    main.append(h('p', { class: 'muted' }, 'The list of classes is the keys\' (spec §4.5): as a user, open a class by its name.'),
      opened.size ? h('ul', { 'aria-label': 'Opened in this tab' }, [...opened].sort().map((c) => h('li', {}, link(`${encode(session.appId)}/classes/${encode(c)}`, c)))) : null);
    return;
  }
  const schemas = await getSchemas();
  const counts = new Map();
  const rows = schemas.map((s) => {
    const cell = h('td', { class: 'muted' }, '…');
    counts.set(s.className, cell);
    return h('tr', {}, h('td', {}, link(`${encode(session.appId)}/classes/${encode(s.className)}`, s.className)), cell,
      h('td', {}, link(`${encode(session.appId)}/schema/${encode(s.className)}`, 'schema', undefined, { 'aria-label': `Schema of ${s.className}` })));
  });
  main.append(h('div', { class: 'table-wrap' }, h('table', { class: 'grid', 'aria-label': 'Classes' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Class'), h('th', { scope: 'col' }, 'Records'), h('th', { scope: 'col' }, 'Schema'))),
    h('tbody', {}, rows))));
  const queue = schemas.map((s) => s.className);
  await Promise.all(Array.from({ length: COUNT_WIDTH }, async () => {
    while (queue.length) {
      const className = queue.shift();
      const cell = counts.get(className);
      try {
        const r = await call('GET', `classes/${encode(className)}`, { query: { count: '1', limit: '0' } });
        cell.textContent = String(r.count);
        cell.className = '';
      } catch (e) {
        cell.textContent = e.text || String(e);
      }
    }
  }));
}
