// The console's shell: its addresses (every view its own URL, history API), the navigation, and
// which view draws the main area. Views are modules of views/, each `render(main, route)`.
import { h, clear } from './dom.js';
import { session, signOut, isKey } from './api.js';
import * as signin from './views/signin.js';
import * as classes from './views/classes.js';
import * as browser from './views/browser.js';
import * as record from './views/record.js';
import * as schema from './views/schema.js';
import * as people from './views/people.js';
import * as operations from './views/operations.js';

const rootEl = document.getElementById('root');
const base = new URL('.', document.baseURI).pathname;  // `/console/`

// The console's address of a view: `path` below /console/, `query` an object.
export function href(path, query) {
  const url = new URL(path, new URL(base, location.origin));
  for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== '') url.searchParams.set(k, v);
  return url.pathname + url.search;
}

export function go(path, query, { replace = false } = {}) {
  const to = typeof query === 'string' ? query : href(path, query);
  if (replace) history.replaceState(null, '', to); else history.pushState(null, '', to);
  draw();
}

// Links inside the console move through history, without a reload (which would sign out).
document.addEventListener('click', (event) => {
  const a = event.target.closest('a[data-nav]');
  if (!a || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  history.pushState(null, '', a.getAttribute('href'));
  draw();
});
window.addEventListener('popstate', draw);

export function link(path, text, query, attrs = {}) {
  return h('a', { href: href(path, query), 'data-nav': true, ...attrs }, text);
}

// `/console/<app>/<section>/<a>/<b>` into its parts.
function parse() {
  const rest = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : '';
  const parts = rest.split('/').filter(Boolean).map(decodeURIComponent);
  return { app: parts[0] || '', section: parts[1] || 'classes', a: parts[2], b: parts[3], query: new URLSearchParams(location.search) };
}

function nav(route) {
  const app = encodeURIComponent(session.appId);
  const item = (section, label) => link(`${app}/${section}`, label, undefined,
    { 'aria-current': route.section === section ? 'page' : undefined });
  const who = session.kind === 'user' ? `user ${session.user.username}` : session.kind === 'master' ? 'master key' : 'API key';
  return h('nav', { 'aria-label': 'Console' },
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h('p', {}, h('strong', {}, 'crmd'), ' ', h('span', {}, session.appId)),
    item('classes', 'Data'),
    isKey() ? item('schema', 'Schema') : null,
    item('people', 'People'),
    isKey() ? item('operations', 'Operations') : null,
    h('p', { class: 'who' }, `Signed in with ${who}`),
    h('button', { class: 'quiet', type: 'button', onclick: async () => { await signOut(); go('', {}); } }, 'Sign out'));
}

const views = { classes, schema, people, operations };

export function draw() {
  const route = parse();
  if (!session.appId || (route.app && route.app !== session.appId)) {
    document.title = 'Sign in · crmd console';
    signin.render(rootEl, route);
    return;
  }
  if (!route.app) { go(`${encodeURIComponent(session.appId)}/classes`, {}, { replace: true }); return; }
  const main = h('main', { id: 'main', tabindex: '-1' });
  clear(rootEl, h('div', { class: 'shell' }, nav(route), main));
  let view = views[route.section] || classes;
  if (route.section === 'classes' && route.a) view = route.b ? record : browser;
  view.render(main, route).catch((e) => clear(main, h('p', { role: 'alert' }, e.text || String(e))));
}

draw();
