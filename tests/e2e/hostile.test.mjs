// Hostile input (SECURITY.md: malformed requests, SQL injection, prototype-pollution analogues,
// principal confusion, internal tables, resource exhaustion). Every case must answer a clear 4xx,
// leave the data exactly as it was, and leave the server serving.
import test, { before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  setup, stopAll, request, rawRequest, masterHeaders, createRecord, listAll, assertHealthy,
} from './lib/harness.mjs';

let server;
let app;
let M;
let targetId;   // Accounts record with a client-chosen id
let hiddenId;   // record in another class, the goal of path traversal attempts

before(async () => {
  ({ server, app } = await setup());
  M = masterHeaders(app);
  for (let i = 0; i < 3; i++) await createRecord(server, app, 'Accounts', { Name: `seed${i}`, N: i });
  const t = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: { objectId: 'Target1234', Name: 'target' } });
  assert.equal(t.status, 201, t.text);
  targetId = 'Target1234';
  const h = await request(server, 'POST', '/core/classes/Hidden', { headers: M, body: { objectId: 'HiddenRec1', Name: 'hidden secret' } });
  assert.equal(h.status, 201, h.text);
  hiddenId = 'HiddenRec1';
});
after(stopAll);

const INVALID_CLASS = (name) => ({
  code: 103,
  error: `Invalid classname: ${name}, classnames can only have alphanumeric characters and _, and must start with an alpha character `,
});

async function snapshot() {
  return {
    Accounts: await listAll(server, app, 'Accounts'),
    Hidden: await listAll(server, app, 'Hidden'),
  };
}

// Runs `fn`, then asserts nothing changed in Accounts/Hidden and /health still answers 200.
async function unchanged(fn) {
  const before = await snapshot();
  await fn();
  await assertHealthy(server);
  assert.deepEqual(await snapshot(), before, 'records changed');
}

function assertClientError(res, label) {
  assert.ok(res.status >= 400 && res.status < 500, `${label}: expected 4xx, got ${res.status} ${res.text?.slice(0, 300)}`);
}

function assertInvalidJson(res, label) {
  assert.equal(res.status, 400, `${label}: ${res.text?.slice(0, 300)}`);
  assert.equal(res.body.code, 107, `${label}: ${res.text?.slice(0, 300)}`);
  assert.match(res.body.error, /^Invalid JSON: ./, label);
  assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error']);
}

const rawHead = (method, path, extra = '') =>
  `${method} ${path} HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}\r\nContent-Type: application/json${extra}`;

// ---------------------------------------------------------------------------------------------
// malformed bodies

test('SECURITY malformed: a non-JSON body answers 400 107 Invalid JSON; nothing changes', async () => {
  await unchanged(async () => {
    for (const body of ['not json', '{"Name":', '{Name:1}', "{'Name':'x'}", '{"Name":"x"} trailing', '{"Name":"x",}', '{"Name":"\u0001"}', '{"N":01}', '{"N":NaN}']) {
      const c = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body });
      assertInvalidJson(c, `POST ${body}`);
      const u = await request(server, 'PUT', `/core/classes/Accounts/${targetId}`, { headers: M, body });
      assertInvalidJson(u, `PUT ${body}`);
    }
  });
});

test('SECURITY malformed: a JSON body that is not an object answers 400 107 Request body must be a JSON object.', async () => {
  await unchanged(async () => {
    for (const body of ['[{"Name":"x"}]', '[]', '"Name"', '42', 'true', 'null']) {
      const c = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body });
      assert.equal(c.status, 400, `POST ${body}: ${c.text}`);
      assert.deepEqual(c.body, { code: 107, error: 'Request body must be a JSON object.' }, `POST ${body}`);
      const u = await request(server, 'PUT', `/core/classes/Accounts/${targetId}`, { headers: M, body });
      assert.equal(u.status, 400, `PUT ${body}: ${u.text}`);
      assert.deepEqual(u.body, { code: 107, error: 'Request body must be a JSON object.' }, `PUT ${body}`);
    }
  });
});

