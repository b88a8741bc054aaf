// --ui-assets DIR: a web app's build (the Genkit Dev UI, as `genkit ui:start`
// leaves it in ~/.genkit/assets/<version>/ui/browser) served at / by the
// manager, beside the API; the dashboard stays at /ui/index.html.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { after, afterEach, test } from 'node:test';
import { ACTOR_HOST_BIN, cleanup, startManager, tempDir } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

test('the app is served at / with its files, its routes and the API beside it', async () => {
  const dir = tempDir('ah-ui-');
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>dev ui</title>');
  fs.writeFileSync(path.join(dir, 'main.js'), 'console.log("dev ui")');
  const manager = await startManager(['--ui-assets', dir]);
  const index = await manager.get('/');
  assert.equal(index.status, 200);
  assert.match(index.headers['content-type'], /text\/html/);
  assert.match(index.text, /dev ui/);
  const js = await manager.get('/main.js');
  assert.equal(js.status, 200);
  assert.match(js.headers['content-type'], /text\/javascript/);
  assert.equal(js.headers['x-content-type-options'], 'nosniff');
  const again = await manager.get('/main.js', { headers: { 'if-none-match': js.headers.etag } });
  assert.equal(again.status, 304);
  // The app's own routes are its page; a missing file is not.
  assert.match((await manager.get('/flows/echo')).text, /dev ui/);
  assert.equal((await manager.get('/missing.js')).status, 404);
  // The API and the dashboard are still there.
  assert.equal((await manager.get('/api/__health')).status, 200);
  assert.deepEqual((await manager.get('/api/runtimes')).json, []);
  const dash = await manager.get('/ui/index.html');
  assert.equal(dash.status, 200);
  assert.match(dash.text, /ui\/app\.js/);
});

test('a folder that cannot be served stops the start with the reason', async () => {
  const dir = tempDir('ah-ui-empty-');
  const r = await new Promise((resolve) =>
    execFile(ACTOR_HOST_BIN, ['--role', 'manager', '--port', '0', '--http-port', '0', '--worker-port', '0', '--trace-store', 'none', '--ui-assets', dir],
      { timeout: 20000 }, (err, stdout, stderr) => resolve({ code: err ? err.code : 0, out: stdout + stderr })));
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /ui assets: .* has no index\.html/);
});
