// Admission: who may use the manager's listeners, over real sockets. Origin
// and Host rules on every port (a web page must not drive the manager through
// the user's browser), the token (callers by header, runtimes and workers by
// header or ?token=, children of the manager through the URL we inject), no
// takeover of a live runtime id (but a runtime whose link died gets its id
// back at once), and peer text that cannot reach headers or forge log lines.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, test } from 'node:test';
import {
  ACTOR_HOST_BIN,
  FakeRuntime,
  RUNTIME_SCRIPT,
  RpcSocket,
  cleanup,
  httpRequest,
  pollUntil,
  startManager,
} from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-admission-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const TOKEN = 'interop-token-0123456789abcdef0123456789';
const tokenFile = path.join(tmp, 'token');
fs.writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
const bearer = { authorization: `Bearer ${TOKEN}` };
const genkitCommand = [process.execPath, '--preserve-symlinks-main', RUNTIME_SCRIPT];

/** Sends an upgrade request with `headers`; resolves the status (101 = accepted) and body. */
function upgrade(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    const timer = setTimeout(() => (req.destroy(), reject(new Error(`upgrade ${url}: no answer`))), 10000);
    req.once('upgrade', (res, socket) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: res.statusCode, text: '' });
    });
    req.once('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.once('end', () => (clearTimeout(timer), resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() })));
    });
    req.once('error', (e) => (clearTimeout(timer), reject(e)));
    req.end();
  });
}

function ports(manager) {
  return {
    api: manager.apiUrl,
    reflection: `http://127.0.0.1:${manager.reflectionPort}`,
    worker: `http://127.0.0.1:${manager.workerPort}`,
  };
}

function runCli(args, env = {}) {
  return new Promise((resolve) => {
    execFile(ACTOR_HOST_BIN, args, { env: { ...process.env, ...env }, timeout: 20000 }, (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr })
    );
  });
}

test('an Origin with a 28,000-digit port is refused on every port, and the manager lives', async () => {
  const manager = await startManager();
  const origin = `http://localhost:${'1'.repeat(28000)}`;
  for (const [name, base] of Object.entries(ports(manager))) {
    const res = await httpRequest(`${base}/api/runtimes`, { headers: { origin } });
    assert.equal(res.status, 403, `${name}: ${res.text}`);
    assert.match(res.text, /Origin .* may not use this server/);
    const up = await upgrade(`${base}/`, { origin });
    assert.equal(up.status, 403, `${name} upgrade`);
  }
  await manager.assertHealthy();
});

test('CSRF: a cross-site text/plain POST is refused, a local JSON POST runs', async () => {
  const manager = await startManager(['--demo']);
  await manager.waitForRuntime('demo');
  const body = JSON.stringify({ key: '/flow/echo', input: 'hi' });
  const evil = await httpRequest(`${manager.apiUrl}/api/runAction`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'text/plain', origin: 'http://evil.example' },
  });
  assert.equal(evil.status, 403, evil.text);
  assert.equal(evil.headers['access-control-allow-origin'], undefined);
  // Same-origin text/plain (no preflight either way): 415.
  const plain = await httpRequest(`${manager.apiUrl}/api/runAction`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
  assert.equal(plain.status, 415, plain.text);
  assert.match(plain.text, /application\/json/);
  const ok = await httpRequest(`${manager.apiUrl}/api/runAction`, {
    method: 'POST',
    body,
    headers: { origin: 'http://localhost:4000' },
  });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.headers['access-control-allow-origin'], 'http://localhost:4000');
  // Preflight: only for admitted origins.
  const pre = await httpRequest(`${manager.apiUrl}/api/runAction`, { method: 'OPTIONS', headers: { origin: 'http://evil.example' } });
  assert.equal(pre.status, 403);
  const preOk = await httpRequest(`${manager.apiUrl}/api/runAction`, { method: 'OPTIONS', headers: { origin: 'http://127.0.0.1:3000' } });
  assert.equal(preOk.status, 204);
  assert.match(preOk.headers['access-control-allow-headers'], /Authorization/);
  await manager.assertHealthy();
});

test('cross-site WebSockets are refused on /api/ws, the reflection and the worker ports', async () => {
  const manager = await startManager();
  const urls = [manager.apiWsUrl, manager.reflectionUrl, manager.workerUrl];
  for (const url of urls) {
    await assert.rejects(RpcSocket.connect(url, url, { origin: 'http://evil.example' }), (e) => e.status === 403);
    const local = await RpcSocket.connect(url, url, { origin: 'http://localhost:4000' });
    await local.close();
  }
  await manager.assertHealthy();
});

