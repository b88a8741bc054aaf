// TLS and mTLS on every listener (issue 11): certificates are made here with
// the openssl CLI in a temp dir (no private key is committed), then real
// clients talk to the manager over real sockets: HTTPS, /api/ws over wss,
// our runtime and the real Genkit JS runtime registering over wss, mTLS
// refusals, plaintext on a TLS port, and a SIGHUP reload that new
// connections see while an old WebSocket keeps working.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { after, afterEach, before, test } from 'node:test';
import { CertDir, CLIENT_EXT, SERVER_EXT } from './lib/certs.mjs';
import { cleanup, RpcSocket, startCppRuntime, startGenkitRuntime, startIiiWorker, startManager } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

let certs;
const file = (name) => certs.file(name);
const pem = {};

before(() => {
  certs = new CertDir('actor-host-tls-');
  certs.ca('ca');
  certs.ca('other-ca');
  certs.leaf('server', 'ca', 'localhost', SERVER_EXT);
  certs.leaf('server2', 'ca', 'localhost-2', SERVER_EXT);
  certs.leaf('client', 'ca', 'client', CLIENT_EXT);
  certs.leaf('stranger', 'other-ca', 'stranger', CLIENT_EXT);
  for (const n of ['ca', 'server', 'server2', 'client', 'stranger']) {
    pem[n] = { cert: certs.read(`${n}.crt`), key: fs.existsSync(file(`${n}.key`)) ? certs.read(`${n}.key`) : undefined };
  }
  // The listener's files live at fixed paths that the reload test rewrites.
  fs.copyFileSync(file('server.crt'), file('live.crt'));
  fs.copyFileSync(file('server.key'), file('live.key'));
});

after(() => certs?.remove());

/** One HTTPS request; resolves {status, text} or rejects with the TLS error. */
function httpsRequest(url, { method = 'GET', body, cert, key, ca = pem.ca.cert } = {}) {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(url, {
      method, agent: false, ca, cert, key,
      headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {},
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.setTimeout(10000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(data);
  });
}

/** The CN of the certificate a fresh TLS connection to `port` is shown. */
function peerCn(port) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: pem.ca.cert }, () => {
      const cn = s.getPeerCertificate().subject.CN;
      s.end();
      resolve(cn);
    });
    s.on('error', reject);
  });
}

const tlsArgs = (...extra) => ['--tls-cert-file', file('live.crt'), '--tls-key-file', file('live.key'), ...extra];