test('SECURITY malformed: invalid UTF-8 bytes in a body answer 400 107 Invalid JSON', async () => {
  const bad = [
    Buffer.from([0xff, 0xfe]),             // never valid
    Buffer.from([0xc0, 0xaf]),             // overlong '/'
    Buffer.from([0xed, 0xa0, 0x80]),       // UTF-16 surrogate encoded as UTF-8
    Buffer.from([0xe2, 0x82]),             // truncated sequence
    Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), // 5-byte form
  ];
  await unchanged(async () => {
    for (const bytes of bad) {
      const inValue = Buffer.concat([Buffer.from('{"Name":"a'), bytes, Buffer.from('b"}')]);
      const inKey = Buffer.concat([Buffer.from('{"Na'), bytes, Buffer.from('me":"x"}')]);
      for (const [label, body] of [['value', inValue], ['key', inKey]]) {
        const c = await rawRequest(server, rawHead('POST', '/core/classes/Accounts'), body);
        assertInvalidJson(c, `POST ${label} ${bytes.toString('hex')}`);
        const u = await rawRequest(server, rawHead('PUT', `/core/classes/Accounts/${targetId}`), body);
        assertInvalidJson(u, `PUT ${label} ${bytes.toString('hex')}`);
      }
    }
  });
});

test('SECURITY exhaustion: JSON nested 10,000 deep answers 400 107 Invalid JSON, the server keeps serving', async () => {
  const depth = 10_000;
  const arrays = `{"Deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  const objects = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const unclosed = `{"Deep":${'['.repeat(depth)}`;
  const justOver = `{"Deep":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`;
  await unchanged(async () => {
    for (const [label, body] of [['arrays', arrays], ['objects', objects], ['unclosed', unclosed], ['depth 100', justOver]]) {
      const c = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body });
      assertInvalidJson(c, `POST ${label}`);
      const u = await request(server, 'PUT', `/core/classes/Accounts/${targetId}`, { headers: M, body });
      assertInvalidJson(u, `PUT ${label}`);
    }
  });
});

test('SECURITY exhaustion: a 10 MB string field answers 413 107 Request body is larger than 8388608 bytes.', async () => {
  const big = Buffer.from(`{"Name":"${'x'.repeat(10 * 1024 * 1024)}"}`);
  const expected = { code: 107, error: 'Request body is larger than 8388608 bytes.' };
  await unchanged(async () => {
    const c = await rawRequest(server, rawHead('POST', '/core/classes/Accounts'), big, { timeoutMs: 30_000 });
    assert.equal(c.status, 413, c.text?.slice(0, 300));
    assert.deepEqual(c.body, expected);
    const u = await rawRequest(server, rawHead('PUT', `/core/classes/Accounts/${targetId}`), big, { timeoutMs: 30_000 });
    assert.equal(u.status, 413, u.text?.slice(0, 300));
    assert.deepEqual(u.body, expected);

    // The same body sent chunked, without a Content-Length to judge it by up front.
    const chunks = [];
    const step = 1024 * 1024;
    for (let off = 0; off < big.length; off += step) {
      const part = big.subarray(off, Math.min(off + step, big.length));
      chunks.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
    }
    chunks.push(Buffer.from('0\r\n\r\n'));
    const ch = await rawRequest(server, rawHead('POST', '/core/classes/Accounts', '\r\nTransfer-Encoding: chunked'),
      Buffer.concat(chunks), { timeoutMs: 30_000 });
    assert.equal(ch.status, 413, ch.text?.slice(0, 300));
    assert.deepEqual(ch.body, expected);
  });
});

test('SECURITY exhaustion: an ordinary client (fetch) sending 10 MB receives the 413, not a reset (RFC 9112 §9.6 lingering close)', async () => {
  const big = `{"Name":"${'x'.repeat(10 * 1024 * 1024)}"}`;
  const outcomes = [];
  await unchanged(async () => {
    for (let i = 0; i < 3; i++) {
      try {
        const r = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: big, timeoutMs: 30_000 });
        outcomes.push(r.status === 413 && r.body.code === 107 ? 'ok' : `${r.status} ${r.text.slice(0, 100)}`);
      } catch (err) {
        outcomes.push(`request failed: ${err.cause?.code ?? err.message}`);
      }
    }
  });
  assert.deepEqual(outcomes, ['ok', 'ok', 'ok']);
});

test('§8 a 7 MB string field, under the 8 MiB body limit, is stored whole', async () => {
  const value = 'y'.repeat(7 * 1024 * 1024);
  const c = await request(server, 'POST', '/core/classes/BigValues', { headers: M, body: { Text: value }, timeoutMs: 30_000 });
  assert.equal(c.status, 201, c.text.slice(0, 300));
  const g = await request(server, 'GET', `/core/classes/BigValues/${c.body.objectId}`, { headers: M, timeoutMs: 30_000 });
  assert.equal(g.status, 200);
  assert.equal(g.body.Text.length, value.length);
  assert.equal(g.body.Text, value);
  await assertHealthy(server);
});

test('SECURITY exhaustion: a header block over 16 KiB answers 431, the server keeps serving', async () => {
  await unchanged(async () => {
    const one = await rawRequest(server, rawHead('GET', '/core/classes/Accounts', `\r\nX-Filler: ${'a'.repeat(20_000)}`));
    assert.equal(one.status, 431, one.text);
    let many = '';
    for (let i = 0; i < 1000; i++) many += `\r\nX-Filler-${i}: ${'b'.repeat(20)}`;
    const lots = await rawRequest(server, rawHead('GET', '/core/classes/Accounts', many));
    assert.equal(lots.status, 431, lots.text);
    const huge = await rawRequest(server, rawHead('POST', '/core/classes/Accounts', `\r\nX-Filler: ${'c'.repeat(200_000)}`), '{"Name":"x"}');
    assert.equal(huge.status, 431, huge.text);
  });
});

test('SECURITY malformed: garbage request lines and unencoded characters in the path answer 4xx', async () => {
  await unchanged(async () => {
    const heads = [
      `GET /core/classes/Acc ounts HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}`,
      `GET /core/classes/Accounts/<script>alert(1)</script> HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}`,
      `GET /core/classes/Accounts/%zz HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}`,
      `GET /core/classes/Accounts/"'\`{}| HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}`,
      `DELETE /core/classes/Accounts/${targetId}' OR '1'='1 HTTP/1.1\r\nX-Core-Application-Id: ${app.appId}\r\nX-Core-Master-Key: ${app.masterKey}`,
      'HELLO',
      'GET',
      `GET /core/classes/Accounts HTTP/9.9\r\nX-Core-Application-Id: ${app.appId}`,
    ];
    for (const head of heads) {
      let res;
      try {
        res = await rawRequest(server, head, Buffer.alloc(0), { timeoutMs: 5000 });
      } catch (err) {
        // Closing the connection on garbage without an answer is acceptable; serving it is not.
        continue;
      }
      assertClientError(res, JSON.stringify(head.split('\r\n')[0]));
      assert.equal(res.text.includes('hidden secret'), false);
    }
    // Raw non-ASCII bytes in the path.
    const nonAscii = Buffer.concat([Buffer.from('GET /core/classes/Accounts/'), Buffer.from([0xc3, 0xa9, 0xff]), Buffer.from(' HTTP/1.1')]);
    let res;
    try { res = await rawRequest(server, nonAscii.toString('latin1'), Buffer.alloc(0), { timeoutMs: 5000 }); } catch { res = undefined; }
    if (res) assertClientError(res, 'non-ASCII path');
  });
});

