// Runtimes and callers going away, no runtime at all, timeouts, shutdown:
// callers must get a prompt error and the manager must not leak anything.
// The tests that need a real runtime run once per kind (RUNTIMES: the Genkit
// JS runtime and our `actor-host --role runtime --demo`).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, afterEach, describe, test } from 'node:test';
import { cleanup, RUNTIMES, startManager, startManagerWithRuntime, TRACE_ID_RE, withTimeout } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const PROMPT_MS = 5000;
const NOTHING_LEFT = {
  'actors.runtime_connection': 0,
  'actors.pending_request': 0,
  'sockets.runtime': 0,
  runtimes: 0,
};

function assertConnectionClosedError(error, runtimeId, method) {
  assert.ok(error, 'an error was reported');
  assert.equal(error.code, -32000, JSON.stringify(error));
  assert.match(error.message, /connection closed/);
  assert.equal(error.data?.code, 14, JSON.stringify(error));
  if (method) {
    assert.equal(error.message, `Runtime ${runtimeId} connection closed before the response was received (${method})`);
  }
}

for (const kind of RUNTIMES) describe(`${kind} runtime`, () => {
  const withRuntime = (id) => startManagerWithRuntime(id, { runtime: { kind } });

  test('runtime killed mid-stream: HTTP streamAction ends with an error promptly', async () => {
    const { manager, runtime } = await withRuntime('rt-kill');
    const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 100000, delayMs: 1 } });
    assert.equal(s.status, 200);
    for (let i = 0; i < 5; i++) {
      assert.deepEqual((await s.lines.next(10000, `chunk ${i}`)).value, { i });
    }

    runtime.kill('SIGKILL');
    const t0 = Date.now();
    const rest = await s.lines.drain(PROMPT_MS, 'end of the stream after the kill');
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < PROMPT_MS, `stream ended ${elapsed} ms after the kill`);
    const last = rest.at(-1);
    assert.ok(last?.error, `the last line is an error: ${JSON.stringify(last)}`);
    assertConnectionClosedError(last.error, 'rt-kill');
    assert.ok(rest.slice(0, -1).every((c, k) => c.i === k + 5), 'chunks before the error stay in order');

    await manager.waitForStats(NOTHING_LEFT);
  });

  test('runtime killed mid-stream: /api/ws runAction fails promptly', async () => {
    const { manager, runtime } = await withRuntime('rt-kill');
    const api = await manager.api();
    const run = api.request(
      'runAction',
      { key: '/flow/streamCount', input: { n: 100000, delayMs: 1 }, stream: true },
      { id: 'doomed', timeoutMs: 20000 }
    );
    await api.waitForCount((m) => m.method === 'streamChunk' && m.params?.requestId === 'doomed', 5, 10000, 'stream chunks');

    runtime.kill('SIGKILL');
    const t0 = Date.now();
    const reply = await withTimeout(run, PROMPT_MS, 'runAction reply after the kill');
    assert.ok(Date.now() - t0 < PROMPT_MS);
    assertConnectionClosedError(reply.error, 'rt-kill', 'runAction');

    await manager.waitForStats(NOTHING_LEFT);
    // The caller's own socket is unaffected.
    assert.ok(api.isOpen);
    assert.deepEqual(await api.call('listRuntimes'), { runtimes: [] });
  });

  test('runtime killed during a unary run: HTTP 503 with the method in the message', async () => {
    const { manager, runtime } = await withRuntime('rt-unary');
    const api = await manager.api();
    // Learn that the run started on the runtime before killing it.
    const run = api.request('runAction', { key: '/flow/slow', input: { ms: 30000 } }, { id: 'probe', timeoutMs: 20000 });
    await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === 'probe', 10000, 'runActionState');
    const http = manager.post('/api/rpc/runAction', { key: '/flow/slow', input: { ms: 30000 } });
    await manager.waitForStats({ 'actors.pending_request': (n) => n >= 2 }, 10000);

    runtime.kill('SIGKILL');
    const t0 = Date.now();
    const [reply, res] = await withTimeout(Promise.all([run, http]), PROMPT_MS, 'both callers to fail');
    assert.ok(Date.now() - t0 < PROMPT_MS);
    assertConnectionClosedError(reply.error, 'rt-unary', 'runAction');
    assert.equal(res.status, 503, res.text);
    assertConnectionClosedError(res.json.error, 'rt-unary', 'runAction');

    await manager.waitForStats(NOTHING_LEFT);
  });

  test('runAction timeoutMs bounds a run: DEADLINE_EXCEEDED / HTTP 504', async () => {
    const { manager } = await withRuntime('rt-slow');
    const t0 = Date.now();
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/slow', input: { ms: 30000 }, timeoutMs: 300 });
    const elapsed = Date.now() - t0;
    assert.equal(res.status, 504, res.text);
    assert.equal(res.json.error.data?.code, 4);
    assert.match(res.json.error.message, /timed out after 300 ms \(runAction\)/);
    assert.ok(elapsed < 3000, `timed out after ${elapsed} ms`);
    await manager.waitForStats({ 'actors.pending_request': 0 });
  });

  test('SIGTERM stops the manager with exit code 0 while a runtime is connected', async () => {
    const { manager, runtime } = await withRuntime('rt-term');
    assert.match((await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 1 })).json.telemetry.traceId, TRACE_ID_RE);
    // Stop a genkit runtime first: it is not meant to outlive its manager. A
    // cpp runtime is: it stays up and keeps trying to reconnect.
    if (kind === 'genkit') await runtime.stop();
    manager.child.kill('SIGTERM');
    const exit = await withTimeout(manager.child.exited, 5000, 'manager exit after SIGTERM');
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    if (kind === 'cpp') {
      await runtime.waitForLine(/lost the manager link/, 5000);
      assert.ok(runtime.running, `the cpp runtime outlives its manager: ${runtime.describe()}`);
    }
  });
});

