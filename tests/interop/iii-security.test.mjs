// Issue 11, the iii-hardening part, over real sockets: a long string against
// the runtime's schema `format`/`pattern` (the C++ runtime role, demo
// actions), takeovers, bindings, reserved ids and the front door under RBAC,
// ids and frames that are not JSON, timeoutMs overflow, and channel caps.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, afterEach, test } from 'node:test';

import {
  cleanup, IiiClient, openChannelSocket, pollUntil, startManager, waitForFunction,
} from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

async function metric(manager, name) {
  const m = (await manager.get('/metrics')).text.match(new RegExp(`^${name} (\\d+)$`, 'm'));
  return m ? Number(m[1]) : undefined;
}

function rssKiB(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  return Number(m[1]);
}

const order = (email) => ({
  customer: { name: 'Ada', email, address: { street: 's', city: 'c', zip: '12345' } },
  items: [{ sku: 'a', qty: 1, unitPrice: 2 }],
});

test('schema: a 100k-character email or zip is refused, the runtime lives on (RE2, not std::regex)', async () => {
  const manager = await startManager();
  const runtime = await manager.startRuntime('rt-cpp', { kind: 'cpp' });
  const long = await manager.post('/api/runAction', { key: '/flow/createOrder', input: order('a'.repeat(100000)) });
  assert.equal(long.status, 400, long.text.slice(0, 500));
  assert.match(long.text, /customer\.email: must match format \\"email\\"/);
  const zip = order('ada@example.com');
  zip.customer.address.zip = '1'.repeat(100000);
  const badZip = await manager.post('/api/runAction', { key: '/flow/createOrder', input: zip });
  assert.equal(badZip.status, 400, badZip.text.slice(0, 500));
  assert.match(badZip.text, /customer\.address\.zip: must match pattern \\"\^\[0-9\]\{5\}\$\\"/);
  const ok = await manager.post('/api/runAction', { key: '/flow/createOrder', input: order('ada@example.com') });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(runtime.running, true, runtime.describe());
  await manager.assertHealthy();
});

/** A manager with the RBAC endpoint, a trusted worker providing test::auth (token "good"),
 * secret::fn and api::hello, and an authenticated restricted worker `pub`. */
async function rbacSetup() {
  const manager = await startManager([
    '--worker-rbac-port', '0',
    '--worker-auth-function', 'test::auth',
    '--worker-expose-functions', 'api::*,engine::functions::list',
  ]);
  const trusted = await IiiClient.connect(manager.workerUrl);
  await trusted.registered();
  trusted.register('test::auth', async (input) => {
    if (input.headers['x-token'] !== 'good') throw new Error('bad token');
    return {};
  });
  const secretCalls = [];
  trusted.register('secret::fn', async (data) => (secretCalls.push(data), { from: 'trusted' }));
  trusted.register('api::hello', async () => ({ from: 'trusted' }));
  await waitForFunction(trusted, 'api::hello');
  const pub = await IiiClient.connect(manager.workerRbacUrl, { headers: { 'x-token': 'good' } });
  await pub.registered();
  return { manager, trusted, pub, secretCalls };
}

test('RBAC (a): a live worker\'s function id is not taken over', async () => {
  const { manager, pub } = await rbacSetup();
  const stolen = [];
  pub.register('secret::fn', async (data) => (stolen.push(data), { from: 'hijacker' }));
  await pub.call('engine::functions::list', {}); // a round trip: the registration was read
  const caller = await IiiClient.connect(manager.workerUrl);
  await caller.registered();
  const r = await caller.call('secret::fn', { token: 't0p' });
  assert.deepEqual(r.result, { from: 'trusted' }, JSON.stringify(r));
  assert.equal(stolen.length, 0);
  assert.equal(await metric(manager, 'actor_host_iii_registrations_refused_total'), 1);
  await manager.assertHealthy();
});

