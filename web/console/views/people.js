// People: users (create, deactivate, lock state, a reset mail, MCP switches) and roles with
// their users and the roles they include, all through the record API. A user signed in sees
// what the user may read.
import { h, clear, asText } from '../dom.js';
import { call, encode, session } from '../api.js';
import { link, draw as redraw } from '../app.js';

const USERS_PAGE = 50;

export async function render(main, route) {
  document.title = 'People · crmd console';
  const app = encode(session.appId);
  const status = h('div', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const skip = Math.max(0, Number.parseInt(route.query.get('skip') || '0', 10) || 0);
  clear(main, h('h1', {}, 'People'), status);
  const say = (e) => clear(status, h('p', { role: 'alert' }, e.text || String(e)));

  // Users.
  const users = h('section', { 'aria-labelledby': 'users-title' }, h('h2', { id: 'users-title' }, 'Users'));
  main.append(users);
  try {
    const page = await call('GET', 'classes/_User', { query: { order: 'username', limit: String(USERS_PAGE), skip: String(skip), count: '1' } });
    const rows = page.results.map((u) => h('tr', {},
      h('td', {}, link(`${app}/classes/_User/${encode(u.objectId)}`, asText(u.username))),
      h('td', {}, asText(u.email ?? '')), h('td', {}, u.active === false ? 'deactivated' : 'active'),
      h('td', {}, u._account_lockout_expires_at && new Date(u._account_lockout_expires_at.iso || u._account_lockout_expires_at) > new Date() ? 'locked' : 'open'),
      h('td', {}, asText(u.mcpPermissions ?? '')),
      h('td', {},
        h('button', { type: 'button', class: 'quiet', 'aria-label': `${u.active === false ? 'Activate' : 'Deactivate'} ${u.username}`, onclick: async () => {
          try { await call('PUT', `classes/_User/${encode(u.objectId)}`, { body: { active: u.active === false } }); redraw(); } catch (e) { say(e); }
        } }, u.active === false ? 'Activate' : 'Deactivate'), ' ',
        u.email ? h('button', { type: 'button', class: 'quiet', 'aria-label': `Send a reset mail to ${u.username}`, onclick: async () => {
          try { await call('POST', 'requestPasswordReset', { body: { email: u.email } }); clear(status, h('p', { class: 'ok' }, `Reset mail sent to ${u.email}.`)); } catch (e) { say(e); }
        } }, 'Reset mail') : null)));
    users.append(h('div', { class: 'table-wrap' }, h('table', { class: 'grid', 'aria-label': 'Users' },
      h('thead', {}, h('tr', {}, ['Username', 'Email', 'State', 'Lock', 'MCP switches', 'Actions'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, rows))),
    h('div', { class: 'pager' }, skip > 0 ? link(`${app}/people`, 'Previous', { skip: String(Math.max(0, skip - USERS_PAGE)) }) : null,
      h('span', {}, `${page.results.length ? skip + 1 : 0}–${skip + page.results.length} of ${page.count}`),
      skip + page.results.length < page.count ? link(`${app}/people`, 'Next', { skip: String(skip + USERS_PAGE) }) : null));
  } catch (e) { users.append(h('p', { role: 'alert' }, e.text || String(e))); }

  const uname = h('input', { id: 'new-username', required: true, autocomplete: 'off' });
  const uemail = h('input', { id: 'new-email', type: 'email', autocomplete: 'off' });
  const upass = h('input', { id: 'new-password', type: 'password', required: true, autocomplete: 'new-password' });
  const create = h('form', { 'aria-label': 'New user', class: 'card' }, h('h3', {}, 'New user'),
    h('label', { for: 'new-username' }, 'Username'), uname, h('label', { for: 'new-email' }, 'Email'), uemail,
    h('label', { for: 'new-password' }, 'Password'), upass, h('p', {}, h('button', { type: 'submit' }, 'Create user')));
  create.addEventListener('submit', async (e) => {
    e.preventDefault();
    const body = { username: uname.value, password: upass.value };
    if (uemail.value) body.email = uemail.value;
    try { await call('POST', 'users', { body }); redraw(); } catch (err) { say(err); }
  });
  users.append(create);

  // Roles.
  const roles = h('section', { 'aria-labelledby': 'roles-title' }, h('h2', { id: 'roles-title' }, 'Roles'));
  main.append(roles);
  try {
    const all = (await call('GET', 'classes/_Role', { query: { order: 'name', limit: '1000' } })).results;
    const rel = (r, key, target) => link(`${app}/classes/${target}`, key === 'users' ? 'users' : 'included roles', {
      where: JSON.stringify({ $relatedTo: { object: { __type: 'Pointer', className: '_Role', objectId: r.objectId }, key } }) });
    roles.append(all.length ? h('ul', {}, all.map((r) => h('li', {}, link(`${app}/classes/_Role/${encode(r.objectId)}`, asText(r.name)),
      ' · ', rel(r, 'users', '_User'), ' · ', rel(r, 'roles', '_Role')))) : h('p', { class: 'muted' }, 'No roles.'));
  } catch (e) { roles.append(h('p', { role: 'alert' }, e.text || String(e))); }
}