test('SECURITY malformed: a JSON string with an escaped lone surrogate is refused or stored, never a 5xx', async () => {
  const c = await request(server, 'POST', '/core/classes/Surrogates', { headers: M, body: '{"Name":"a\\ud800b"}' });
  assert.ok(c.status === 201 || c.status === 400, `${c.status} ${c.text}`);
  if (c.status === 400) assert.equal(typeof c.body.code, 'number');
  if (c.status === 201) {
    const g = await request(server, 'GET', `/core/classes/Surrogates/${c.body.objectId}`, { headers: M });
    assert.equal(g.status, 200);
    assert.notEqual(g.json, undefined, 'the record must come back as JSON');
  }
  await assertHealthy(server);
});

// ---------------------------------------------------------------------------------------------
// field names, nested keys (prototype-pollution analogues, SQL in identifiers)

test('SECURITY injection: field names __proto__, a.b, x"; DROP TABLE Accounts; -- answer 400 105', async () => {
  const names = ['__proto__', 'a.b', 'x"; DROP TABLE Accounts; --', "Name' OR '1'='1", 'Name`', 'N[0]', '__type', '__op', '_rperm', '_wperm', '_hashed_password', '$where', 'Name\u0000x'];
  await unchanged(async () => {
    for (const name of names) {
      const body = `{${JSON.stringify(name)}:"v"}`; // a string: JSON.stringify({__proto__:..}) would drop the key
      const expected = { code: 105, error: `Invalid field name: ${name}.` };
      const c = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body });
      assert.equal(c.status, 400, `POST ${JSON.stringify(name)}: ${c.text}`);
      assert.deepEqual(c.body, expected, `POST ${JSON.stringify(name)}`);
      const u = await request(server, 'PUT', `/core/classes/Accounts/${targetId}`, { headers: M, body });
      assert.equal(u.status, 400, `PUT ${JSON.stringify(name)}: ${u.text}`);
      assert.deepEqual(u.body, expected, `PUT ${JSON.stringify(name)}`);
    }
    // __proto__ next to a valid field must not slip through either.
    const mixed = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: '{"Name":"ok","__proto__":{"isAdmin":true}}' });
    assert.equal(mixed.status, 400, mixed.text);
    assert.deepEqual(mixed.body, { code: 105, error: 'Invalid field name: __proto__.' });
  });
});

