// The gRPC listener's TLS and mTLS (--grpc-auth-cert-file, --grpc-auth-key-file,
// --grpc-client-ca-file, --insecure-skip-grpc-client-verify) with
// certificates made here by the openssl CLI (no key is committed), and the
// token: @grpc/grpc-js clients over real sockets.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { CertDir, CLIENT_EXT, SERVER_EXT } from './lib/certs.mjs';
import { ACTOR_HOST_BIN, cleanup } from './lib/harness.mjs';
import { grpc, healthClient, startGrpcManager } from './lib/grpc.mjs';

let certs;
const file = (name) => certs.file(name);
const read = (name) => certs.read(name);

before(() => {
  certs = new CertDir('actor-host-grpc-tls-');
  certs.ca('ca');
  certs.ca('other-ca');
  certs.leaf('server', 'ca', 'localhost', SERVER_EXT);
  certs.leaf('client', 'ca', 'client', CLIENT_EXT);
  certs.leaf('stranger', 'other-ca', 'stranger', CLIENT_EXT);
});

after(async () => {
  await cleanup();
  certs?.remove();
});

/** Health.Check('') with `creds`: the status name, or the error's code. */
async function check(address, creds, metadata = new grpc.Metadata()) {
  const h = healthClient(address, creds);
  try {
    return await new Promise((resolve) =>
      h.Check({ service: '' }, metadata, { deadline: Date.now() + 5000 }, (err, res) => resolve(err ? err.code : res.status)));
  } finally {
    h.close();
  }
}

describe('gRPC over TLS', () => {
  test('TLS: a client that trusts the CA is served; plaintext is not', async () => {
    const { address } = await startGrpcManager(['--grpc-auth-cert-file', file('server.crt'), '--grpc-auth-key-file', file('server.key')]);
    assert.equal(await check(address, grpc.credentials.createSsl(read('ca.crt'))), 'SERVING');
    assert.equal(await check(address, grpc.credentials.createInsecure()), grpc.status.UNAVAILABLE);
    assert.equal(await check(address, grpc.credentials.createSsl(read('other-ca.crt'))), grpc.status.UNAVAILABLE);
  });

  test('mTLS: only clients with a certificate the client CA signed', async () => {
    const { address } = await startGrpcManager([
      '--grpc-auth-cert-file', file('server.crt'), '--grpc-auth-key-file', file('server.key'),
      '--grpc-client-ca-file', file('ca.crt'),
    ]);
    const ca = read('ca.crt');
    assert.equal(await check(address, grpc.credentials.createSsl(ca, read('client.key'), read('client.crt'))), 'SERVING');
    assert.equal(await check(address, grpc.credentials.createSsl(ca)), grpc.status.UNAVAILABLE);
    assert.equal(await check(address, grpc.credentials.createSsl(ca, read('stranger.key'), read('stranger.crt'))), grpc.status.UNAVAILABLE);
  });

  test('--insecure-skip-grpc-client-verify: any client certificate or none', async () => {
    const { address } = await startGrpcManager([
      '--grpc-auth-cert-file', file('server.crt'), '--grpc-auth-key-file', file('server.key'),
      '--grpc-client-ca-file', file('ca.crt'), '--insecure-skip-grpc-client-verify', 'true',
    ]);
    const ca = read('ca.crt');
    assert.equal(await check(address, grpc.credentials.createSsl(ca)), 'SERVING');
    assert.equal(await check(address, grpc.credentials.createSsl(ca, read('stranger.key'), read('stranger.crt'))), 'SERVING');
  });

  test('the listeners\' --tls-* files serve gRPC too when it has none of its own', async () => {
    const { address } = await startGrpcManager(['--tls-cert-file', file('server.crt'), '--tls-key-file', file('server.key')]);
    assert.equal(await check(address, grpc.credentials.createSsl(read('ca.crt'))), 'SERVING');
  });

  test('a token: callers need authorization metadata', async () => {
    fs.writeFileSync(file('token'), 's3cret-token\n', { mode: 0o600 });
    const { address } = await startGrpcManager(['--auth-token-file', file('token')]);
    const insecure = grpc.credentials.createInsecure();
    assert.equal(await check(address, insecure), grpc.status.UNAUTHENTICATED);
    const bad = new grpc.Metadata();
    bad.set('authorization', 'Bearer nope');
    assert.equal(await check(address, insecure, bad), grpc.status.UNAUTHENTICATED);
    const good = new grpc.Metadata();
    good.set('authorization', 'Bearer s3cret-token');
    assert.equal(await check(address, insecure, good), 'SERVING');
  });

  test('a missing certificate file is a clear start error', () => {
    const r = spawnSync(ACTOR_HOST_BIN, ['--role', 'manager', '--port', '0', '--http-port', '0', '--worker-port', '0', '--trace-store', 'none',
      '--grpc-port', '0', '--grpc-auth-cert-file', file('missing.crt'), '--grpc-auth-key-file', file('server.key')],
    { encoding: 'utf8', timeout: 20000 });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout + r.stderr, /gRPC front door: cannot read .*missing\.crt/);
  });
});

