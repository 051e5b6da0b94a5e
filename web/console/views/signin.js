// Sign-in per application: as a user (POST /login, with its lockout and rate limits: the
// default), or with an API key, or with the master key, which spec §5.2 keeps server-side: typing
// it into a browser is an operator's explicit choice, confirmed here.
import { h, clear } from '../dom.js';
import { signIn } from '../api.js';
import { draw, go } from '../app.js';

export function render(root, route) {
  const status = h('div', { class: 'status', 'aria-live': 'polite' });
  const appId = h('input', { id: 'app-id', name: 'app', required: true, autocomplete: 'off', value: route.app, class: 'wide' });
  const username = h('input', { id: 'username', name: 'username', autocomplete: 'username', class: 'wide' });
  const password = h('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', class: 'wide' });
  const secret = h('input', { id: 'secret', name: 'secret', type: 'password', autocomplete: 'off', class: 'wide' });
  const confirm = h('input', { id: 'master-confirm', type: 'checkbox' });
  const userPart = h('div', {}, h('label', { for: 'username' }, 'Username'), username, h('label', { for: 'password' }, 'Password'), password);
  const keyLabel = h('label', { for: 'secret' }, 'Key');
  const masterPart = h('p', {}, h('label', { class: 'inline', for: 'master-confirm' }, confirm,
    'I am this application\'s operator and choose to type its master key into this browser tab.'));
  const keyPart = h('div', { hidden: true }, keyLabel, secret, masterPart);
  const kinds = [['user', 'As a user (username and password)'], ['key', 'With an API key'], ['master', 'With the master key']];
  const radios = kinds.map(([value, text], i) => h('label', { class: 'inline' },
    h('input', { type: 'radio', name: 'kind', value, checked: i === 0, onchange: () => show(value) }), text));
  function show(kind) {
    userPart.hidden = kind !== 'user';
    keyPart.hidden = kind === 'user';
    masterPart.hidden = kind !== 'master';
    keyLabel.textContent = kind === 'master' ? 'Master key' : 'API key';
  }
  const form = h('form', { 'aria-labelledby': 'signin-title' },
    h('label', { for: 'app-id' }, 'Application id'), appId,
    h('fieldset', {}, h('legend', {}, 'Sign in'), radios),
    userPart, keyPart,
    h('p', {}, h('button', { type: 'submit' }, 'Sign in')), status);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const kind = form.querySelector('input[name=kind]:checked').value;
    if (kind === 'master' && !confirm.checked) {
      clear(status, h('p', { role: 'alert' }, 'Confirm that you choose to use the master key in this browser.'));
      return;
    }
    clear(status, 'Signing in…');
    try {
      await signIn({ appId: appId.value.trim(), kind, username: username.value, password: password.value, secret: secret.value });
      password.value = ''; secret.value = '';
      if (route.app === appId.value.trim()) draw(); else go(`${encodeURIComponent(appId.value.trim())}/classes`, {});
    } catch (e) {
      clear(status, h('p', { role: 'alert' }, e.text || String(e)));
    }
  });
  clear(root, h('main', { class: 'signin' }, h('h1', { id: 'signin-title' }, 'crmd console'),
    h('p', { class: 'muted' }, 'Your credential is kept in this tab\'s memory only: reloading the page signs you out.'), form));
  (route.app ? username : appId).focus();
}