test('SECURITY injection: $-keys and dotted keys inside Object and Array values answer 400 121', async () => {
  const expected = { code: 121, error: "Nested keys should not contain the '$' or '.' characters" };
  await unchanged(async () => {
    for (const value of [{ $where: '1' }, { 'a.b': 1 }, { ok: { $gt: 1 } }, [{ 'x.y': 1 }], { list: [{ $ne: null }] }]) {
      const c = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: { Meta: value } });
      assert.equal(c.status, 400, `${JSON.stringify(value)}: ${c.text}`);
      assert.deepEqual(c.body, expected, JSON.stringify(value));
      const u = await request(server, 'PUT', `/core/classes/Accounts/${targetId}`, { headers: M, body: { Meta: value } });
      assert.equal(u.status, 400, `${JSON.stringify(value)}: ${u.text}`);
      assert.deepEqual(u.body, expected, JSON.stringify(value));
    }
  });
});

test('SECURITY injection: SQL and escape characters in values are stored and returned verbatim', async () => {
  const corpus = [
    "'", "''", '\\', ';', '--', "'; DROP TABLE Accounts; --", '" OR 1=1 --', '\\Q.*\\E', '%', '_',
    '\u0000', 'line\nbreak', '\u202e\u00e9\u{1F4A5}', "Robert'); DROP TABLE Students;--", '$1', '?', ':name',
  ];
  for (const value of corpus) {
    const c = await request(server, 'POST', '/core/classes/SqlValues', { headers: M, body: { Name: value, Meta: { [`k${value.length}`]: value }, Tags: [value] } });
    assert.equal(c.status, 201, `${JSON.stringify(value)}: ${c.text}`);
    const g = await request(server, 'GET', `/core/classes/SqlValues/${c.body.objectId}`, { headers: M });
    assert.equal(g.status, 200, g.text);
    assert.equal(g.body.Name, value, JSON.stringify(value));
    assert.deepEqual(g.body.Tags, [value]);
  }
  assert.equal((await listAll(server, app, 'SqlValues')).length, corpus.length);
  assert.equal((await listAll(server, app, 'Accounts')).length, 4);
});