test('DNS rebinding: Host evil.example is refused; loopback names are served', async () => {
  const manager = await startManager();
  const res = await httpRequest(`${manager.apiUrl}/api/runtimes`, { headers: { host: 'evil.example' } });
  assert.equal(res.status, 403, res.text);
  assert.match(res.text, /allowed_hosts/);
  for (const host of [`localhost:${manager.apiPort}`, `127.0.0.1:${manager.apiPort}`]) {
    assert.equal((await httpRequest(`${manager.apiUrl}/api/runtimes`, { headers: { host } })).status, 200);
  }
  assert.equal((await upgrade(`http://127.0.0.1:${manager.reflectionPort}/`, { host: 'evil.example' })).status, 403);
  assert.equal((await upgrade(`http://127.0.0.1:${manager.workerPort}/`, { host: 'evil.example:1' })).status, 403);
  // allowed_hosts admits a name.
  const m2 = await startManager(['--allowed-hosts', 'actor-host.internal']);
  assert.equal((await httpRequest(`${m2.apiUrl}/api/runtimes`, { headers: { host: 'actor-host.internal:4100' } })).status, 200);
  await manager.assertHealthy();
});

test('token: callers need Authorization: Bearer on HTTP, /api/ws and /metrics; probes do not', async () => {
  const manager = await startManager(['--auth-token-file', tokenFile]);
  const auth = (headers) => ({ headers: { ...headers } });
  const none = await httpRequest(`${manager.apiUrl}/api/runtimes`);
  assert.equal(none.status, 401, none.text);
  assert.match(none.text, /Authorization: Bearer/);
  const wrong = await httpRequest(`${manager.apiUrl}/api/runtimes`, auth({ authorization: 'Bearer nope' }));
  assert.equal(wrong.status, 401);
  assert.match(wrong.text, /wrong token/);
  assert.equal((await httpRequest(`${manager.apiUrl}/api/runtimes`, auth(bearer))).status, 200);
  assert.equal((await httpRequest(`${manager.apiUrl}/metrics`)).status, 401);
  assert.equal((await httpRequest(`${manager.apiUrl}/metrics`, auth(bearer))).status, 200);
  assert.equal((await httpRequest(`${manager.apiUrl}/healthz`)).status, 200);
  assert.notEqual((await httpRequest(`${manager.apiUrl}/readyz`)).status, 401);
  // A token in the query is not accepted from callers.
  assert.equal((await httpRequest(`${manager.apiUrl}/api/runtimes?token=${TOKEN}`)).status, 401);
  await assert.rejects(RpcSocket.connect(manager.apiWsUrl, 'no token'), (e) => e.status === 401);
  await assert.rejects(RpcSocket.connect(manager.apiWsUrl, 'wrong', { headers: { authorization: 'Bearer x' } }), (e) => e.status === 401);
  const api = await RpcSocket.connect(manager.apiWsUrl, 'with token', { headers: bearer });
  const reply = await api.request('listRuntimes', {}).catch((e) => e);
  assert.ok(reply, 'the authorised socket answers');
  await api.close();
  // Runtimes: header or ?token= on the reflection port; nothing without.
  await assert.rejects(FakeRuntime.connect(manager.reflectionUrl, 'rt-none'), (e) => e.status === 401);
  const viaQuery = await FakeRuntime.connect(`${manager.reflectionUrl}/?token=${TOKEN}`, 'rt-query');
  assert.deepEqual((await viaQuery.register('rt-query')).result, {});
  const viaHeader = await FakeRuntime.connect(manager.reflectionUrl, 'rt-header', { headers: bearer });
  assert.deepEqual((await viaHeader.register('rt-header')).result, {});
  await assert.rejects(FakeRuntime.connect(`${manager.reflectionUrl}/?token=wrong`, 'rt-wrong'), (e) => e.status === 401);
  // Workers: the same on the worker port.
  await assert.rejects(RpcSocket.connect(manager.workerUrl, 'w-none'), (e) => e.status === 401);
  const w = await RpcSocket.connect(`${manager.workerUrl}/?token=${TOKEN}`, 'w-query');
  await w.close();
  // The manager's log never shows the token.
  assert.ok(!manager.child.lines.some((l) => l.includes(TOKEN)), 'token in the manager log');
});