test('RBAC (b): no binding of engine::workers-available to a function the session may not call', async () => {
  const { manager, pub, secretCalls } = await rbacSetup();
  pub.send({ type: 'registertrigger', id: 'b1', trigger_type: 'engine::workers-available', function_id: 'secret::fn', config: {} });
  await pub.call('engine::functions::list', {});
  const another = await IiiClient.connect(manager.workerUrl);
  await another.registered();
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(secretCalls.length, 0, 'secret::fn was fired by a restricted worker\'s binding');
  assert.equal(await metric(manager, 'actor_host_iii_bindings_refused_total'), 1);
  await manager.assertHealthy();
});

test('RBAC (c): the auth function id is reserved, even once its provider left', async () => {
  const { manager, trusted, pub } = await rbacSetup();
  await trusted.terminate();
  const watcher = await IiiClient.connect(manager.workerUrl);
  await watcher.registered();
  await pollUntil(async () => (await watcher.call('engine::functions::list', {})).result.functions, (f) => !f.some((x) => x.function_id === 'test::auth'), { what: 'trusted gone' });
  pub.register('test::auth', async () => ({}));
  await pub.call('engine::functions::list', {});
  const anonymous = await IiiClient.connect(manager.workerRbacUrl);
  const outcome = await anonymous.waitFor((f) => f.type === 'error' || f.type === 'workerregistered', 10000, 'auth outcome');
  assert.equal(outcome.type, 'error', 'a connection without a token was admitted');
  assert.equal(await metric(manager, 'actor_host_iii_registrations_refused_total'), 1);
  await manager.assertHealthy();
});

test('RBAC (d): /iii/ calls from the front door follow the exposed functions', async () => {
  const { manager } = await rbacSetup();
  const denied = await manager.post('/api/runAction', { key: '/iii/secret::fn', input: {} });
  assert.notEqual(denied.status, 200, denied.text);
  assert.match(denied.text, /worker_expose_functions/);
  const api = await manager.api();
  const wsDenied = await api.request('runAction', { key: '/iii/secret::fn', input: {} });
  assert.match(wsDenied.error?.message ?? '', /not exposed to the front door/, JSON.stringify(wsDenied));
  const allowed = await manager.post('/api/runAction', { key: '/iii/api::hello', input: {} });
  assert.equal(allowed.status, 200, allowed.text);
  const listed = Object.keys(await manager.json('/api/actions?runtimeId=iii'));
  assert.ok(listed.includes('/iii/api::hello') && !listed.includes('/iii/secret::fn'), JSON.stringify(listed));
  await manager.assertHealthy();
});

test('a JSON-RPC id that is not JSON gets a valid -32700 reply with id null', async () => {
  const manager = await startManager();
  const api = await manager.api();
  api.sendRaw('{"jsonrpc":"2.0","method":"listActions","id":-abc}');
  const reply = await api.waitFor((m) => !('method' in m), 5000, 'reply to a bad id');
  assert.equal(reply.id, null);
  assert.equal(reply.error?.code, -32700);
  assert.equal(api.unparsable.length, 0, JSON.stringify(api.unparsable));
  await manager.assertHealthy();
});

test('worker frames with NaN or tru are answered with an error, never relayed', async () => {
  const manager = await startManager();
  const executor = await IiiClient.connect(manager.workerUrl);
  await executor.registered();
  const seen = [];
  executor.register('api::echo', async (data) => (seen.push(data), data));
  await waitForFunction(executor, 'api::echo');
  const caller = await IiiClient.connect(manager.workerUrl);
  await caller.registered();
  caller.ws.send('{"type":"invokefunction","invocation_id":"bad-1","function_id":"api::echo","data":{"x":NaN}}');
  const refused = await caller.waitFor((f) => f.invocation_id === 'bad-1', 5000, 'answer to a NaN payload');
  assert.equal(refused.error?.code, 'INVALID_ARGUMENTS');
  assert.match(refused.error.message, /not valid JSON/);
  assert.equal(executor.frames.filter((f) => f.unparsable).length, 0);
  assert.equal(seen.length, 0);
  // A result with `tru` fails the call rather than reaching the caller.
  executor.handlers['api::echo'] = undefined;
  const pending = caller.call('api::echo', { y: 1 });
  const inv = await executor.waitFor((f) => f.type === 'invokefunction', 5000, 'invocation');
  executor.ws.send(`{"type":"invocationresult","invocation_id":"${inv.invocation_id}","function_id":"api::echo","result":tru}`);
  const failed = await pending;
  assert.equal(failed.error?.code, 'invocation_failed', JSON.stringify(failed));
  assert.equal(caller.frames.filter((f) => f.unparsable).length, 0);
  for (const c of [executor, caller]) await c.terminate();
  await manager.assertHealthy();
});

