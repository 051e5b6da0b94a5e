// Values by type (spec §2.2): how a cell shows one, and the editor that writes one back. Every
// value becomes text (dom.js); a link is made only from an http(s) address or a record's id.
import { h, asText, safeHref } from './dom.js';
import { blobUrl, encode, session } from './api.js';
import { link } from './app.js';

export const TYPES = ['String', 'Number', 'Boolean', 'Date', 'Pointer', 'Relation', 'Array', 'Object', 'File', 'PrivateFile', 'ACL', 'HTML/XML', 'GeoPoint', 'Polygon'];

// The type of `field`: the schema's when known, else read off the value.
export function typeOf(field, value, schema) {
  const declared = schema?.fields?.[field];
  if (declared) return declared;
  if (field === 'createdAt' || field === 'updatedAt') return { type: 'Date' };
  if (typeof value === 'number') return { type: 'Number' };
  if (typeof value === 'boolean') return { type: 'Boolean' };
  if (Array.isArray(value)) return { type: 'Array' };
  if (value && typeof value === 'object') {
    if (value.__type === 'Pointer' || value.__type === 'Object') return { type: 'Pointer', targetClass: value.className };
    if (value.__type === 'File') return { type: value.private ? 'PrivateFile' : 'File' };
    if (value.__type === 'Date') return { type: 'Date' };
    if (value.__type === 'Relation') return { type: 'Relation', targetClass: value.className };
    return { type: 'Object' };
  }
  return { type: 'String' };
}

// What a cell shows of `value` of `className`'s record `objectId`.
export function cellContent(value, type, { className, objectId, field } = {}) {
  if (value === undefined) return '';
  const app = encode(session.appId);
  switch (type.type) {
    case 'Pointer':
      if (value && typeof value === 'object' && typeof value.objectId === 'string')
        return link(`${app}/classes/${encode(value.className || type.targetClass)}/${encode(value.objectId)}`, value.objectId,
          undefined, { title: `${value.className || type.targetClass} ${value.objectId}` });
      return asText(value);
    case 'Relation':
      if (!objectId) return `Relation<${type.targetClass}>`;
      return link(`${app}/classes/${encode(type.targetClass)}`, `${type.targetClass} related`, {
        where: JSON.stringify({ $relatedTo: { object: { __type: 'Pointer', className, objectId }, key: field } }) });
    case 'File': {
      const href = value && safeHref(value.url);
      return href ? h('a', { href, target: '_blank', rel: 'noopener noreferrer' }, value.name || value.url) : asText(value);
    }
    case 'PrivateFile':
      return value && typeof value === 'object' ? (value.name || 'file') : asText(value);
    case 'Date': return value && typeof value === 'object' ? asText(value.iso) : asText(value);
    default: return asText(value);
  }
}

// A file shown from a `blob:` address, fetched with the tab's credential (never a cookie); only a
// file of this server (api.js blobUrl).
export function privatePreview(value) {
  const out = h('span', {});
  const href = value && safeHref(value.url);
  if (!href || new URL(href).origin !== location.origin) return out;
  out.append(h('button', { type: 'button', class: 'quiet', onclick: async () => {
    try {
      const url = await blobUrl(href);
      out.replaceChildren(h('img', { src: url, alt: `Preview of ${value.name || 'the file'}`, class: 'preview' }),
        ' ', h('a', { href: url, download: value.name || 'file' }, 'Download'));
    } catch (e) { out.replaceChildren(h('span', { role: 'alert' }, e.text || String(e))); }
  } }, 'Preview'));
  return out;
}

// An editor for `value` of `type`: {el, read()}, read() throwing Error with words for a person.
export function editorFor(type, value, label) {
  const id = `edit-${Math.random().toString(36).slice(2)}`;
  const wrap = (control) => h('span', {}, h('label', { for: id, class: 'skip' }, label), control);
  switch (type.type) {
    case 'Boolean': {
      const el = h('select', { id }, h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'), h('option', { value: '' }, '(unset)'));
      el.value = value === true ? 'true' : value === false ? 'false' : '';
      return { el: wrap(el), focus: el, read: () => (el.value === '' ? { __op: 'Delete' } : el.value === 'true') };
    }
    case 'Number': {
      const el = h('input', { id, type: 'number', step: 'any', value: value ?? '' });
      return { el: wrap(el), focus: el, read: () => {
        if (el.value === '') return { __op: 'Delete' };
        const n = Number(el.value);
        if (!Number.isFinite(n)) throw new Error('Not a number');
        return n;
      } };
    }
    case 'Date': {
      const el = h('input', { id, value: value ? (typeof value === 'object' ? value.iso : value) : '', placeholder: '2026-01-31T12:00:00.000Z' });
      return { el: wrap(el), focus: el, read: () => {
        if (el.value === '') return { __op: 'Delete' };
        const d = new Date(el.value);
        if (Number.isNaN(d.getTime())) throw new Error('Not a date: write it as 2026-01-31T12:00:00.000Z');
        return { __type: 'Date', iso: d.toISOString() };
      } };
    }
    case 'Pointer': {
      const el = h('input', { id, value: value?.objectId ?? '', placeholder: `objectId of ${type.targetClass}` });
      return { el: wrap(el), focus: el, read: () => (el.value === '' ? { __op: 'Delete' }
        : { __type: 'Pointer', className: type.targetClass || value?.className, objectId: el.value.trim() }) };
    }
    case 'Array': case 'Object': case 'ACL': case 'GeoPoint': case 'Polygon': case 'File': case 'PrivateFile': case 'Relation': {
      const el = h('textarea', { id, rows: '4', cols: '40', value: value === undefined ? '' : JSON.stringify(value, null, 1) });
      return { el: wrap(el), focus: el, multiline: true, read: () => {
        if (el.value.trim() === '') return { __op: 'Delete' };
        try { return JSON.parse(el.value); } catch (e) { throw new Error(`Not JSON: ${e.message}`); }
      } };
    }
    default: {
      const el = h('input', { id, value: value ?? '' });
      return { el: wrap(el), focus: el, read: () => el.value };
    }
  }
}
