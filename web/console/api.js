// The console's only way to crmd: the record API under the prefix (and the functions route),
// called with the credential its person typed, held in this module's memory for the tab's life
// (never in storage or cookies: a reload signs out). The console can do exactly what that
// credential can do through the API, no more.
const prefix = document.querySelector('meta[name=crmd-prefix]')?.content || 'core';
const headerPrefix = `X-${prefix[0].toUpperCase()}${prefix.slice(1)}-`;
const root = new URL(`../${prefix}/`, document.baseURI);
const functionsRoot = new URL('../functions/', document.baseURI);

export const session = { appId: '', kind: '', secret: '', user: null };
// The classes opened in this tab (a user cannot list them: the schema API is the keys').
export const opened = new Set();

export class ApiError extends Error {
  constructor(status, body) {
    super(body && typeof body === 'object' && body.error ? String(body.error) : `HTTP ${status}`);
    this.status = status;
    this.code = body && typeof body === 'object' ? body.code : undefined;
  }
  // What the person reads: the API's own words, with its status and code.
  get text() { return `${this.message} (HTTP ${this.status}${this.code !== undefined ? `, code ${this.code}` : ''})`; }
}

export function headers(extra = {}) {
  const h = { [`${headerPrefix}Application-Id`]: session.appId, ...extra };
  if (session.kind === 'master') h[`${headerPrefix}Master-Key`] = session.secret;
  else if (session.kind === 'key') h[`${headerPrefix}API-Key`] = session.secret;
  else if (session.kind === 'user') h[`${headerPrefix}Session-Token`] = session.secret;
  return h;
}

async function send(url, method, body, extraHeaders) {
  const init = { method, headers: headers(extraHeaders), credentials: 'omit', cache: 'no-store' };
  if (body !== undefined) {
    init.body = body instanceof Blob ? body : JSON.stringify(body);
    if (!(body instanceof Blob)) init.headers['Content-Type'] = 'application/json';
  }
  const res = await fetch(url, init);
  const text = await res.text();
  let parsed = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed;
}

// `path` below the prefix (`classes/Accounts`), `query` an object of parameters.
export function call(method, path, { body, query, headers: extra } = {}) {
  const url = new URL(path, root);
  for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== '') url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
  return send(url, method, body, extra);
}

export function callFunction(name, body) {
  return send(new URL(`${encodeURIComponent(session.appId)}/${encodeURIComponent(name)}`, functionsRoot), 'POST', body);
}

// A file's bytes, fetched with the credential's headers, as a `blob:` address: how a PrivateFile,
// which answers only a permitted caller, is shown without a cookie. Only an address of this
// origin is fetched (the page's connect-src allows no other): the credential never leaves it.
export async function blobUrl(url) {
  if (new URL(url, document.baseURI).origin !== location.origin) throw new Error('Only files of this server are previewed');
  const res = await fetch(url, { headers: headers(), credentials: 'omit' });
  if (!res.ok) throw new ApiError(res.status, null);
  return URL.createObjectURL(await res.blob());
}

export async function signIn({ appId, kind, username, password, secret }) {
  Object.assign(session, { appId, kind: '', secret: '', user: null });
  schemas = null;
  if (kind === 'user') {
    const user = await call('POST', 'login', { body: { username, password } });
    Object.assign(session, { kind, secret: user.sessionToken, user: { id: user.objectId, username: user.username } });
  } else {
    Object.assign(session, { kind, secret });
    try {
      await call('GET', 'schemas');  // the keys' route: refuses a wrong key
    } catch (e) {
      Object.assign(session, { kind: '', secret: '' });
      throw e;
    }
  }
}

export async function signOut() {
  if (session.kind === 'user') await call('POST', 'logout').catch(() => {});
  Object.assign(session, { appId: '', kind: '', secret: '', user: null });
  schemas = null;
  opened.clear();
}

// Whether the credential is a key (the schema API and the operations are the keys').
export const isKey = () => session.kind === 'master' || session.kind === 'key';
export const encode = (s) => encodeURIComponent(s);

// The application's schemas (keys only), fetched once and again after a change made here.
let schemas = null;
export async function getSchemas(fresh = false) {
  if (!isKey()) return null;
  if (!schemas || fresh) schemas = (await call('GET', 'schemas')).results;
  return schemas;
}
export async function getSchema(className) {
  const all = await getSchemas();
  return all ? all.find((s) => s.className === className) || null : null;
}
export function forgetSchemas() { schemas = null; }
