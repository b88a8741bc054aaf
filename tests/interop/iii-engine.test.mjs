// The engine side of the iii worker endpoint beyond routing, with raw
// clients and the iii-sdk peers watcher.mjs, call.mjs and registrar.mjs:
// RBAC on the public worker endpoint (auth function, exposed and forbidden
// functions, prefixes), engine trigger types (engine::workers-available),
// engine::register_trigger, middleware, registration hooks and metadata
// filters. Routing, channels and reconnects are in iii.test.mjs.
import assert from 'node:assert/strict';
import { after, afterEach, test } from 'node:test';
import { assertNoLeaks, cleanup, IiiClient, pollUntil, sdkCall, startIiiPeer, startIiiWorker, startManager, waitForFunction } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

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