test('SECURITY injection: order by an invalid field name answers 400 105 Invalid field name (Parse\'s DatabaseController.find)', async () => {
  await unchanged(async () => {
    for (const field of ['Name; DROP TABLE Accounts; --', '(SELECT 1)', 'N" DESC']) {
      for (const order of [field, `-${field}`, `Name,${field}`]) {
        const r = await request(server, 'GET', `/core/classes/Accounts?order=${encodeURIComponent(order)}`, { headers: M });
        assert.equal(r.status, 400, `order=${order}: ${r.text.slice(0, 200)}`);
        assert.deepEqual(r.body, { code: 105, error: `Invalid field name: ${field}.` }, `order=${order}`);
      }
    }
  });
});

test('SECURITY injection: SQL in order, include, limit and skip answers a 4xx with a code or is ignored, never an SQL error', async () => {
  await unchanged(async () => {
    for (const q of [
      `order=${encodeURIComponent('-Name,(SELECT 1)')}`,
      `order=${encodeURIComponent('N" DESC; --')}`,
      `include=${encodeURIComponent('Owner; DROP TABLE Accounts')}`,
      `include=${encodeURIComponent("Owner' OR '1'='1")}`,
      `limit=${encodeURIComponent('1; DROP TABLE Accounts')}`,
      `skip=${encodeURIComponent('0 OR 1=1')}`,
    ]) {
      const r = await request(server, 'GET', `/core/classes/Accounts?${q}`, { headers: M });
      assert.ok(r.status === 200 || (r.status === 400 && typeof r.body.code === 'number'), `${q}: ${r.status} ${r.text}`);
      assert.equal(/sqlite|syntax error|SQL/i.test(r.text), false, `${q}: ${r.text}`);
      if (r.status === 200) assert.ok(Array.isArray(r.body.results));
    }
  });
});

// ---------------------------------------------------------------------------------------------
// class names (SQL in identifiers, internal tables)

test('SECURITY internal tables: class names with SQL in them and _Join:x:y answer 400 103', async () => {
  const names = ['Accounts; DROP TABLE x', '_Join:x:y', '_Join:users:_Role', 'Accounts"--', "Accounts'", 'Acc-ounts', '1Accounts', '_Secret', '_Hooks', '_SCHEMA', 'Accounts%00'];
  await unchanged(async () => {
    for (const name of names) {
      const path = `/core/classes/${encodeURIComponent(name)}`;
      const expected = INVALID_CLASS(name);
      const c = await request(server, 'POST', path, { headers: M, body: { Name: 'x' } });
      assert.equal(c.status, 400, `POST ${name}: ${c.text}`);
      assert.deepEqual(c.body, expected, `POST ${name}`);
      const l = await request(server, 'GET', path, { headers: M });
      assert.equal(l.status, 400, `GET list ${name}: ${l.text}`);
      assert.deepEqual(l.body, expected, `GET list ${name}`);
      const g = await request(server, 'GET', `${path}/${targetId}`, { headers: M });
      assert.equal(g.status, 400, `GET ${name}: ${g.text}`);
      assert.deepEqual(g.body, expected, `GET ${name}`);
      const u = await request(server, 'PUT', `${path}/${targetId}`, { headers: M, body: { Name: 'x' } });
      assert.equal(u.status, 400, `PUT ${name}: ${u.text}`);
      assert.deepEqual(u.body, expected, `PUT ${name}`);
      const d = await request(server, 'DELETE', `${path}/${targetId}`, { headers: M });
      assert.equal(d.status, 400, `DELETE ${name}: ${d.text}`);
      assert.deepEqual(d.body, expected, `DELETE ${name}`);
    }
    // Raw (unencoded) `:` is legal in a path segment and must be refused the same way.
    const raw = await rawRequest(server, rawHead('GET', '/core/classes/_Join:x:y'));
    assert.equal(raw.status, 400, raw.text);
    assert.deepEqual(raw.body, INVALID_CLASS('_Join:x:y'));
  });
});

