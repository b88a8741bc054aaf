// The iii worker endpoint against the real iii Node SDK (iii-sdk 0.22.1):
// tests/interop/iii/worker.mjs + caller.mjs (copied from ../shared/peers/iii)
// with ENGINE_URL = our manager's worker port, the die case, and a
// reconnect (half-open socket) with reattach and replay. The engine side
// beyond routing (engine trigger types, engine::register_trigger, middleware,
// registration hooks, metadata filters) with the SDK peers watcher.mjs,
// call.mjs and registrar.mjs.
//
// Caller tests skipped against us, and why (`channel`, the SDK's streaming
// channel, runs; the raw-socket refusals are tested below):
//   stopped_on_disconnect (mock), need the mock-only function mock::kick; the caller
//   reconnect_replay (mock)       skips them itself. Both behaviours are tested below
//                                 with a TCP proxy that cuts the worker's socket.
//   die_stops_invocation          ends the worker; run separately below (--with-die)
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, afterEach, test } from 'node:test';

import { cleanup, runCli, IiiClient, openChannelSocket, pollUntil, runIiiCaller, sdkCall, startIiiPeer, startIiiWorker, startManager } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

/** Waits until the worker named `name` has registered `fn` (seen through a raw client). */
async function waitForFunction(client, fn, timeoutMs = 15000) {
  return pollUntil(
    async () => (await client.call('engine::functions::list', {})).result?.functions ?? [],
    (fns) => fns.some((f) => f.function_id === fn),
    { timeoutMs, intervalMs: 100, what: `function ${fn} registered` }
  );
}

async function workersNamed(client, name) {
  const r = await client.call('engine::workers::list', {});
  return (r.result?.workers ?? []).filter((w) => w.name === name);
}

/** No actor or socket of the iii side left but the ones still connected. */
async function assertNoLeaks(manager, { workers = 0 } = {}) {
  await manager.waitForStats({
    'actors.worker_connection': workers,
    'actors.invocation': 0,
    'actors.trigger_binding': 0,
    'actors.channel': 0,
    'sockets.worker': (n) => n === workers,
  }, 10000);
}

/**
 * A TCP proxy in front of the worker port. `cut()` destroys the worker-side
 * sockets only, so the manager still sees the old connection open (the
 * half-open case `reattach` exists for).
 */