test('no runtime registered: 503 UNAVAILABLE', async () => {
  const manager = await startManager();
  const expected = {
    code: -32000,
    message: 'No runtimes found: no runtime is registered with this manager',
  };
  for (const [method, path, body] of [
    ['POST', '/api/rpc/runAction', { key: '/flow/echo', input: 1 }],
    ['GET', '/api/actions'],
    ['GET', '/api/values?type=defaultModel'],
  ]) {
    const res = method === 'POST' ? await manager.post(path, body) : await manager.get(path);
    assert.equal(res.status, 503, `${method} ${path}: ${res.text}`);
    const { error } = res.json;
    assert.equal(error.code, expected.code);
    assert.equal(error.message, expected.message);
    assert.equal(error.data?.code, 14);
  }

  const api = await manager.api();
  const reply = await api.request('runAction', { key: '/flow/echo', input: 1 });
  assert.equal(reply.error?.code, expected.code);
  assert.equal(reply.error?.message, expected.message);
  assert.equal(reply.error?.data?.code, 14);
  assert.deepEqual(await api.call('listRuntimes'), { runtimes: [] });
});

test('a runtime that never answers listActions: DEADLINE_EXCEEDED after --request-timeout', async () => {
  const manager = await startManager(['--request-timeout', '300ms']);
  const fake = await manager.fakeRuntime('silent');
  assert.deepEqual((await fake.register('silent')).result, {});

  const t0 = Date.now();
  const res = await manager.get('/api/actions');
  const elapsed = Date.now() - t0;
  assert.equal(res.status, 504, res.text);
  const { error } = res.json;
  assert.equal(error.code, -32000);
  assert.equal(error.message, 'Request to runtime silent timed out after 300 ms (listActions)');
  assert.equal(error.data?.code, 4);
  assert.ok(elapsed >= 250 && elapsed < 3000, `timed out after ${elapsed} ms`);
  assert.ok(fake.messages.some((m) => m.method === 'listActions'), 'the request reached the runtime');

  const api = await manager.api();
  const reply = await api.request('listActions', {});
  assert.equal(reply.error?.data?.code, 4);
  await manager.waitForStats({ 'actors.pending_request': 0 });
});

test('a caller closing /api/ws cancels its run on the runtime', async () => {
  const manager = await startManager();
  const fake = await manager.fakeRuntime('rt-fake');
  const traceId = 'a'.repeat(32);
  fake.handlers.runAction = (_params, msg) => {
    fake.notify('runActionState', { requestId: msg.id, state: { traceId } });
    return undefined; // answered once cancelled
  };
  fake.handlers.cancelAction = (params) => {
    const run = fake.messages.find((m) => m.method === 'runAction');
    fake.send({
      jsonrpc: '2.0',
      id: run.id,
      error: { code: -32000, message: 'Action was cancelled', data: { code: 1, message: 'Action was cancelled', details: { traceId: params.traceId } } },
    });
    return { result: { message: 'Action cancelled' } };
  };
  await fake.register('rt-fake');

  const sessionsBefore = (await manager.stats()).actors.caller_session;
  const api = await manager.api('caller');
  api.request('runAction', { key: '/flow/slow', input: { ms: 30000 } }, { id: 'r1' }).catch(() => {});
  await api.waitFor((m) => m.method === 'runActionState', 5000, 'runActionState');
  await api.close();

  const cancel = await fake.waitFor((m) => m.method === 'cancelAction', PROMPT_MS, 'cancelAction');
  assert.deepEqual(cancel.params, { traceId });
  await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': sessionsBefore });
});