test('token: the real Genkit JS runtime and our runtime role, children of the manager, register with it and export their traces', async () => {
  const store = path.join(tmp, 'token-traces.sqlite');
  const manager = await startManager(['--auth-token-file', tokenFile, '--trace-store', store, '--demo', '--id', 'genkit-app', '--', ...genkitCommand], {
    cwd: path.dirname(RUNTIME_SCRIPT),
  });
  const list = await pollUntil(
    () => httpRequest(`${manager.apiUrl}/api/runtimes`, { headers: bearer }).then((r) => r.json),
    (rts) => ['demo', 'genkit-app'].every((id) => rts.some((r) => r.id === id)),
    { timeoutMs: 30000, what: 'demo and genkit-app registered' }
  );
  for (const r of list) assert.ok(!JSON.stringify(r).includes(TOKEN), 'token listed in RuntimeInfo');
  for (const runtimeId of ['demo', 'genkit-app']) {
    const res = await httpRequest(`${manager.apiUrl}/api/runAction`, {
      method: 'POST',
      body: { key: '/flow/echo', input: { n: 1 }, runtimeId },
      headers: bearer,
    });
    assert.equal(res.status, 200, `${runtimeId}: ${res.text}`);
    // Both export the run's spans to the manager, whose URL (given to them
    // as GENKIT_TELEMETRY_SERVER) carries the token in its path.
    const traceId = res.json.telemetry.traceId;
    await pollUntil(() => httpRequest(`${manager.apiUrl}/api/traces/${traceId}`, { headers: bearer }),
      (r) => r.status === 200 && Object.values(r.json.spans).some((sp) => !sp.parentSpanId && sp.endTime > 0),
      { timeoutMs: 15000, intervalMs: 100, what: `${runtimeId}'s trace ${traceId}` });
  }
  // The token in a path is taken for the exporter routes only, and must be right.
  const post = (p) => httpRequest(`${manager.apiUrl}${p}`, { method: 'POST', body: { key: '/flow/echo' } });
  assert.equal((await post(`/t/${TOKEN}/api/runAction`)).status, 404);
  assert.equal((await post('/t/wrong-token/api/traces')).status, 401);
  assert.equal((await post(`/t/${TOKEN}/api/traces`)).status, 400); // admitted: not TraceData
  assert.equal((await httpRequest(`${manager.apiUrl}/t/${TOKEN}/api/traces`)).status, 404); // GET
  // The CLI sends the token from the same setting.
  const denied = await runCli(['runtimes', '--manager', manager.apiUrl]);
  assert.equal(denied.code, 3, denied.stderr);
  assert.match(denied.stderr, /HTTP 401/);
  const cli = await runCli(['runtimes', '--manager', manager.apiUrl, '--json'], { ACTOR_HOST_AUTH_TOKEN_FILE: tokenFile });
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /genkit-app/);
  // Our runtime role logs the URL it dials with the token masked.
  const urlLines = manager.child.lines.filter((l) => /(Connected to|Registered with) manager ws:/.test(l));
  assert.ok(urlLines.length > 0, 'the demo runtime logged its manager URL');
  for (const l of urlLines) {
    assert.ok(!l.includes(TOKEN), l);
    assert.match(l, /token=\*\*\*/);
  }
  assert.ok(manager.child.lines.some((l) => /Trace store: .*telemetry server http:\/\/localhost:\d+\/t\/<token>/.test(l)));
  assert.ok(!manager.child.lines.some((l) => l.includes(TOKEN)), 'token in the manager log');
});

test('off loopback: no start without a token, mTLS or --insecure; a token guards remote peers', async (t) => {
  // Refused at startup, with the way out in the message.
  const refused = await runCli(['--role', 'manager', '--bind', '0.0.0.0', '--http-port', '0', '--worker-port', '0']);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /refusing to listen on 0\.0\.0\.0.*auth_token_file.*tls_client_ca_file.*--insecure/s);
  const addr = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  if (!addr) return t.skip('no non-loopback IPv4 address on this machine');
  // With a token: a remote peer needs it like everyone else.
  const guarded = await startManager(['--bind', '0.0.0.0', '--auth-token-file', tokenFile]);
  const remote = `http://${addr}:${guarded.apiPort}/api/runtimes`;
  const host = { host: `localhost:${guarded.apiPort}` };
  assert.equal((await httpRequest(remote, { headers: host })).status, 401);
  assert.equal((await httpRequest(remote, { headers: { ...host, ...bearer } })).status, 200);
  await cleanup();
  // --insecure: the operator said so; remote peers are served without a token.
  const open = await startManager(['--bind', '0.0.0.0', '--insecure']);
  const res = await httpRequest(`http://${addr}:${open.apiPort}/api/runtimes`, { headers: { host: `localhost:${open.apiPort}` } });
  assert.equal(res.status, 200, res.text);
});

