// Parse Server for bench/run: ParseServer mounted on /parse of an express app, on PostgreSQL,
// default settings apart from what it cannot start without. Loaded from bench/.work/node_modules.
// Environment: BENCH_WORK, PARSE_PORT, PARSE_DATABASE_URI, PARSE_APP_ID, PARSE_MASTER_KEY, PARSE_REST_KEY.
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const require = createRequire(path.join(env('BENCH_WORK'), 'package.json'));
const express = require('express');
const { ParseServer } = require('parse-server');

const port = Number(env('PARSE_PORT'));
const server = new ParseServer({
  databaseURI: env('PARSE_DATABASE_URI'),
  appId: env('PARSE_APP_ID'),
  masterKey: env('PARSE_MASTER_KEY'),
  restAPIKey: env('PARSE_REST_KEY'),
  serverURL: `http://127.0.0.1:${port}/parse`,
});
await server.start();
const app = express();
app.use('/parse', server.app);
const http = app.listen(port, '127.0.0.1', () => console.log(`parse-server listening on 127.0.0.1:${port}`));

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  http.close();
  try { await server.handleShutdown(); } catch { /* exiting anyway */ }
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
