// The filter builder: conditions of the `where` language (spec §4.3) as rows of field, operator
// and value, each value written in its field's wire format; or the `where` JSON itself.
import { h, clear } from '../dom.js';

export const OPERATORS = [
  ['eq', 'equals'], ['$ne', 'not equal'], ['$lt', '<'], ['$lte', '≤'], ['$gt', '>'], ['$gte', '≥'],
  ['$in', 'in (comma-separated)'], ['$regex', 'matches regex'], ['$exists', 'exists (true/false)'],
];

// `text` typed for a field of `type` into its wire value.
function wire(text, type) {
  switch (type?.type) {
    case 'Number': { const n = Number(text); if (!Number.isFinite(n)) throw new Error(`Not a number: ${text}`); return n; }
    case 'Boolean': if (text !== 'true' && text !== 'false') throw new Error('Write true or false'); return text === 'true';
    case 'Date': { const d = new Date(text); if (Number.isNaN(d.getTime())) throw new Error(`Not a date: ${text}`); return { __type: 'Date', iso: d.toISOString() }; }
    case 'Pointer': return { __type: 'Pointer', className: type.targetClass, objectId: text.trim() };
    default: return text;
  }
}

// One condition into its `where` clause.
export function clause(op, text, type) {
  if (op === 'eq') return wire(text, type);
  if (op === '$in') return { $in: text.split(',').map((t) => wire(t.trim(), type)) };
  if (op === '$regex') return { $regex: text };
  if (op === '$exists') return { $exists: text !== 'false' };
  return { [op]: wire(text, type) };
}

// The builder; `apply(where)` gets the `where` object (or null for none).
export function filterBuilder({ fields, typeOfField, where, apply }) {
  const rows = h('div', {});
  const status = h('div', { class: 'status' });
  const raw = h('textarea', { id: 'where-json', rows: '3', class: 'wide', value: where ? JSON.stringify(where) : '' });
  let n = 0;
  function addRow() {
    const i = n++;
    const field = h('select', { id: `f-field-${i}` }, fields.map((f) => h('option', { value: f }, f)));
    const op = h('select', { id: `f-op-${i}` }, OPERATORS.map(([v, t]) => h('option', { value: v }, t)));
    const value = h('input', { id: `f-value-${i}` });
    const row = h('div', { class: 'row filter-row' },
      h('label', { class: 'skip', for: `f-field-${i}` }, 'Field'), field,
      h('label', { class: 'skip', for: `f-op-${i}` }, 'Operator'), op,
      h('label', { class: 'skip', for: `f-value-${i}` }, 'Value'), value,
      h('button', { type: 'button', class: 'quiet', 'aria-label': 'Remove this condition', onclick: () => row.remove() }, '×'));
    row.read = () => ({ field: field.value, clause: clause(op.value, value.value, typeOfField(field.value)) });
    rows.append(row);
    field.focus();
  }
  function fromRows() {
    const out = {};
    for (const row of rows.children) {
      const { field, clause: c } = row.read();
      const prev = out[field];
      out[field] = prev && typeof prev === 'object' && !prev.__type && typeof c === 'object' && !c.__type ? { ...prev, ...c } : c;
    }
    return out;
  }
  const form = h('form', { 'aria-label': 'Filter' },
    h('details', { open: where ? true : undefined }, h('summary', {}, 'Filter'),
      rows,
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'quiet', onclick: addRow }, 'Add condition'),
        h('button', { type: 'submit', id: 'apply-filter' }, 'Apply'),
        h('button', { type: 'button', class: 'quiet', onclick: () => apply(null) }, 'Clear')),
      h('label', { for: 'where-json' }, 'where (JSON; used when no condition is listed above)'), raw, status));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    try {
      if (rows.children.length) return apply(fromRows());
      if (!raw.value.trim()) return apply(null);
      const parsed = JSON.parse(raw.value);
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('where must be a JSON object');
      apply(parsed);
    } catch (err) {
      clear(status, h('p', { role: 'alert' }, err.message));
    }
  });
  return form;
}