test('an HTTP caller disconnecting from streamAction cancels the run', async () => {
  const manager = await startManager();
  const fake = await manager.fakeRuntime('rt-fake');
  const traceId = 'b'.repeat(32);
  fake.handlers.runAction = (_params, msg) => {
    fake.notify('runActionState', { requestId: msg.id, state: { traceId } });
    fake.notify('streamChunk', { requestId: msg.id, chunk: { first: true } });
    return undefined;
  };
  fake.handlers.cancelAction = (params) => {
    const run = fake.messages.find((m) => m.method === 'runAction');
    fake.send({ jsonrpc: '2.0', id: run.id, error: { code: -32000, message: 'Action was cancelled', data: { code: 1, message: 'Action was cancelled' } } });
    return { result: { message: 'Action cancelled' } };
  };
  await fake.register('rt-fake');

  const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/whatever', input: {} });
  assert.equal(s.status, 200);
  assert.equal(s.traceId, traceId);
  assert.deepEqual((await s.lines.next(5000)).value, { first: true });
  s.abort();

  const cancel = await fake.waitFor((m) => m.method === 'cancelAction', PROMPT_MS, 'cancelAction');
  assert.deepEqual(cancel.params, { traceId });
  await manager.waitForStats({ 'actors.pending_request': 0 });
});

// runAction's calls are made by long-lived hubs, not by an actor per
// request whose end the pending request saw: the hub is told the client left.
test('an HTTP caller disconnecting from runAction cancels the run', async () => {
  const manager = await startManager();
  const fake = await manager.fakeRuntime('rt-fake');
  const traceId = 'c'.repeat(32);
  fake.handlers.runAction = (_params, msg) => {
    fake.notify('runActionState', { requestId: msg.id, state: { traceId } });
    return undefined; // answered once cancelled
  };
  fake.handlers.cancelAction = (params) => {
    const run = fake.messages.find((m) => m.method === 'runAction');
    fake.send({ jsonrpc: '2.0', id: run.id, error: { code: -32000, message: 'Action was cancelled', data: { code: 1, message: 'Action was cancelled' } } });
    return { result: { message: 'Action cancelled' } };
  };
  await fake.register('rt-fake');

  const body = JSON.stringify({ key: '/flow/slow', input: { ms: 30000 } });
  const req = http.request(`${manager.apiUrl}/api/runAction`, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  req.on('error', () => {});
  req.end(body);
  await fake.waitFor((m) => m.method === 'runAction', PROMPT_MS, 'runAction');
  await manager.waitForStats({ 'actors.pending_request': 1, 'actors.caller_session': 1 });
  req.destroy();

  const cancel = await fake.waitFor((m) => m.method === 'cancelAction', PROMPT_MS, 'cancelAction');
  assert.deepEqual(cancel.params, { traceId });
  await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 });
});

test('SIGTERM with --drain-timeout 0: runs in flight are cancelled at once, callers get CANCELLED', async () => {
  const manager = await startManager(['--drain-timeout', '0']);
  // A fake runtime (not genkit): it never answers, and it does not reconnect
  // to whatever manager takes the port next.
  const fake = await manager.fakeRuntime('rt-fake');
  await fake.register('rt-fake');
  const api = await manager.api();
  const viaWs = api.request('runAction', { key: '/flow/never', input: 1 }, { id: 'w1' });
  const viaHttp = manager.post('/api/rpc/runAction', { key: '/flow/never', input: 2 });
  await fake.waitForCount((m) => m.method === 'runAction', 2, 5000, 'runAction requests');

  manager.child.kill('SIGTERM');
  const [ws, http] = await withTimeout(Promise.allSettled([viaWs, viaHttp]), PROMPT_MS, 'callers to be told');
  const exit = await withTimeout(manager.child.exited, 5000, 'manager exit after SIGTERM');
  assert.equal(exit.code, 0);

  const expected = { code: -32000, message: 'Call cancelled: the manager is shutting down and the drain timeout passed' };
  assert.equal(http.status, 'fulfilled', `HTTP caller: ${http.reason?.message}`);
  assert.equal(http.value.status, 499, http.value.text);
  assert.equal(http.value.json.error.code, expected.code);
  assert.equal(http.value.json.error.message, expected.message);
  assert.equal(http.value.json.error.data?.code, 1);
  assert.equal(ws.status, 'fulfilled', `/api/ws caller: ${ws.reason?.message}`);
  assert.equal(ws.value.error?.code, expected.code, JSON.stringify(ws.value));
  assert.equal(ws.value.error?.message, expected.message);
  assert.equal(ws.value.error?.data?.code, 1);
});