test('timeoutMs 1e300 is invalid params, not "no timeout"', async () => {
  const manager = await startManager();
  const api = await manager.api();
  // timeoutMs beyond what a timer can hold is invalid params, not "no timeout".
  const fake = await manager.fakeRuntime('rt-fake');
  fake.handlers.listActions = () => ({ result: { actions: { '/flow/x': { key: '/flow/x', name: 'x' } } } });
  fake.handlers.runAction = () => ({ result: { result: 'ok', telemetry: { traceId: 'c'.repeat(32) } } });
  await fake.register('rt-fake');
  const huge = await manager.post('/api/runAction', { key: '/flow/x', input: 1, timeoutMs: 1e300 });
  assert.equal(huge.status, 400, huge.text);
  assert.match(huge.text, /timeoutMs/);
  const wsHuge = await api.request('runAction', { key: '/flow/x', input: 1, timeoutMs: 1e300 });
  assert.equal(wsHuge.error?.code, -32602, JSON.stringify(wsHuge));
  await manager.assertHealthy();
});

test('channels: bytes held per channel and channels per worker are capped', async () => {
  // The reader below drains 64 MiB at once: the channel forwards to it as fast
  // as the writer sends, with no flow control from the reader's socket back to
  // the writer (not built yet), so a reader more than max_write_queue_bytes
  // behind is dropped. Room for the burst here; the cap itself is tested in
  // limits-transport.test.mjs.
  const manager = await startManager(['--max-channel-bytes', String(1 << 20), '--max-channels-per-worker', '2',
    '--max-write-queue-bytes', String(128 << 20)]);
  const client = await IiiClient.connect(manager.workerUrl);
  await client.registered();
  const first = (await client.call('engine::channels::create', { buffer_size: 1024 })).result;
  assert.ok(first, 'first channel');
  assert.ok((await client.call('engine::channels::create', {})).result, 'second channel');
  const third = await client.call('engine::channels::create', {});
  assert.equal(third.error?.code, 'LIMIT_EXCEEDED', JSON.stringify(third));
  assert.match(third.error.message, /max_channels_per_worker/);
  assert.equal(await metric(manager, 'actor_host_iii_channels_refused_total'), 1);

  // 64 x 1 MiB with no reader: the writer is paused at ~1 MiB, not 64 MiB held.
  const url = (ref, dir) => `${manager.workerUrl}/ws/channels/${ref.channel_id}?key=${encodeURIComponent(ref.access_key)}&dir=${dir}`;
  const w = await openChannelSocket(url(first.writer, 'write'), { binaryLength: true, maxPayload: 256 << 20 });
  const rssBefore = rssKiB(manager.child.pid);
  const frame = Buffer.alloc(1 << 20, 7);
  for (let i = 0; i < 64; i++) w.ws.send(frame);
  await new Promise((res) => setTimeout(res, 1500));
  const grown = rssKiB(manager.child.pid) - rssBefore;
  assert.ok(grown < 24 * 1024, `manager RSS grew ${grown} KiB with a reader-less channel`);
  // Paused, not dropped: the reader then gets every frame.
  w.ws.close(1000, 'stream_complete');
  const r = await openChannelSocket(url(first.reader, 'read'), { binaryLength: true, maxPayload: 256 << 20 });
  const end = await r.closed;
  assert.equal(end.reason, 'stream_complete');
  assert.equal(r.got.length, 64);
  assert.equal(await metric(manager, 'actor_host_iii_channel_overflows_total'), 0);
  await client.terminate();
  await manager.waitForStats({ 'actors.channel': 0 }, 10000);
  await manager.assertHealthy();
});