function metricValue(text, name, listener) {
  const m = text.match(new RegExp(`^${name}${listener ? `\\{listener="${listener}"\\}` : ''} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

test('TLS: HTTPS API, /api/ws over wss, our runtime and the Genkit runtime register over wss, plaintext refused, SIGHUP reload', async () => {
  const manager = await startManager(tlsArgs());
  const api = `https://localhost:${manager.apiPort}`;
  const refl = `wss://localhost:${manager.reflectionPort}`;
  await manager.child.waitForLine(/Starting API server: https:\/\/localhost:/);

  const health = await httpsRequest(`${api}/api/__health`);
  assert.equal(health.status, 200);
  assert.equal(health.text.trim(), 'OK');

  // Our runtime, and the real Genkit JS runtime, over wss.
  const cpp = startCppRuntime(refl, { id: 'cpp-tls', args: ['--tls-ca-file', file('ca.crt')] });
  const genkit = startGenkitRuntime(refl, { id: 'genkit-tls', env: { NODE_EXTRA_CA_CERTS: file('ca.crt') } });
  const listed = async (id, child) => {
    for (let i = 0; i < 200; i++) {
      if (!child.running) throw new Error(`runtime exited: ${child.describe()}`);
      const r = await httpsRequest(`${api}/api/runtimes`);
      if (JSON.parse(r.text).some((x) => x.id === id)) return;
      await new Promise((res) => setTimeout(res, 100));
    }
    throw new Error(`${id} never registered: ${child.describe()}`);
  };
  await listed('cpp-tls', cpp);
  await listed('genkit-tls', genkit);
  for (const id of ['cpp-tls', 'genkit-tls']) {
    const run = await httpsRequest(`${api}/api/runAction`, { method: 'POST', body: { key: '/flow/echo', input: 'over tls', runtimeId: id } });
    assert.equal(run.status, 200, run.text);
    assert.equal(JSON.parse(run.text).result, 'over tls');
  }

  // An iii-sdk worker over wss (the SDK dials with node's TLS: NODE_EXTRA_CA_CERTS).
  const worker = startIiiWorker(`wss://localhost:${manager.workerPort}`, { name: 'wss-worker', env: { NODE_EXTRA_CA_CERTS: file('ca.crt') } });
  for (let i = 0; ; i++) {
    const r = await httpsRequest(`${api}/api/actions?runtimeId=iii`);
    if (r.status === 200 && r.text.includes('/iii/greet')) break;
    if (i > 150 || !worker.running) throw new Error(`the iii worker did not register over wss: ${r.status} ${r.text.slice(0, 300)}\n${worker.describe()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  const greet = await httpsRequest(`${api}/api/runAction`, { method: 'POST', body: { key: '/iii/greet', input: { name: 'tls' } } });
  assert.equal(greet.status, 200, greet.text);
  assert.equal(JSON.parse(greet.text).result.greeting, 'Hello, tls!');

  // A runtime that does not trust the manager's CA does not connect, and says why.
  const untrusting = startCppRuntime(refl, { id: 'cpp-untrusting' });
  untrusting.mayExit = true;
  await untrusting.waitForLine(/cannot reach manager .*certificate verify failed/, 10000);
  untrusting.kill('SIGKILL');

  // /api/ws over wss.
  const ws = await RpcSocket.connect(`wss://localhost:${manager.apiPort}/api/ws`, 'wss-api', { ca: pem.ca.cert });
  const rts = await ws.call('listRuntimes');
  assert.ok(rts.runtimes.some((r) => r.id === 'cpp-tls'), JSON.stringify(rts));

  // Plaintext on a TLS port gets a clear answer, on every listener.
  for (const port of [manager.apiPort, manager.reflectionPort, manager.workerPort]) {
    const res = await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/api/__health', agent: false }, (r) => {
        let t = '';
        r.on('data', (c) => (t += c));
        r.on('end', () => resolve({ status: r.statusCode, text: t }));
      }).on('error', reject);
    });
    assert.equal(res.status, 400);
    assert.match(res.text, /This port requires TLS: use https:\/\/ or wss:\/\//);
  }

  // SIGHUP: new connections get the new certificate, the open WebSocket stays.
  assert.equal(await peerCn(manager.apiPort), 'localhost');
  fs.copyFileSync(file('server2.crt'), file('live.crt'));
  fs.copyFileSync(file('server2.key'), file('live.key'));
  manager.child.proc.kill('SIGHUP');
  await manager.child.waitForLine(/TLS certificates reloaded/, 5000);
  assert.equal(await peerCn(manager.apiPort), 'localhost-2');
  assert.ok((await ws.call('listRuntimes')).runtimes.length >= 2, 'the old WebSocket still works');
  // A broken file: the old context stays, with a log line and a metric.
  fs.writeFileSync(file('live.crt'), 'not a certificate\n');
  manager.child.proc.kill('SIGHUP');
  await manager.child.waitForLine(/TLS reload failed, keeping the certificates loaded before/, 5000);
  assert.equal(await peerCn(manager.apiPort), 'localhost-2');
  const metrics = (await httpsRequest(`${api}/metrics`)).text;
  assert.equal(metricValue(metrics, 'actor_host_tls_reloads_total'), 1);
  assert.equal(metricValue(metrics, 'actor_host_tls_reload_failures_total'), 1);
  assert.ok(metricValue(metrics, 'actor_host_tls_plaintext_refused_total', 'api') >= 1);
  assert.ok(metricValue(metrics, 'actor_host_tls_handshake_failures_total', 'reflection') >= 1, 'the untrusting runtime\'s handshake failure is counted');
  await ws.close();
  const stats = JSON.parse((await httpsRequest(`${api}/api/__stats`)).text);
  assert.equal(stats.actors.pending_request, 0);
  // Restore the live files for the next test.
  fs.copyFileSync(file('server.crt'), file('live.crt'));
  fs.copyFileSync(file('server.key'), file('live.key'));
});

