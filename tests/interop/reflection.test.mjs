// The manager against real runtimes, both kinds (RUNTIMES: the Genkit JS
// runtime genkit-runtime.mjs and our `actor-host --role runtime --demo`,
// which hosts the same actions): registration, listing, unary/streaming/bidi
// runs, errors, cancel, routing. Every test runs once per kind.
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { cleanup, RUNTIMES, startManager, startManagerWithRuntime, TRACE_ID_RE } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const ORDER = {
  customer: { name: 'Ada', email: 'ada@example.com', address: { street: '1 Main St', city: 'Springfield', zip: '12345' } },
  items: [
    { sku: 'a', qty: 2, unitPrice: 1.25 },
    { sku: 'b', qty: 1, unitPrice: 10 },
  ],
  priority: 'high',
};

for (const kind of RUNTIMES) describe(`${kind} runtime`, () => {
  // The starting point of most tests: a manager and one runtime of this kind.
  const withRuntime = (id = 'rt', opts = {}) => startManagerWithRuntime(id, { ...opts, runtime: { kind, ...opts.runtime } });

  test('a registered runtime is listed with its RuntimeInfo', async () => {
    const t0 = Date.now();
    const manager = await startManager();
    const runtime = await manager.startRuntime('rt-info', { kind, name: 'interop-harness' });

    const list = await manager.runtimes();
    assert.equal(list.length, 1);
    const info = list[0];
    assert.equal(info.id, 'rt-info');
    assert.equal(info.pid, runtime.pid);
    assert.equal(info.name, 'interop-harness');
    if (kind === 'genkit') assert.equal(info.genkitVersion, 'nodejs/1.42.0');
    else assert.match(info.genkitVersion, /^cpp\/\d+\.\d+\.\d+/);
    assert.equal(info.reflectionApiSpecVersion, 1);
    assert.equal(typeof info.reflectionServerUrl, 'string');
    assert.match(info.reflectionServerUrl, new RegExp(`^ws://[^/]+:${manager.reflectionPort}/?$`));
    const ts = Date.parse(info.timestamp);
    assert.ok(!Number.isNaN(ts), `timestamp ${info.timestamp} is not a date`);
    assert.ok(ts >= t0 - 1000 && ts <= Date.now() + 1000, `timestamp ${info.timestamp} is not the registration time`);

    const api = await manager.api();
    assert.deepEqual(await api.call('listRuntimes'), { runtimes: list });
  });

  test('listActions returns the action map', async () => {
    const { manager } = await withRuntime();
    const actions = await manager.json('/api/actions');
    assert.equal(actions.actions, undefined, 'the map is not wrapped in {actions}');
    for (const key of ['/flow/echo', '/flow/streamCount', '/flow/bidiSum', '/flow/chat', '/tool/add']) {
      assert.ok(actions[key], `${key} is listed`);
      assert.equal(actions[key].key, key);
    }
    assert.equal(actions['/flow/echo'].name, 'echo');
    assert.equal(actions['/flow/bidiSum'].metadata?.bidi, true);
    assert.equal(actions['/tool/add'].description, 'Adds two numbers.');
    assert.equal(actions['/flow/createOrder'].metadata?.category, 'harness');
    assert.equal(actions['/flow/createOrder'].inputSchema?.type, 'object');

    const api = await manager.api();
    const viaWs = await api.call('listActions', {});
    assert.deepEqual(Object.keys(viaWs.actions).sort(), Object.keys(actions).sort());
  });

  test('listValues returns defaultModel and middleware values', async () => {
    const { manager } = await withRuntime();
    assert.deepEqual(await manager.json('/api/values?type=defaultModel'), {
      defaultModel: { name: 'harness/fake-model' },
    });
    const mw = await manager.json('/api/values?type=middleware');
    assert.equal(mw.harnessTag?.name, 'harnessTag');
    assert.equal(mw.harnessTag?.description, 'Harness middleware (does nothing).');

    const api = await manager.api();
    assert.deepEqual(await api.call('listValues', { type: 'defaultModel' }), {
      values: { defaultModel: { name: 'harness/fake-model' } },
    });
  });

  test('listValues with an unsupported type is the runtime error -32602 / HTTP 400', async () => {
    const { manager } = await withRuntime();
    const res = await manager.get('/api/values?type=prompt');
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, /not supported/);

    const api = await manager.api();
    const reply = await api.request('listValues', { type: 'prompt' });
    assert.equal(reply.error?.code, -32602);
  });

  test('unary runAction returns the result and the trace id', async () => {
    const { manager } = await withRuntime();
    const input = { hello: 'world', n: [1, 2, 3], nested: { ok: true, nothing: null } };
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input });
    assert.equal(res.status, 200, res.text);
    const body = res.json;
    assert.deepEqual(body.result, input);
    assert.match(body.telemetry?.traceId ?? '', TRACE_ID_RE);
    assert.equal(res.traceIdHeader, body.telemetry.traceId);
  });

  test('createOrder with valid input returns the computed order', async () => {
    const { manager } = await withRuntime();
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/createOrder', input: ORDER });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.result, {
      orderId: 'ord-ada-2',
      total: 12.5,
      itemCount: 3,
      priority: 'high',
      shipTo: 'Springfield 12345',
    });
  });

  test('createOrder with invalid input is INVALID_ARGUMENT / HTTP 400', async () => {
    const { manager } = await withRuntime();
    const bad = structuredClone(ORDER);
    bad.customer.address.zip = 'abc';
    delete bad.items;
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/createOrder', input: bad });
    assert.equal(res.status, 400, res.text);
    const { error } = res.json;
    assert.equal(error.code, -32000);
    assert.equal(error.data?.code, 3);
    assert.match(error.message, /INVALID_ARGUMENT/);
  });

  test('a failing action is INTERNAL / HTTP 500 with its message', async () => {
    const { manager } = await withRuntime();
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/fail', input: { message: 'kaboom 42' } });
    assert.equal(res.status, 500, res.text);
    const { error } = res.json;
    assert.equal(error.code, -32000);
    assert.equal(error.message, 'kaboom 42');
    assert.equal(error.data?.code, 13);
    assert.equal(error.data?.message, 'kaboom 42');
    assert.match(error.data?.details?.traceId ?? '', TRACE_ID_RE);
  });

  test('a failure with status NOT_FOUND maps to HTTP 404', async () => {
    const { manager } = await withRuntime();
    const res = await manager.post('/api/rpc/runAction', {
      key: '/flow/fail',
      input: { status: 'NOT_FOUND', message: 'no such thing' },
    });
    assert.equal(res.status, 404, res.text);
    assert.equal(res.json.error.data?.code, 5);
    assert.match(res.json.error.message, /no such thing/);
  });

  test('an unknown action key is the runtime error -32602', async () => {
    const { manager } = await withRuntime();
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/does-not-exist', input: 1 });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.error.code, -32602);
    assert.match(res.json.error.message, /\/flow\/does-not-exist/);
  });

  test('streamAction streams 50 chunks in order, then the result', async () => {
    const { manager } = await withRuntime();
    const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 50 } });
    assert.equal(s.status, 200);
    assert.match(s.headers['content-type'] ?? '', /^application\/x-ndjson/);
    const lines = await s.lines.drain(10000);
    assert.equal(lines.length, 51, `got ${JSON.stringify(lines).slice(0, 500)}`);
    assert.deepEqual(
      lines.slice(0, 50),
      Array.from({ length: 50 }, (_, i) => ({ i }))
    );
    const last = lines[50];
    assert.deepEqual(last.result, { count: 50, sum: 1225 });
    assert.match(last.telemetry?.traceId ?? '', TRACE_ID_RE);
    assert.equal(s.traceId, last.telemetry.traceId, 'X-Genkit-Trace-Id header');
    await manager.assertHealthy();
  });

  test('runAction with stream over /api/ws sends runActionState, then chunks, then the result', async () => {
    const { manager } = await withRuntime();
    const api = await manager.api();
    const reply = await api.request('runAction', { key: '/flow/streamCount', input: { n: 20 }, stream: true }, { id: 'stream-1' });
    assert.deepEqual(reply.result?.result, { count: 20, sum: 190 }, JSON.stringify(reply));

    const mine = api.messages.filter((m) => m.params?.requestId === 'stream-1');
    assert.equal(mine[0]?.method, 'runActionState');
    assert.equal(mine[0].params.state.traceId, reply.result.telemetry.traceId);
    const chunks = mine.filter((m) => m.method === 'streamChunk').map((m) => m.params.chunk);
    assert.deepEqual(chunks, Array.from({ length: 20 }, (_, i) => ({ i })));
    // Everything for the run arrived before its response.
    assert.ok(api.messages.indexOf(mine.at(-1)) < api.messages.indexOf(reply));
  });

  test('cancelAction stops a running action', async () => {
    const { manager } = await withRuntime();
    const api = await manager.api();
    const run = api.request('runAction', { key: '/flow/slow', input: { ms: 30000 } }, { id: 'slow-1', timeoutMs: 20000 });
    const state = await api.waitFor(
      (m) => m.method === 'runActionState' && m.params?.requestId === 'slow-1',
      10000,
      'runActionState for slow-1'
    );
    const traceId = state.params.state.traceId;
    assert.match(traceId, TRACE_ID_RE);

    const cancelled = await manager.post('/api/rpc/cancelAction', { traceId });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.deepEqual(cancelled.json, { message: 'Action cancelled' });
    const t0 = Date.now();
    const reply = await run;
    const elapsed = Date.now() - t0;
    assert.equal(reply.error?.data?.code, 1, JSON.stringify(reply));
    assert.ok(elapsed < 1000, `run ended ${elapsed} ms after the cancel`);

    // The trace is finished now: cancelling again is the runtime's -32602.
    const again = await manager.post('/api/rpc/cancelAction', { traceId });
    assert.equal(again.status, 400, again.text);
    assert.equal(again.json.error.code, -32602);
    await manager.assertHealthy();
  });

  test('cancelAction over /api/ws', async () => {
    const { manager } = await withRuntime();
    const api = await manager.api();
    const run = api.request('runAction', { key: '/flow/slow', input: { ms: 30000 } }, { id: 7, timeoutMs: 20000 });
    const state = await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === 7, 10000, 'runActionState for 7');
    assert.deepEqual(await api.call('cancelAction', { traceId: state.params.state.traceId }), { message: 'Action cancelled' });
    const reply = await run;
    assert.equal(reply.error?.code, -32000);
    assert.equal(reply.error?.data?.code, 1);
    await manager.assertHealthy();
  });

  test('context reaches the action', async () => {
    const { manager } = await withRuntime();
    const res = await manager.post('/api/rpc/runAction', {
      key: '/flow/whoami',
      input: { q: 1 },
      context: { auth: { uid: 'u1' } },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.result, { input: { q: 1 }, context: { auth: { uid: 'u1' } } });
  });

  test('bidi over HTTP: streamAction?bidi=true with sendBidiInput/endBidiInput', async () => {
    const { manager } = await withRuntime();
    const s = await manager.stream('/api/rpc/streamAction?bidi=true', { key: '/flow/chat' });
    assert.equal(s.status, 200);
    const traceId = s.traceId;
    assert.match(traceId ?? '', TRACE_ID_RE, 'X-Genkit-Trace-Id header');

    const send = async (chunk) => {
      const r = await manager.post('/api/sendBidiInput', { traceId, chunk });
      assert.equal(r.status, 200, r.text);
      assert.match(r.text, /OK/);
    };
    await send({ text: 'hi' });
    assert.deepEqual((await s.lines.next(5000, 'first reply')).value, { reply: 'HI', turn: 1 });
    await send({ text: 'yo' });
    assert.deepEqual((await s.lines.next(5000, 'second reply')).value, { reply: 'YO', turn: 2 });

    const end = await manager.post('/api/endBidiInput', { traceId });
    assert.equal(end.status, 200, end.text);
    const rest = await s.lines.drain(5000);
    assert.equal(rest.length, 1, JSON.stringify(rest));
    assert.deepEqual(rest[0].result, { turns: 2, transcript: ['hi', 'yo'] });
    assert.equal(rest[0].telemetry?.traceId, traceId);
    await manager.assertHealthy();
  });

  test('sendBidiInput/endBidiInput for an unknown trace id is 404', async () => {
    const { manager } = await withRuntime();
    const traceId = '0123456789abcdef0123456789abcdef';
    const send = await manager.post('/api/sendBidiInput', { traceId, chunk: { text: 'hi' } });
    assert.equal(send.status, 404, send.text);
    assert.match(send.text, /Stream not found/);
    const end = await manager.post('/api/endBidiInput', { traceId });
    assert.equal(end.status, 404, end.text);
    assert.match(end.text, /Stream not found/);
  });

  test('bidi over /api/ws: bidiSum with sendInputStreamChunk/endInputStream', async () => {
    const { manager } = await withRuntime();
    const api = await manager.api();
    const run = api.request('runAction', { key: '/flow/bidiSum', stream: true, streamInput: true }, { id: 'bidi-1' });
    // genkit 1.42 registers the input channel only after an async action
    // lookup and drops input for unknown requests; runActionState comes after
    // the channel exists. (The cpp runtime keeps input from the start; waiting
    // does no harm.)
    await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === 'bidi-1', 10000, 'runActionState');
    for (const x of [1, 2, 3]) api.notify('sendInputStreamChunk', { requestId: 'bidi-1', chunk: x });
    api.notify('endInputStream', { requestId: 'bidi-1' });
    const reply = await run;
    assert.deepEqual(reply.result?.result, { total: 6, count: 3 }, JSON.stringify(reply));
    const chunks = api.notificationsFor('streamChunk', 'bidi-1').map((m) => m.params.chunk);
    assert.deepEqual(chunks, [{ runningTotal: 1 }, { runningTotal: 3 }, { runningTotal: 6 }]);
    await manager.assertHealthy();
  });

  test('64 concurrent runAction calls on one socket each get their own reply', async () => {
    const { manager } = await withRuntime();
    const api = await manager.api();
    const inputs = Array.from({ length: 64 }, (_, i) => ({ i, tag: `call-${i}-${Math.random().toString(36).slice(2)}` }));
    const replies = await Promise.all(
      inputs.map((input, i) => api.request('runAction', { key: '/flow/echo', input }, { id: i % 2 ? i : `c${i}`, timeoutMs: 30000 }))
    );
    replies.forEach((reply, i) => {
      assert.equal(reply.id, i % 2 ? i : `c${i}`);
      assert.deepEqual(reply.result?.result, inputs[i], `reply ${i}: ${JSON.stringify(reply)}`);
    });
    const traceIds = new Set(replies.map((r) => r.result.telemetry.traceId));
    assert.equal(traceIds.size, 64, 'every run has its own trace');
    await manager.assertHealthy();
  });

  test('two runtimes: both listed, runtimeId routes, a dead one is gone', async () => {
    const manager = await startManager();
    await manager.startRuntime('rt-a', { kind });
    const b = await manager.startRuntime('rt-b', { kind });
    assert.deepEqual((await manager.runtimes()).map((r) => r.id), ['rt-a', 'rt-b']);

    for (const runtimeId of ['rt-a', 'rt-b']) {
      const res = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: runtimeId, runtimeId });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.result, runtimeId);
      assert.equal((await manager.get(`/api/actions?runtimeId=${runtimeId}`)).status, 200);
    }

    const nope = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 1, runtimeId: 'nope' });
    assert.equal(nope.status, 404, nope.text);
    assert.equal(nope.json.error.code, -32000);
    assert.equal(nope.json.error.message, 'Runtime nope not found');
    assert.equal(nope.json.error.data?.code, 5);
    assert.equal((await manager.get('/api/actions?runtimeId=nope')).status, 404);

    b.kill('SIGKILL');
    await manager.waitForRuntimeGone('rt-b');
    const gone = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 1, runtimeId: 'rt-b' });
    assert.equal(gone.status, 404, gone.text);
    assert.equal(gone.json.error.message, 'Runtime rt-b not found');
    const stillA = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 'a', runtimeId: 'rt-a' });
    assert.equal(stillA.status, 200, stillA.text);
    assert.equal(stillA.json.result, 'a');
    const byDefault = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 'default' });
    assert.equal(byDefault.status, 200, byDefault.text);
    assert.equal(byDefault.json.result, 'default');
  });

  test('without runtimeId the most recently registered runtime is used', async () => {
    const manager = await startManager();
    await manager.startRuntime('rt-a', { kind });
    // The second runtime is a fake one, so we can see which one a call reaches.
    const fake = await manager.fakeRuntime('rt-fake');
    fake.handlers.listActions = () => ({ result: { actions: { '/flow/fakeOnly': { key: '/flow/fakeOnly', name: 'fakeOnly' } } } });
    fake.handlers.runAction = (params) => ({
      result: { result: { from: 'fake', key: params.key }, telemetry: { traceId: 'f'.repeat(32) } },
    });
    assert.deepEqual((await fake.register('rt-fake')).result, {});
    assert.deepEqual((await manager.runtimes()).map((r) => r.id), ['rt-a', 'rt-fake']);

    assert.deepEqual(Object.keys(await manager.json('/api/actions')), ['/flow/fakeOnly']);
    const toFake = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 1 });
    assert.equal(toFake.status, 200, toFake.text);
    assert.deepEqual(toFake.json.result, { from: 'fake', key: '/flow/echo' });

    const toA = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 1, runtimeId: 'rt-a' });
    assert.equal(toA.json.result, 1);

    await fake.close();
    await manager.waitForRuntimeGone('rt-fake');
    const fallback = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 'back to a' });
    assert.equal(fallback.status, 200, fallback.text);
    assert.equal(fallback.json.result, 'back to a');
  });
});

