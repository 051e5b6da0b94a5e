// Parse.File through the stock SDK (§4.8, docs/FILES.md): save from base64 and from bytes with the
// application id alone, url(), download rights of the upload address, type judged by content
// (403), attach to File (public static copy) and PrivateFile fields, getData, destroy. Both gate settings.
import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Parse, useApp, MASTER, rejectsWith, uniq, request, PROFILES, compatSuite } from './lib/compat.mjs';

// The file's server and its two applications (one per profile), made before the first test.
const ctx = compatSuite();
const { apps } = ctx;

const b64 = (s) => Buffer.from(s).toString('base64');
const NAME = /^[0-9a-f]{32}_/;

async function download(url, headers = {}) {
  const r = await fetch(url, { headers, redirect: 'manual', signal: AbortSignal.timeout(20_000) });
  return { status: r.status, text: await r.text(), headers: r.headers };
}

for (const profile of PROFILES) {
  describe(`${profile} gates`, () => {
    const keyHeaders = () => ({ 'X-Parse-Application-Id': apps[profile].appId, 'X-Parse-Master-Key': apps[profile].masterKey });

    test('§4.8 save with the application id alone: name gets a prefix, url() is the upload address; keys download it, anonymous goes to the sign-in gate', async () => {
      await useApp(ctx.server, apps[profile]);
      const file = new Parse.File('quote (draft).txt', { base64: b64('total: 1200\n') }, 'text/plain');
      await file.save();
      assert.match(file.name(), NAME);
      assert.ok(file.name().endsWith('_quote (draft).txt'));
      assert.equal(decodeURIComponent(file.url()), `${ctx.server.base}/parse/files/${apps[profile].appId}/${file.name()}`);
      const byKey = await download(file.url(), keyHeaders());
      assert.equal(byKey.status, 200);
      assert.equal(byKey.text, 'total: 1200\n');
      const anonymous = await download(file.url());
      assert.equal(anonymous.status, 302);
      assert.match(anonymous.headers.get('location'), new RegExp(`/parse/apps/${apps[profile].appId}/signin\\?return=`));
    });

    test('§4.8 a file from an array of bytes', async () => {
      await useApp(ctx.server, apps[profile]);
      const file = new Parse.File('bytes.txt', [...Buffer.from('hi there')]);
      await file.save();
      assert.equal((await download(file.url(), keyHeaders())).text, 'hi there');
    });

    test('§4.8 content that does not match the name answers 403 {"error":"Invalid file type"} (no code, §7)', async () => {
      await useApp(ctx.server, apps[profile]);
      const fake = new Parse.File('photo.png', { base64: b64('this is not a picture') });
      await rejectsWith(fake.save(), undefined, 'Invalid file type');
      const exe = new Parse.File('tool.exe', { base64: b64('MZ\x90\x00\x03\x00\x00\x00') });
      await rejectsWith(exe.save(), undefined, 'Invalid file type');
    });

    test('§4.8 a PNG is judged by its bytes, whatever type the SDK names', async () => {
      await useApp(ctx.server, apps[profile]);
      const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' +
        '1f15c4890000000d49444154789c6300010000050001' + '0d0a2db40000000049454e44ae426082', 'hex');
      const file = new Parse.File('dot.png', { base64: png.toString('base64') }, 'text/plain');
      await file.save();
      const r = await fetch(file.url(), { headers: keyHeaders(), signal: AbortSignal.timeout(20_000) });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), 'image/png');
      assert.deepEqual(Buffer.from(await r.arrayBuffer()), png);
    });

    test('§4.8 attached to a File field: the record holds the public static address, open to anyone; getData reads it', async () => {
      await useApp(ctx.server, apps[profile]);
      const file = new Parse.File('brochure.txt', { base64: b64('our products') });
      await file.save();
      const product = new Parse.Object('Products', { Name: uniq('p'), PreviewImage: file });
      await product.save(null, MASTER);
      const back = await new Parse.Query('Products').get(product.id, MASTER);
      const stored = back.get('PreviewImage');
      assert.ok(stored instanceof Parse.File);
      assert.equal(stored.name(), file.name());
      assert.ok(decodeURIComponent(stored.url()).endsWith(`/${apps[profile].appId}/${file.name()}`), stored.url());
      const open = await download(stored.url());
      assert.equal(open.status, 200);
      assert.equal(open.text, 'our products');
      assert.equal(open.headers.get('cache-control'), 'public, max-age=86400');
      assert.equal(await stored.getData(), b64('our products'));
    });

    test('§4.8 attached to a PrivateFile field: the record-scoped address, for keys only; anonymous goes to the gate', async () => {
      await useApp(ctx.server, apps[profile]);
      const cls = uniq('Quotes');
      // The SDK's Parse.Schema knows no PrivateFile type (a crmd type, §2.2): the field is declared over REST.
      const made = await request(ctx.server, 'POST', `/parse/schemas/${cls}`, {
        headers: keyHeaders(), body: { className: cls, fields: { Name: { type: 'String' }, SignedPdf: { type: 'PrivateFile' } } },
      });
      assert.equal(made.status, 200, made.text);
      const file = new Parse.File('signed.txt', { base64: b64('signed by me') });
      await file.save();
      const quote = new Parse.Object(cls, { Name: 'q', SignedPdf: file });
      await quote.save(null, MASTER);
      const back = await new Parse.Query(cls).get(quote.id, MASTER);
      const url = back.get('SignedPdf').url();
      assert.ok(decodeURIComponent(url).endsWith(`/parse/files/${apps[profile].appId}/${file.name()}/${cls}/${quote.id}/SignedPdf`), url);
      assert.equal((await download(url, keyHeaders())).text, 'signed by me');
      assert.equal((await download(url)).status, 302);
    });

    test('§4.8 destroy needs a key: the application id alone gets 403 (the file stays); with the master key it goes (404 File not found)', async () => {
      await useApp(ctx.server, apps[profile]);
      const file = new Parse.File('old.txt', { base64: b64('old') });
      await file.save();
      const url = file.url();
      await rejectsWith(file.destroy({ useMasterKey: false }), undefined, 'unauthorized: master key is required');
      assert.equal((await download(url, keyHeaders())).status, 200);
      await file.destroy();
      const gone = await download(url, keyHeaders());
      assert.equal(gone.status, 404);
      assert.deepEqual(JSON.parse(gone.text), { error: 'File not found' });
    });
  });
}
