// §4.7 password reset over SMTP: with --smtp-url the reset mail goes to the SMTP server (a
// minimal fake one on 127.0.0.1 here), not to the outbox folder, and its link works.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { makeDataDir, createApp, startServer, request, masterHeaders, appHeaders, stopAll, pollUntil, HOST } from './lib/harness.mjs';

// Speaks just enough SMTP for one client at a time; records each message's envelope and data.
function fakeSmtp() {
  const messages = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let inData = false;
    let envelope = { from: '', to: [] };
    socket.setEncoding('utf8');
    socket.write('220 fake ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          messages.push({ ...envelope, data: buffer.slice(0, end) });
          buffer = buffer.slice(end + 5);
          inData = false;
          envelope = { from: '', to: [] };
          socket.write('250 queued\r\n');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 fake\r\n');
        else if (verb === 'MAIL') { envelope.from = line; socket.write('250 ok\r\n'); }
        else if (verb === 'RCPT') { envelope.to.push(line); socket.write('250 ok\r\n'); }
        else if (verb === 'DATA') { inData = true; socket.write('354 go on\r\n'); }
        else if (verb === 'QUIT') { socket.end('221 bye\r\n'); return; }
        else socket.write('250 ok\r\n');
      }
    });
    socket.on('error', () => {});
  });
  return new Promise((resolve) => server.listen(0, HOST, () => resolve({ server, messages, port: server.address().port })));
}

let smtp;
after(async () => {
  await stopAll();
  if (smtp) smtp.server.close();
});

test('§4.7 with --smtp-url the reset mail is delivered over SMTP and its link resets the password', async () => {
  smtp = await fakeSmtp();
  const dataDir = makeDataDir();
  const app = createApp(dataDir);
  const server = await startServer(dataDir, { extraArgs: ['--smtp-url', `smtp://${HOST}:${smtp.port}`, '--mail-from', 'crm@example.test'] });
  const signUp = await request(server, 'POST', '/core/users', {
    headers: masterHeaders(app), body: { username: 'mailer', password: 'Original1x', email: 'mailer@example.test' },
  });
  assert.equal(signUp.status, 201, signUp.text);

  const asked = await request(server, 'POST', '/core/requestPasswordReset', { headers: appHeaders(app), body: { email: 'mailer@example.test' } });
  assert.deepEqual(asked.body, { message: 'Your request will be processed shortly' });
  const delivered = await pollUntil(() => ({ done: smtp.messages.length === 1 }), { timeoutMs: 10_000, intervalMs: 50 });
  assert.ok(delivered.ok, 'the mail reached the SMTP server');
  const [message] = smtp.messages;
  assert.match(message.from, /<crm@example\.test>/);
  assert.match(message.to[0], /<mailer@example\.test>/);
  assert.match(message.data, /^To: mailer@example\.test\r$/m);
  assert.equal(fs.existsSync(path.join(dataDir, 'apps', app.appId, 'outbox')), false, 'no outbox when SMTP is set');

  const link = message.data.match(/http:\/\/\S+reset-password\?token=([0-9a-f]+)/);
  assert.ok(link, message.data);
  const url = new URL(link[0]);
  const posted = await fetch(link[0].split('?')[0], {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `token=${url.searchParams.get('token')}&new_password=Changed2y`,
  });
  assert.equal(posted.status, 200, await posted.text());
  const login = await request(server, 'POST', '/core/login', { headers: appHeaders(app), body: { username: 'mailer', password: 'Changed2y' } });
  assert.equal(login.status, 200, login.text);

  // Unknown addresses send nothing, and answer the same.
  const unknown = await request(server, 'POST', '/core/requestPasswordReset', { headers: appHeaders(app), body: { email: 'nobody@example.test' } });
  assert.deepEqual(unknown.body, asked.body);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(smtp.messages.length, 1);
});