test('SECURITY internal tables: class names that collide with the store\'s own tables never expose them', async () => {
  await unchanged(async () => {
    for (const name of ['sqlite_master', 'sqlite_schema', 'sqlite_sequence', 'sqlite_stat1']) {
      const l = await request(server, 'GET', `/core/classes/${name}`, { headers: M });
      if (l.status === 200) {
        assert.deepEqual(l.body, { results: [] }, `${name} lists store internals: ${l.text.slice(0, 300)}`);
      } else {
        assertClientError(l, name);
        assert.equal(typeof l.body.code, 'number', l.text);
      }
      const c = await request(server, 'POST', `/core/classes/${name}`, { headers: M, body: { Name: 'x' } });
      if (c.status === 201) {
        const back = await request(server, 'GET', `/core/classes/${name}`, { headers: M });
        assert.equal(back.status, 200, back.text);
        assert.deepEqual(back.body.results.map((r) => r.objectId), [c.body.objectId], `${name}: ${back.text.slice(0, 300)}`);
      } else {
        assertClientError(c, `POST ${name}`);
        assert.equal(typeof c.body.code, 'number', c.text);
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// objectId in the path and in bodies

test('SECURITY traversal: an objectId path segment with / or .. (encoded) answers 4xx, never another record', async () => {
  const segments = [
    // (`..` and `%2E%2E` alone are dot segments fetch itself resolves: they are sent raw in the next test.)
    `x%2F..%2F${targetId}`, `..%2FHidden%2F${hiddenId}`, `${targetId}%2F`, `%2F${targetId}`, `%2E%2E%2F${targetId}`,
    `${targetId}%00`, `${targetId}%20`, encodeURIComponent(`${targetId}' OR '1'='1`), encodeURIComponent("' OR 1=1 --"),
    `%2E%2E%2FHidden%2F${hiddenId}`, `..%5CHidden%5C${hiddenId}`, '*', encodeURIComponent('role:Admin'),
    targetId.toLowerCase(),
  ];
  await unchanged(async () => {
    for (const seg of segments) {
      const g = await request(server, 'GET', `/core/classes/Accounts/${seg}`, { headers: M });
      assertClientError(g, `GET ${seg}`);
      assert.equal(typeof g.body.code, 'number', `GET ${seg}: ${g.text}`);
      assert.equal(g.body.objectId, undefined, `GET ${seg} returned a record: ${g.text}`);
      assert.equal(g.text.includes('hidden secret') || g.text.includes('"target"'), false, `GET ${seg}: ${g.text}`);
      const u = await request(server, 'PUT', `/core/classes/Accounts/${seg}`, { headers: M, body: { Name: 'pwned' } });
      assertClientError(u, `PUT ${seg}`);
      assert.equal(typeof u.body.code, 'number', `PUT ${seg}: ${u.text}`);
      const d = await request(server, 'DELETE', `/core/classes/Accounts/${seg}`, { headers: M });
      assertClientError(d, `DELETE ${seg}`);
      assert.equal(typeof d.body.code, 'number', `DELETE ${seg}: ${d.text}`);
    }
  });
});

test('SECURITY traversal: raw / and .. in the path answer 4xx, never another record', async () => {
  const paths = [
    `/core/classes/Accounts/../Hidden/${hiddenId}`,
    `/core/classes/Accounts/x/../${targetId}`,
    `/core/classes/Accounts/..`,
    `/core/classes/Accounts/.`,
    `/core/classes/Hidden/${hiddenId}/..`,
    `/core/classes/Accounts/./../Hidden/${hiddenId}`,
    `/core/classes/Accounts/${targetId}/x`,
    `/core/classes/Accounts//${targetId}`,
    `/core/./classes/Hidden/${hiddenId}`,
    `/core/classes/Accounts/..%2F..%2FHidden/${hiddenId}`,
    `/core/classes/Accounts/%2E%2E`,
    `/core/classes/Accounts/%2e%2e/Hidden/${hiddenId}`,
    `/core/classes/Accounts/%2E%2E%2FHidden%2F${hiddenId}`,
    `/x/../core/classes/Hidden/${hiddenId}`,
  ];
  await unchanged(async () => {
    for (const p of paths) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const body = method === 'PUT' ? '{"Name":"pwned"}' : '';
        const r = await rawRequest(server, rawHead(method, p), body);
        assertClientError(r, `${method} ${p}`);
        assert.equal(r.text.includes('hidden secret'), false, `${method} ${p}: ${r.text}`);
        assert.equal(r.text.includes('"target"'), false, `${method} ${p}: ${r.text}`);
        assert.equal(r.json?.objectId, undefined, `${method} ${p}: ${r.text}`);
        assert.equal(r.json?.results, undefined, `${method} ${p} listed a class: ${r.text.slice(0, 200)}`);
      }
    }
  });
});

test('SECURITY principal confusion: objectId role:Admin (and other non-alphanumeric ids) with the master key answer 400 105', async () => {
  const ids = ['role:Admin', '*', 'a/b', '..', '../Hidden', "x' OR '1'='1", 'abc def', 'Ünicode12', 'id\u0000x', 'a.b', '-abc'];
  await unchanged(async () => {
    for (const id of ids) {
      const c = await request(server, 'POST', '/core/classes/Accounts', { headers: M, body: { objectId: id, Name: 'impostor' } });
      assert.equal(c.status, 400, `${JSON.stringify(id)}: ${c.text}`);
      assert.deepEqual(c.body, { code: 105, error: `Invalid objectId: ${id}.` }, JSON.stringify(id));
    }
  });
});

test('SECURITY principal confusion: a _User or _Role with objectId role:Admin is refused with 400 105 (GHSA-8xq9-g7ch-35hg)', async () => {
  await unchanged(async () => {
    const bodies = {
      _User: { objectId: 'role:Admin', username: 'impostor', password: 'Passw0rdX1' },
      _Role: { objectId: 'role:Admin', name: 'Admin' },
    };
    for (const [cls, body] of Object.entries(bodies)) {
      const c = await request(server, 'POST', `/core/classes/${cls}`, { headers: M, body });
      assert.equal(c.status, 400, `${cls}: ${c.text}`);
      assert.deepEqual(c.body, { code: 105, error: 'Invalid objectId: role:Admin.' }, cls);
    }
  });
});

test('SECURITY: the server still serves after every hostile case', async () => {
  await assertHealthy(server);
  const all = await listAll(server, app, 'Accounts');
  assert.equal(all.length, 4);
  const t = await request(server, 'GET', `/core/classes/Accounts/${targetId}`, { headers: M });
  assert.equal(t.status, 200, t.text);
  assert.equal(t.body.Name, 'target');
  const h = await request(server, 'GET', `/core/classes/Hidden/${hiddenId}`, { headers: M });
  assert.equal(h.status, 200, h.text);
  assert.equal(h.body.Name, 'hidden secret');
});

// Runs last: stops the server and reads its log.
test('SECURITY: refused requests are access-logged like any other; no key in the log; SIGTERM exits 0', async () => {
  assert.deepEqual(await server.stop(), { code: 0, signal: null });
  const lines = server.logLines();
  for (const l of lines) assert.equal(l.__unparsed, undefined, `not a JSON log line: ${String(l.__unparsed).slice(0, 200)}`);
  const requests = lines.filter((l) => l.msg === 'request');
  const statuses = new Set(requests.map((l) => l.status));
  const missing = [400, 404, 413, 431].filter((status) => !statuses.has(status));
  assert.deepEqual(missing, [], `statuses answered but never access-logged: ${missing.join(', ')}`);
  assert.equal(server.stderr().includes(app.masterKey), false, 'the master key appears in the log');
});
