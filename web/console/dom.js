// The one way the console makes elements: text goes in as text nodes (never HTML), attributes
// are set one by one, and an `href` is kept only when it is http(s) or the console's own: a
// record value such as `javascript:alert(1)` or `<script>` stays text wherever it shows.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'href') { const safe = safeHref(value); if (safe) el.setAttribute('href', safe); }
    else if (key === 'value') el.value = value;
    else if (key === 'checked') el.checked = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// An address a link may carry: http(s), or a `blob:` this page made (a file's preview: a blob
// address exists only in the document that created it).
export function safeHref(value) {
  try {
    const url = new URL(String(value), document.baseURI);
    if (url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'blob:') return url.href;
  } catch { /* not an address */ }
  return null;
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A value as the text a cell shows: JSON for what is not a string.
export function asText(value) {
  if (value === undefined) return '';
  if (value === null) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value.__type === 'Date') return value.iso;
  return JSON.stringify(value);
}