async function startProxy(targetPort) {
  const pairs = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    const pair = { client, upstream };
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = () => pairs.delete(pair);
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', () => {
      drop();
      if (!pair.halfOpen) upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${server.address().port}`,
    cut() {
      for (const p of pairs) {
        p.halfOpen = true;
        p.client.unpipe(p.upstream);
        p.upstream.unpipe(p.client);
        p.client.destroy();
      }
    },
    async close() {
      for (const p of pairs) {
        p.client.destroy();
        p.upstream.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test('the iii SDK suite (worker.mjs + caller.mjs) passes against the worker endpoint', async () => {
  const manager = await startManager();
  const worker = startIiiWorker(manager.workerUrl);
  const { exit, results, summary, child } = await runIiiCaller(manager.workerUrl);
  assert.ok(summary, `no summary line from the caller: ${child.describe()}`);
  assert.equal(summary.failed, 0, `caller failures:\n${child.tail(80)}\nworker:\n${worker.tail(40)}`);
  assert.equal(exit.code, 0);
  for (const name of ['ready', 'greet', 'caller_worker_id_injected', 'metadata', 'non_object_payloads',
    'undefined_result', 'large_payload', 'unknown_function', 'fail', 'fail_string', 'timeout', 'slow_ok',
    'void', 'concurrency', 'nested', 'functions_list', 'trigger_type', 'trigger_rejected', 'channel']) {
    assert.equal(results[name], 'PASS', `${name}: ${results[name]}\n${child.tail(60)}`);
  }
  assert.equal(summary.passed, 19);
  // The caller is gone; the worker still connected, nothing else left.
  await assertNoLeaks(manager, { workers: 1 });
  // Metrics count what happened.
  const metrics = (await manager.get('/metrics')).text;
  assert.match(metrics, /^actor_host_workers_connected 1$/m);
  assert.match(metrics, /^actor_host_invocations_total\{outcome="ok"\} [1-9]\d*$/m);
  assert.match(metrics, /^actor_host_invocations_total\{outcome="invocation_failed"\} [1-9]\d*$/m);
  assert.match(metrics, /^actor_host_iii_channel_frames_total [1-9]\d*$/m);
  assert.match(metrics, /^actor_host_iii_channels_open 0$/m);
  await worker.stop();
  await assertNoLeaks(manager);
});

test('streaming channels on raw sockets: refusals before the upgrade, one socket per end, relay and close', async () => {
  const manager = await startManager(['--worker-rbac-port', '0']);
  const client = await IiiClient.connect(manager.workerUrl);
  await client.registered();
  const created = await client.call('engine::channels::create', { buffer_size: 8 });
  const { writer, reader } = created.result ?? {};
  assert.ok(writer && reader, JSON.stringify(created));
  assert.equal(writer.channel_id, reader.channel_id);
  assert.equal(writer.access_key, reader.access_key);
  const bad = await client.call('engine::channels::create', { buffer_size: 0 });
  assert.equal(bad.error?.code, 'INVALID_ARGUMENTS', JSON.stringify(bad));
  const base = `${manager.workerUrl}/ws/channels`;
  const url = (id, key, dir) => `${base}/${id}?key=${encodeURIComponent(key)}&dir=${dir}`;

  // Unknown id or wrong key: 404 before any upgrade; a bad dir is 400.
  assert.equal((await openChannelSocket(url(reader.channel_id, 'wrong-key', 'read'))).status, 404);
  assert.equal((await openChannelSocket(url(crypto.randomUUID(), reader.access_key, 'read'))).status, 404);
  assert.equal((await openChannelSocket(url(reader.channel_id, reader.access_key, 'up'))).status, 400);

  // The writer first: frames wait for the reader. A second reader is closed at once.
  const w = (await openChannelSocket(url(writer.channel_id, writer.access_key, 'write'))).ws;
  w.send('{"type":"hello"}');
  w.send(Buffer.from([0, 1, 2, 255]));
  const r = await openChannelSocket(url(reader.channel_id, reader.access_key, 'read'));
  // The RBAC listener serves the same channels; the end is taken there too.
  const r2 = await openChannelSocket(`${manager.workerRbacUrl}/ws/channels/${reader.channel_id}?key=${reader.access_key}&dir=read`);
  const second = await r2.closed;
  assert.equal(second.code, 1008);
  assert.match(second.reason, /already connected/);
  w.send('last');
  w.close(1000, 'stream_complete');
  const end = await r.closed;
  assert.deepEqual(r.got, ['{"type":"hello"}', [0, 1, 2, 255], 'last']);
  assert.equal(end.code, 1000);
  assert.equal(end.reason, 'stream_complete');
  await manager.waitForStats({ 'actors.channel': 0 }, 10000);
  // Gone once used: the same ref is now refused.
  assert.equal((await openChannelSocket(url(reader.channel_id, reader.access_key, 'read'))).status, 404);

  // Backpressure: with buffer_size 4, a writer that sends 300 frames before the reader comes is
  // paused (not dropped); the reader then gets every frame, in order.
  const small = (await client.call('engine::channels::create', { buffer_size: 4 })).result;
  const bw = await openChannelSocket(url(small.writer.channel_id, small.writer.access_key, 'write'));
  const sent = [];
  for (let i = 0; i < 300; i++) {
    const frame = i % 3 === 0 ? Buffer.alloc(1000, i % 256) : `frame-${i}`;
    sent.push(typeof frame === 'string' ? frame : [...frame]);
    bw.ws.send(frame);
  }
  bw.ws.close(1000, 'stream_complete');
  const br = await openChannelSocket(url(small.reader.channel_id, small.reader.access_key, 'read'));
  assert.ok(br.ws, `reader refused (HTTP ${br.status}): the writer overran the buffer instead of being paused`);
  const bEnd = await br.closed;
  assert.equal(bEnd.reason, 'stream_complete');
  assert.equal(br.got.length, 300);
  assert.deepEqual(br.got, sent);
  const overflows = (await manager.get('/metrics')).text.match(/^actor_host_iii_channel_overflows_total (\d+)$/m);
  assert.equal(overflows?.[1], '0');

  // A channel whose owner disconnects before both ends connected is removed.
  const orphan = (await client.call('engine::channels::create', {})).result;
  const ow = await openChannelSocket(url(orphan.writer.channel_id, orphan.writer.access_key, 'write'));
  await client.terminate();
  assert.match((await ow.closed).reason, /owner disconnected/);
  assert.equal((await openChannelSocket(url(orphan.reader.channel_id, orphan.reader.access_key, 'read'))).status, 404);
  await manager.waitForStats({ 'actors.channel': 0 }, 10000);
  await assertNoLeaks(manager);
});

test('a worker that dies mid-call fails it with invocation_stopped', async () => {
  const manager = await startManager();
  const worker = startIiiWorker(manager.workerUrl);
  worker.mayExit = true; // `die` ends it
  const { results, summary, child } = await runIiiCaller(manager.workerUrl, ['--only', 'greet,die_stops_invocation', '--with-die']);
  assert.equal(summary?.failed, 0, child.tail(40));
  assert.equal(results.die_stops_invocation, 'PASS', child.tail(40));
  await worker.exited;
  await assertNoLeaks(manager);
});

test('a reconnecting worker reattaches; its replay is accepted without duplicates', async () => {
  const manager = await startManager();
  const proxy = await startProxy(manager.workerPort);
  try {
    startIiiWorker(proxy.url);
    const client = await IiiClient.connect(manager.workerUrl);
    await client.registered();
    await waitForFunction(client, 'greet');
    const before = await pollUntil(() => workersNamed(client, 'harness-worker'), (ws) => ws.length === 1, {
      what: 'harness-worker metadata', timeoutMs: 10000,
    });
    const oldId = before[0].id;

    // A call in flight when the worker's socket goes half-open: the manager
    // learns of it from the reattach and stops the call.
    const slow = client.call('slow', { ms: 4000 }, { timeoutMs: 15000 });
    await new Promise((r) => setTimeout(r, 300));
    proxy.cut();
    const stopped = await slow;
    assert.equal(stopped.error?.code, 'invocation_stopped', JSON.stringify(stopped));

    // The replay registered everything again, under the new connection only.
    const after = await pollUntil(() => workersNamed(client, 'harness-worker'), (ws) => ws.length === 1 && ws[0].id !== oldId, {
      what: 'the reattached harness-worker', timeoutMs: 15000,
    });
    const greet = await client.call('greet', { name: 'again' });
    assert.equal(greet.result?.greeting, 'Hello, again!');
    const fns = (await client.call('engine::functions::list', {})).result.functions;
    const ids = fns.map((f) => f.function_id);
    assert.deepEqual(ids, [...new Set(ids)], 'no duplicate function ids');
    for (const id of ['greet', 'echo', 'slow', 'fail', 'chain', 'noop', 'die']) assert.ok(ids.includes(id), `${id} in ${ids}`);
    const info = await client.call('engine::functions::info', { function_id: 'greet' });
    assert.equal(info.result?.worker_id, after[0].id, 'greet belongs to the new connection');
    // Old connection retired: this client plus the reattached worker.
    await assertNoLeaks(manager, { workers: 2 });
  } finally {
    await proxy.close();
  }
});

/** Runs the CLI to completion: {code, stdout, stderr}. */
const cli = (args, opts) => runCli(args, { timeoutMs: 15000, ...opts });

test('one catalog: an iii worker calls a Genkit flow, the front door and the CLI call and list iii functions', async () => {
  const manager = await startManager();
  await manager.startRuntime('gk', { kind: 'genkit' });
  const worker = startIiiWorker(manager.workerUrl);
  const client = await IiiClient.connect(manager.workerUrl);
  await client.registered();

  // iii -> Genkit, by runtime id and on the most recent runtime.
  const echo = await client.call('genkit::gk::/flow/echo', { a: [1, 2] });
  assert.deepEqual(echo.result, { a: [1, 2] }, JSON.stringify(echo));
  assert.equal(echo.function_id, 'genkit::gk::/flow/echo');
  const recent = await client.call('genkit::/flow/echo', 'hi');
  assert.equal(recent.result, 'hi', JSON.stringify(recent));
  const failed = await client.call('genkit::gk::/flow/fail', { message: 'kaput' });
  assert.equal(failed.error?.code, 'invocation_failed', JSON.stringify(failed));
  assert.equal(typeof failed.error?.message, 'string');
  const noRuntime = await client.call('genkit::nope::/flow/echo', 1);
  assert.equal(noRuntime.error?.code, 'function_not_found', JSON.stringify(noRuntime));
  const noAction = await client.call('genkit::gk::/flow/nope', 1);
  assert.equal(noAction.error?.code, 'function_not_found', JSON.stringify(noAction));
  const badId = await client.call('genkit::gk', 1);
  assert.equal(badId.error?.code, 'function_not_found', JSON.stringify(badId));

  // Genkit-side callers -> iii: the front door and the CLI.
  await waitForFunction(client, 'greet');
  const run = await manager.post('/api/rpc/runAction', { key: '/iii/greet', input: { name: 'http' } });
  assert.equal(run.status, 200, run.text);
  assert.equal(run.json.result.greeting, 'Hello, http!');
  assert.ok(run.json.telemetry.traceId);
  assert.equal(run.headers['x-genkit-trace-id'], run.json.telemetry.traceId);
  const missing = await manager.post('/api/rpc/runAction', { key: '/iii/nope', input: 1 });
  assert.equal(missing.status, 404, missing.text);
  const threw = await manager.post('/api/rpc/runAction', { key: '/iii/fail', input: { message: 'boom' } });
  assert.equal(threw.status, 500, threw.text);
  assert.equal(threw.json.error.data.message, 'boom');
  assert.equal(threw.json.error.data.details.iiiCode, 'invocation_failed');

  const viaCli = await cli(['run', '/iii/greet', '{"name":"cli"}', '--json', '--manager', manager.apiUrl]);
  assert.equal(viaCli.code, 0, viaCli.stderr);
  assert.equal(JSON.parse(viaCli.stdout).result.greeting, 'Hello, cli!');
  const cliMissing = await cli(['run', '/iii/nope', '1', '--manager', manager.apiUrl]);
  assert.notEqual(cliMissing.code, 0);
  assert.match(cliMissing.stderr, /iii function nope not found/);

  // The iii functions listed like a runtime's actions, under runtime id "iii".
  const listed = await manager.get('/api/actions?runtimeId=iii');
  assert.equal(listed.status, 200, listed.text);
  const greet = listed.json['/iii/greet'];
  assert.ok(greet, JSON.stringify(listed.json));
  assert.equal(greet.key, '/iii/greet');
  assert.equal(greet.name, 'greet');
  assert.equal(greet.description, 'Greets by name');
  assert.deepEqual(greet.metadata.iii.metadata, { harness: true });
  assert.ok(!Object.keys(listed.json).some((k) => !k.startsWith('/iii/')), JSON.stringify(listed.json));
  const genkitList = await manager.get('/api/actions?runtimeId=gk');
  assert.ok(genkitList.json['/flow/echo'] && !genkitList.json['/iii/greet'], genkitList.text);
  const cliList = await cli(['actions', '--runtime', 'iii', '--manager', manager.apiUrl]);
  assert.equal(cliList.code, 0, cliList.stderr);
  assert.match(cliList.stdout, /\/iii\/greet\s.*Greets by name/);

  await client.terminate();
  await worker.stop();
  await assertNoLeaks(manager);
  await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 });
});

test('RBAC on the public worker endpoint: auth, forbidden calls, prefixes, a trigger type hook', async () => {
  const manager = await startManager([
    '--worker-rbac-port', '0',
    '--worker-auth-function', 'test::auth',
    '--worker-expose-functions', 'api::*',
    '--worker-on-trigger-type-registration', 'test::on_type',
  ]);
  // A trusted worker on the main endpoint provides the auth function and the hook.
  const trusted = await IiiClient.connect(manager.workerUrl);
  await trusted.registered();
  const authInputs = [];
  trusted.register('test::auth', async (input) => {
    authInputs.push(input);
    if (input.headers['x-token'] !== 'good') throw new Error('bad token');
    return {
      allowed_functions: ['secret::granted'],
      forbidden_functions: ['api::blocked'],
      allow_trigger_type_registration: true,
      function_registration_prefix: 'tenant',
      context: { tenant: 't1' },
    };
  });
  const hookInputs = [];
  trusted.register('test::on_type', async (input) => {
    hookInputs.push(input);
    if (input.trigger_type_id === 'refuse-me') return null;
    return { trigger_type_id: input.trigger_type_id === 'rename-me' ? 'renamed' : input.trigger_type_id };
  });
  for (const id of ['api::hello', 'api::blocked', 'secret::x', 'secret::granted']) trusted.register(id, async () => ({ from: id }));
  await waitForFunction(trusted, 'secret::granted');

  // A rejected auth: an error frame, then the socket closes; nothing registered.
  const rejected = await IiiClient.connect(`${manager.workerRbacUrl}/?k=v&k=w`, { headers: { 'x-token': 'bad' } });
  const err = await rejected.waitFor((f) => f.type === 'error', 10000, 'AUTH_ERROR frame');
  assert.equal(err.error.code, 'AUTH_ERROR');
  await rejected.closed;
  assert.ok(!rejected.frames.some((f) => f.type === 'workerregistered'));
  assert.deepEqual(authInputs[0].query_params, { k: ['v', 'w'] });
  assert.equal(authInputs[0].headers['x-token'], 'bad');
  assert.equal(typeof authInputs[0].ip_address, 'string');

  const pub = await IiiClient.connect(manager.workerRbacUrl, { headers: { 'x-token': 'good' } });
  await pub.registered();
  // Forbidden: not exposed, explicitly forbidden; allowed: exposed, granted.
  const notExposed = await pub.call('secret::x', {});
  assert.equal(notExposed.error?.code, 'FORBIDDEN', JSON.stringify(notExposed));
  assert.match(notExposed.error.message, /rbac\.expose_functions/);
  const forbidden = await pub.call('api::blocked', {});
  assert.equal(forbidden.error?.code, 'FORBIDDEN');
  assert.match(forbidden.error.message, /rbac\.forbidden_functions/);
  assert.deepEqual((await pub.call('api::hello', {})).result, { from: 'api::hello' });
  assert.deepEqual((await pub.call('secret::granted', {})).result, { from: 'secret::granted' });

  // Prefix round trip: registered as tenant::fn, invoked by that name, the
  // worker sees its own id.
  let seen;
  pub.register('fn', async (data, frame) => {
    seen = frame.function_id;
    return { tenant: data };
  });
  await waitForFunction(trusted, 'tenant::fn');
  const viaPrefix = await trusted.call('tenant::fn', { x: 1 });
  assert.equal(viaPrefix.result?.tenant?.x, 1, JSON.stringify(viaPrefix));
  assert.equal(seen, 'fn');
  assert.equal((await trusted.call('fn', {})).error?.code, 'function_not_found');

  // The trigger type hook renames one type and refuses another.
  pub.send({ type: 'registertriggertype', id: 'rename-me', description: 'r' });
  pub.send({ type: 'registertriggertype', id: 'refuse-me', description: 'x' });
  await pollUntil(async () => hookInputs.length, (n) => n === 2, { what: 'both hook calls' });
  assert.deepEqual(hookInputs[0].context, { tenant: 't1' });
  trusted.send({ type: 'registertrigger', id: 'b-1', trigger_type: 'renamed', function_id: 'api::hello', config: {} });
  const delivered = await pub.waitFor((f) => f.type === 'registertrigger', 10000, 'registertrigger of the renamed type');
  assert.equal(delivered.trigger_type, 'renamed');
  trusted.send({ type: 'registertrigger', id: 'b-2', trigger_type: 'refuse-me', function_id: 'api::hello', config: {} });
  trusted.send({ type: 'registertrigger', id: 'b-3', trigger_type: 'rename-me', function_id: 'api::hello', config: {} });
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(pub.frames.filter((f) => f.type === 'registertrigger').map((f) => f.id), ['b-1'], 'refused and renamed-away types get no bindings');

  await pub.terminate();
  await trusted.terminate();
  await assertNoLeaks(manager);
});

/** The EVENT lines a watcher.mjs peer printed, parsed. */
function watcherEvents(watcher) {
  return watcher.lines.filter((l) => l.startsWith('EVENT ')).map((l) => JSON.parse(l.slice(6)));
}

test('engine::workers-available: an SDK worker bound with registerTrigger hears workers come and go', async () => {
  const manager = await startManager();
  const client = await IiiClient.connect(manager.workerUrl);
  await client.registered();
  const watcher = startIiiPeer('watcher', manager.workerUrl);
  // The binding is live once it shows up in the engine's list.
  await pollUntil(
    async () => (await client.call('engine::registered-triggers::list', { trigger_type: 'engine::workers-available' })).result?.registered_triggers ?? [],
    (rows) => rows.length === 1 && rows[0].status === 'active',
    { what: 'the watcher binding', timeoutMs: 15000, intervalMs: 100 }
  );
  const types = (await client.call('engine::triggers::list', {})).result.triggers.map((t) => t.id);
  assert.ok(types.includes('engine::workers-available') && types.includes('engine::functions-available'), JSON.stringify(types));

  const other = await IiiClient.connect(manager.workerUrl);
  const otherId = await other.registered();
  await pollUntil(async () => watcherEvents(watcher), (es) => es.some((e) => e.data.worker_id === otherId && e.data.event === 'worker_connected'),
    { what: 'worker_connected of the other worker', timeoutMs: 10000, intervalMs: 50 });
  const connected = watcherEvents(watcher).find((e) => e.data.worker_id === otherId);
  assert.deepEqual(connected, { data: { event: 'worker_connected', worker_id: otherId }, metadata: { watcher: 'watcher' } },
    'binding metadata as invocation metadata, no _caller_worker_id');
  other.send({ type: 'invokefunction', function_id: 'engine::workers::register', action: { type: 'void' }, data: { name: 'other' } });
  await pollUntil(async () => watcherEvents(watcher), (es) => es.some((e) => e.data.worker_id === otherId && e.data.event === 'worker_metadata_updated'),
    { what: 'worker_metadata_updated', timeoutMs: 10000, intervalMs: 50 });
  await other.terminate();
  await pollUntil(async () => watcherEvents(watcher), (es) => es.some((e) => e.data.worker_id === otherId && e.data.event === 'worker_disconnected'),
    { what: 'worker_disconnected', timeoutMs: 10000, intervalMs: 50 });

  await watcher.stop();
  await client.terminate();
  await assertNoLeaks(manager);
});

test('engine::register_trigger through a provider worker: success, the provider error, parked, unregister', async () => {
  const manager = await startManager();
  const worker = startIiiWorker(manager.workerUrl); // provides harness::tick
  const binder = await IiiClient.connect(manager.workerUrl);
  await binder.registered();
  await waitForFunction(binder, 'greet');
  const ticks = [];
  binder.register('binder::on_tick', async (data, frame) => {
    ticks.push({ data, metadata: frame.metadata });
    return null;
  });
  await waitForFunction(binder, 'binder::on_tick');

  // Through the SDK's own trigger(): the answer waits for the provider.
  const ok = await sdkCall(manager.workerUrl, 'engine::register_trigger',
    { trigger_type: 'harness::tick', function_id: 'binder::on_tick', config: { count: 2, interval_ms: 20 }, metadata: { m: 1 } });
  assert.ok(ok.result?.id, ok.line);
  await pollUntil(async () => ticks.length, (n) => n === 2, { what: 'two ticks', timeoutMs: 10000, intervalMs: 50 });
  // The provider fires them as its own (void) calls, so _caller_worker_id is the provider's.
  const { _caller_worker_id, ...tick } = ticks[0].data;
  assert.deepEqual({ data: tick, metadata: ticks[0].metadata }, { data: { tick: 1, trigger_id: ok.result.id }, metadata: { m: 1 } });
  assert.equal(typeof _caller_worker_id, 'string');
  // It belongs to no connection: the SDK caller has gone, the binding stays.
  const info = await binder.call('engine::registered-triggers::info', { id: ok.result.id });
  assert.equal(info.result?.status, 'active', JSON.stringify(info));
  assert.equal(info.result.owner_worker_id, null);
  assert.equal(info.result.trigger?.id, 'harness::tick');

  const refused = await sdkCall(manager.workerUrl, 'engine::register_trigger',
    { trigger_type: 'harness::tick', function_id: 'binder::on_tick', config: { reject: true } });
  assert.equal(refused.error?.code, 'trigger_registration_failed', refused.line);
  assert.match(refused.error.message, /reject=true/);

  const parked = await binder.call('engine::register_trigger', { trigger_type: 'nobody::type', function_id: 'binder::on_tick', config: {} });
  assert.ok(parked.result?.id, JSON.stringify(parked));
  const pending = (await binder.call('engine::registered-triggers::list', { include_pending: true })).result.registered_triggers;
  assert.deepEqual(pending.map((r) => [r.trigger_type, r.status]).sort(), [['harness::tick', 'active'], ['nobody::type', 'pending']]);

  const removed = await binder.call('engine::unregister_trigger', { id: ok.result.id });
  assert.deepEqual(removed.result, { removed: true });
  await worker.waitForLine(new RegExp(`unregisterTrigger ${ok.result.id}`));
  assert.deepEqual((await binder.call('engine::unregister_trigger', { id: ok.result.id })).result, { removed: false });
  assert.deepEqual((await binder.call('engine::unregister_trigger', { id: parked.result.id })).result, { removed: true });

  await binder.terminate();
  await worker.stop();
  await assertNoLeaks(manager);
});

test('middleware on the RBAC listener answers the calls of its workers (SDK callers)', async () => {
  const manager = await startManager([
    '--worker-rbac-port', '0',
    '--worker-expose-functions', 'api::*,engine::functions::list',
    '--worker-middleware', 'test::mw',
  ]);
  const trusted = await IiiClient.connect(manager.workerUrl);
  await trusted.registered();
  const seen = [];
  trusted.register('test::mw', async (input, frame) => {
    seen.push({ input, metadata: frame.metadata });
    if (input.function_id === 'api::deny') throw new Error('denied by middleware');
    const r = await trusted.call(input.function_id, input.payload);
    if (r.error) throw new Error(r.error.message);
    return { via: 'mw', result: r.result };
  });
  trusted.register('api::hello', async (data) => ({ hello: data?.name ?? null }));
  trusted.register('secret::x', async () => ({ secret: true }));
  await waitForFunction(trusted, 'api::hello');

  const answered = await sdkCall(manager.workerRbacUrl, 'api::hello', { name: 'sdk' });
  assert.deepEqual(answered.result, { via: 'mw', result: { hello: 'sdk' } }, answered.line);
  const mwIn = seen.find((s) => s.input.function_id === 'api::hello');
  assert.deepEqual(mwIn.input, { function_id: 'api::hello', payload: { name: 'sdk' }, action: null, context: {} });

  const denied = await sdkCall(manager.workerRbacUrl, 'api::deny', {});
  assert.equal(denied.error?.code, 'invocation_failed', denied.line);
  assert.match(denied.error.message, /denied by middleware/);

  // RBAC comes first: a function that is not exposed never reaches the middleware.
  const forbidden = await sdkCall(manager.workerRbacUrl, 'secret::x', {});
  assert.equal(forbidden.error?.code, 'FORBIDDEN', forbidden.line);

  // Void calls go to the middleware too.
  const sent = await sdkCall(manager.workerRbacUrl, 'api::hello', { name: 'void' }, { void: true });
  assert.equal(sent.line, 'SENT');
  await pollUntil(async () => seen.filter((s) => s.input.payload?.name === 'void'), (xs) => xs.length === 1, { what: 'the void call at the middleware' });
  assert.deepEqual(seen.find((s) => s.input.payload?.name === 'void').input.action, { type: 'void' });

  // engine:: calls bypass it (the SDK's own engine::workers::register on every
  // connect, and listings), and the listing is filtered by the session.
  assert.ok(!seen.some((s) => s.input.function_id.startsWith('engine::')), JSON.stringify(seen.map((s) => s.input.function_id)));
  const listed = await sdkCall(manager.workerRbacUrl, 'engine::functions::list', {});
  assert.deepEqual(listed.result?.functions?.map((f) => f.function_id), ['api::hello'], listed.line);
  const all = (await trusted.call('engine::functions::list', {})).result.functions.map((f) => f.function_id);
  assert.deepEqual(all, ['api::hello', 'secret::x', 'test::mw']);

  await trusted.terminate();
  await assertNoLeaks(manager);
});

test('registration hooks on the RBAC listener rename and refuse functions and rewrite or refuse triggers (SDK worker); metadata filters', async () => {
  const manager = await startManager([
    '--worker-rbac-port', '0',
    '--worker-expose-functions', 'pub::*,metadata:open=true',
    '--worker-on-function-registration', 'test::on_fn',
    '--worker-on-trigger-registration', 'test::on_trigger',
  ]);
  const provider = startIiiWorker(manager.workerUrl); // harness::tick on the trusted port
  const trusted = await IiiClient.connect(manager.workerUrl);
  await trusted.registered();
  const fnHook = [];
  trusted.register('test::on_fn', async (input) => {
    fnHook.push(input);
    if (input.function_id === 'pub::refuse-me') throw new Error('refused');
    if (input.function_id === 'pub::rename-me') return { function_id: 'pub::renamed', description: 'renamed by the hook' };
    return { function_id: input.function_id };
  });
  const trigHook = [];
  trusted.register('test::on_trigger', async (input) => {
    trigHook.push(input);
    if (input.config?.refuse) return null;
    return { config: { ...input.config, count: 1, interval_ms: 10, rewritten: true } };
  });
  await waitForFunction(trusted, 'greet');
  await waitForFunction(trusted, 'test::on_trigger');

  const registrar = startIiiPeer('registrar', manager.workerRbacUrl);
  await waitForFunction(trusted, 'pub::renamed');
  const fns = (await trusted.call('engine::functions::list', { prefix: 'pub::' })).result.functions;
  assert.deepEqual(fns.map((f) => [f.function_id, f.description]), [['pub::keep', 'registrar pub::keep'], ['pub::renamed', 'renamed by the hook']]);
  assert.deepEqual(fnHook.map((i) => i.function_id).sort(), ['pub::keep', 'pub::refuse-me', 'pub::rename-me']);
  assert.deepEqual(fnHook[0].context, {});

  // The trigger hook rewrote one binding's config (the provider got the
  // rewritten one) and refused the other.
  const fired = await provider.waitForLine(/registerTrigger (\S+) -> pub::keep config=(.*)$/, 15000);
  assert.deepEqual(JSON.parse(fired[2]), { count: 1, tag: 'keep', interval_ms: 10, rewritten: true });
  await pollUntil(async () => trigHook.length, (n) => n === 2, { what: 'both trigger hook calls' });
  const bindings = (await trusted.call('engine::registered-triggers::list', { include_pending: true })).result.registered_triggers;
  assert.equal(bindings.length, 1, JSON.stringify(bindings));
  assert.equal(bindings[0].config.rewritten, true);
  assert.ok(trigHook.every((i) => i.trigger_type === 'harness::tick' && typeof i.trigger_id === 'string'));

  // A metadata filter exposes functions by their registered metadata.
  trusted.register('x::open', async () => ({ open: true }), { metadata: { open: true } });
  trusted.register('x::closed', async () => ({ open: false }), { metadata: { open: false } });
  await waitForFunction(trusted, 'x::closed');
  const open = await sdkCall(manager.workerRbacUrl, 'x::open', {});
  assert.deepEqual(open.result, { open: true }, open.line);
  const closed = await sdkCall(manager.workerRbacUrl, 'x::closed', {});
  assert.equal(closed.error?.code, 'FORBIDDEN', closed.line);

  await registrar.stop();
  await trusted.terminate();
  await provider.stop();
  await assertNoLeaks(manager);
});