test('a live runtime id cannot be taken over; the caller still reaches the real runtime', async () => {
  const manager = await startManager();
  const real = await manager.fakeRuntime('real');
  real.handlers.runAction = () => ({ result: { result: 'from the real one', telemetry: { traceId: 'a'.repeat(32) } } });
  await real.register('victim');
  const hijacker = await manager.fakeRuntime('hijacker');
  hijacker.handlers.runAction = () => ({ result: { result: 'hijacked', telemetry: { traceId: 'b'.repeat(32) } } });
  const reply = await hijacker.register('victim');
  assert.equal(reply.error?.code, -32602, JSON.stringify(reply));
  assert.match(reply.error.message, /in use by a live connection/);
  const res = await manager.post('/api/runAction', { key: '/flow/x', input: 1, runtimeId: 'victim' });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.result, 'from the real one');
  assert.ok(!hijacker.messages.some((m) => m.method === 'runAction'), 'the hijacker got the call');
  await manager.assertHealthy();
});

test('a runtime whose old link died gets its id back at once', async () => {
  const manager = await startManager();
  const old = await manager.fakeRuntime('old-link');
  await old.register('phoenix');
  // The old socket stops reading: it answers no ping (a half-open link).
  old.ws._socket.pause();
  const fresh = await manager.fakeRuntime('new-link');
  fresh.handlers.runAction = () => ({ result: { result: 'fresh', telemetry: { traceId: 'c'.repeat(32) } } });
  const started = Date.now();
  const reply = await fresh.register('phoenix');
  assert.deepEqual(reply.result, {}, JSON.stringify(reply));
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  const rts = await manager.runtimes();
  assert.equal(rts.filter((r) => r.id === 'phoenix').length, 1);
  const res = await manager.post('/api/runAction', { key: '/flow/x', input: 1, runtimeId: 'phoenix' });
  assert.equal(res.json.result, 'fresh');
  old.ws._socket.resume();
  await manager.assertHealthy();
});

test('a CR/LF trace id from a runtime never reaches a response header', async () => {
  const manager = await startManager();
  const fake = await manager.fakeRuntime('crlf');
  const evilTrace = 'abc\r\nSet-Cookie: pwned=1';
  fake.handlers.runAction = (_p, msg) => {
    fake.notify('runActionState', { requestId: msg.id, state: { traceId: evilTrace } });
    return { result: { result: 'ok', telemetry: { traceId: evilTrace } } };
  };
  await fake.register('crlf');
  const res = await manager.post('/api/runAction', { key: '/flow/x', input: 1 });
  assert.equal(res.headers['set-cookie'], undefined);
  assert.ok(!JSON.stringify(res.headers).includes('pwned'), JSON.stringify(res.headers));
  await manager.assertHealthy();
});

test('peer text: huge and control-character ids are refused, and log lines cannot be forged', async () => {
  const manager = await startManager(['--log-level', 'debug']);
  const fake = await manager.fakeRuntime('peer-text');
  const huge = await fake.register('x'.repeat(1 << 20), {}, 'huge');
  assert.equal(huge.error?.code, -32602);
  assert.match(huge.error.message, /at most 256/);
  const forged = await fake.register('rt\nFORGED-REGISTER-LINE', {}, 'nl');
  assert.equal(forged.error?.code, -32602);
  assert.match(forged.error.message, /control character/);
  const ansi = await fake.register('\u001b[31mred', {}, 'ansi');
  assert.equal(ansi.error?.code, -32602);
  assert.deepEqual(await manager.runtimes(), []);
  // Text that is logged (an unknown method, at debug) is escaped in the line.
  fake.send({ jsonrpc: '2.0', method: 'x\nFORGED-LOG-LINE \u001b[2J', id: 'm1' });
  await fake.waitFor((m) => m.id === 'm1');
  await manager.child.waitForLine(/unknown method x\\nFORGED-LOG-LINE \\x1b\[2J/);
  assert.ok(!manager.child.lines.some((l) => l.startsWith('FORGED')), 'a forged log line');
  assert.ok(!manager.child.lines.some((l) => l.includes('\u001b[2J')), 'a raw escape sequence in the log');
  assert.ok(!manager.child.lines.some((l) => l.includes('x'.repeat(1000))), 'the huge id was logged');
  await manager.assertHealthy();
});

test('bodies over the 8 MiB default are refused with 413', async () => {
  const manager = await startManager();
  const res = await httpRequest(`${manager.apiUrl}/api/runAction`, {
    method: 'POST',
    body: JSON.stringify({ key: '/flow/x', input: 'y'.repeat(9 << 20) }),
  });
  assert.equal(res.status, 413);
  await manager.assertHealthy();
});