test('a genkit and a cpp runtime on one manager: each is reached by its runtimeId', { skip: !(RUNTIMES.includes('genkit') && RUNTIMES.includes('cpp')) }, async () => {
  const manager = await startManager();
  const js = await manager.startRuntime('rt-js', { kind: 'genkit' });
  const cpp = await manager.startRuntime('rt-cpp', { kind: 'cpp' });
  const list = await manager.runtimes();
  assert.deepEqual(list.map((r) => [r.id, r.pid]), [['rt-js', js.pid], ['rt-cpp', cpp.pid]]);
  assert.equal(list[0].genkitVersion, 'nodejs/1.42.0');
  assert.match(list[1].genkitVersion, /^cpp\//);

  // The same action map (the scenario's actions) from both.
  const jsActions = await manager.json('/api/actions?runtimeId=rt-js');
  const cppActions = await manager.json('/api/actions?runtimeId=rt-cpp');
  for (const key of ['/flow/echo', '/flow/streamCount', '/flow/slow', '/flow/fail', '/flow/createOrder', '/flow/whoami', '/flow/chat', '/flow/bidiSum', '/tool/add']) {
    assert.ok(jsActions[key] && cppActions[key], `${key} is listed by both`);
  }

  const api = await manager.api();
  const [a, b] = await Promise.all(
    ['rt-js', 'rt-cpp'].map((runtimeId) => api.call('runAction', { key: '/flow/createOrder', input: ORDER, runtimeId }))
  );
  assert.deepEqual(a.result, b.result);
  // Without runtimeId: the most recently registered one (cpp). Its trace id
  // is what cancelAction must be routed with.
  const run = api.request('runAction', { key: '/flow/slow', input: { ms: 30000 } }, { id: 'slow-cpp', timeoutMs: 20000 });
  const state = await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === 'slow-cpp', 10000, 'runActionState');
  const wrong = await manager.post('/api/rpc/cancelAction', { traceId: state.params.state.traceId, runtimeId: 'rt-js' });
  assert.equal(wrong.status, 400, `cancelling at the other runtime: ${wrong.text}`);
  assert.equal(wrong.json.error.code, -32602);
  assert.deepEqual(await api.call('cancelAction', { traceId: state.params.state.traceId }), { message: 'Action cancelled' });
  assert.equal((await run).error?.data?.code, 1);
  await manager.assertHealthy();
});