test('mTLS: no client certificate and a wrong-CA certificate are refused, the right one is accepted', async () => {
  const manager = await startManager(tlsArgs('--tls-client-ca-file', file('ca.crt')));
  const api = `https://localhost:${manager.apiPort}`;
  await manager.child.waitForLine(/client certificates required/);
  await assert.rejects(httpsRequest(`${api}/api/__health`), 'no client certificate');
  await assert.rejects(httpsRequest(`${api}/api/__health`, { cert: pem.stranger.cert, key: pem.stranger.key }), 'wrong CA');
  const ok = await httpsRequest(`${api}/api/__health`, { cert: pem.client.cert, key: pem.client.key });
  assert.equal(ok.status, 200);

  // Our runtime with its client certificate.
  const cpp = startCppRuntime(`wss://localhost:${manager.reflectionPort}`, {
    id: 'cpp-mtls',
    args: ['--tls-ca-file', file('ca.crt'), '--tls-cert-file', file('client.crt'), '--tls-key-file', file('client.key')],
  });
  await cpp.waitForLine(/Registered with manager wss:\/\/localhost:\d+ as cpp-mtls/, 10000);
  // wss without a certificate is refused too.
  await assert.rejects(RpcSocket.connect(`wss://localhost:${manager.apiPort}/api/ws`, 'no-cert', { ca: pem.ca.cert }));
  const ws = await RpcSocket.connect(`wss://localhost:${manager.apiPort}/api/ws`, 'with-cert', { ca: pem.ca.cert, cert: pem.client.cert, key: pem.client.key });
  assert.ok((await ws.call('listRuntimes')).runtimes.some((r) => r.id === 'cpp-mtls'));
  await ws.close();
  const metrics = (await httpsRequest(`${api}/metrics`, { cert: pem.client.cert, key: pem.client.key })).text;
  assert.ok(metricValue(metrics, 'actor_host_tls_handshake_failures_total', 'api') >= 2, 'refused handshakes counted');
});

test('insecure_skip_client_verify: certificates are requested but any (or none) is accepted', async () => {
  const manager = await startManager(tlsArgs('--tls-client-ca-file', file('ca.crt'), '--insecure-skip-client-verify', 'true'));
  const api = `https://localhost:${manager.apiPort}`;
  await manager.child.waitForLine(/client certificates requested, not verified/);
  assert.equal((await httpsRequest(`${api}/api/__health`)).status, 200);
  assert.equal((await httpsRequest(`${api}/api/__health`, { cert: pem.stranger.cert, key: pem.stranger.key })).status, 200);
});

test('the CLI calls an https:// manager with --tls-ca-file', async () => {
  const manager = await startManager(tlsArgs());
  const { ACTOR_HOST_BIN } = await import('./lib/harness.mjs');
  const out = execFileSync(ACTOR_HOST_BIN, ['runtimes', '--manager', `https://localhost:${manager.apiPort}`, '--tls-ca-file', file('ca.crt'), '--json'], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), JSON.parse(out)); // valid JSON
  const bad = (() => {
    try {
      execFileSync(ACTOR_HOST_BIN, ['runtimes', '--manager', `https://localhost:${manager.apiPort}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      return null;
    } catch (e) {
      return e;
    }
  })();
  assert.ok(bad, 'an untrusted manager is refused');
  assert.equal(bad.status, 3);
  assert.match(bad.stderr, /certificate verify failed/);
});

test('TLS on the RBAC worker port too: the certificate, and plaintext refused', async () => {
  const manager = await startManager(tlsArgs('--worker-rbac-port', '0'));
  const rbacPort = Number(new URL(manager.workerRbacUrl).port);
  assert.equal(await peerCn(rbacPort), 'localhost');
  const res = await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: rbacPort, path: '/', agent: false }, (r) => {
      let t = '';
      r.on('data', (c) => (t += c));
      r.on('end', () => resolve({ status: r.statusCode, text: t }));
    }).on('error', reject);
  });
  assert.equal(res.status, 400);
  assert.match(res.text, /This port requires TLS/);
  assert.equal((await httpsRequest(`https://localhost:${manager.apiPort}/api/__health`)).status, 200);
});
