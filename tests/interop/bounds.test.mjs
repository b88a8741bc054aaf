// Issue 11, "every queue bounded", over real sockets against a raw runtime
// that never answers: calls whose caller leaves are forgotten and cancelled,
// calls in flight per caller are capped, and bidi input held for a run that
// never starts is capped in bytes.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, afterEach, test } from 'node:test';
import { cleanup, startManager, withTimeout } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const PROMPT_MS = 5000;
const traceOf = (n) => n.toString(16).padStart(32, '0');

/**
 * A runtime that takes every call and never answers. With `trace`, each run
 * reports a trace id (so it can be cancelled); cancelAction is not answered
 * either.
 */
async function silentRuntime(manager, id, { trace = true } = {}) {
  const fake = await manager.fakeRuntime(id);
  let runs = 0;
  fake.handlers.runAction = (_params, msg) => {
    runs += 1;
    if (trace) fake.notify('runActionState', { requestId: msg.id, state: { traceId: traceOf(runs) } });
    return undefined;
  };
  assert.deepEqual((await fake.register(id)).result, {});
  return fake;
}

/** A POST the client abandons: resolves once the manager has read it, `abort()` hangs up. */
function hangingPost(manager, path, body) {
  const data = JSON.stringify(body);
  const req = http.request(manager.apiUrl + path, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
  });
  req.on('error', () => {});
  const response = new Promise((resolve) => {
    req.once('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.once('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
    });
  });
  req.end(data);
  return { response, abort: () => req.destroy() };
}

const count = (fake, method) => fake.messages.filter((m) => m.method === method).length;

test('calls of a /api/ws caller that leaves are forgotten and cancelled at once', async () => {
  const manager = await startManager();
  const fake = await silentRuntime(manager, 'rt-silent');
  const before = await manager.stats();
  const api = await manager.api('leaver');
  const n = 200;
  for (let i = 0; i < n; i++) {
    api.request('runAction', { key: '/flow/never', input: i }, { id: `r${i}`, timeoutMs: 60000 }).catch(() => {});
  }
  await fake.waitForCount((m) => m.method === 'runAction', n, 10000, 'runActions');
  await api.waitForCount((m) => m.method === 'runActionState', n, 10000, 'run states');
  await manager.waitForStats({ 'actors.pending_request': n });

  await api.terminate();
  // Nothing is left waiting for a runtime that will never answer ...
  await manager.waitForStats(
    { 'actors.pending_request': 0, 'actors.caller_session': before.actors.caller_session },
    PROMPT_MS
  );
  // ... and every run was cancelled on the runtime, once.
  const cancels = await fake.waitForCount((m) => m.method === 'cancelAction', n, PROMPT_MS, 'cancelActions');
  const traces = new Set(cancels.map((m) => m.params.traceId));
  assert.equal(traces.size, n);
  for (let i = 1; i <= n; i++) assert.ok(traces.has(traceOf(i)), `run ${i} cancelled`);
  assert.ok(fake.isOpen, 'the runtime stays connected');
  const metrics = (await manager.get('/metrics')).text;
  assert.match(metrics, new RegExp(`^actor_host_abandoned_calls_total ${n}$`, 'm'));
});

test('HTTP callers that hang up are forgotten; a run that starts later is cancelled then', async () => {
  const manager = await startManager();
  const fake = await silentRuntime(manager, 'rt-silent', { trace: false });
  const n = 20;
  const posts = [];
  for (let i = 0; i < n; i++) posts.push(hangingPost(manager, '/api/runAction', { key: '/flow/never', input: i }));
  await fake.waitForCount((m) => m.method === 'runAction', n, 10000, 'runActions');
  await manager.waitForStats({ 'actors.pending_request': n });

  for (const p of posts) p.abort();
  await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 }, PROMPT_MS);
  assert.equal(count(fake, 'cancelAction'), 0, 'no trace id yet, nothing to cancel');
  // The runtime reports the runs after all: each is cancelled as it does.
  for (const m of fake.messages.filter((x) => x.method === 'runAction')) {
    fake.notify('runActionState', { requestId: m.id, state: { traceId: traceOf(1000 + Number(m.id)) } });
  }
  await fake.waitForCount((m) => m.method === 'cancelAction', n, PROMPT_MS, 'cancelActions');
  await manager.assertHealthy();
});

test('max_calls_per_caller: RESOURCE_EXHAUSTED on /api/ws, HTTP 429 per peer address', async () => {
  const manager = await startManager(['--max-calls-per-caller', '5', '--log-level', 'info']);
  const fake = await silentRuntime(manager, 'rt-silent');
  const api = await manager.api('greedy');
  for (let i = 0; i < 5; i++) {
    api.request('runAction', { key: '/flow/never' }, { id: i, timeoutMs: 60000 }).catch(() => {});
  }
  await fake.waitForCount((m) => m.method === 'runAction', 5, 10000, 'runActions');
  const over = await api.request('runAction', { key: '/flow/never' }, { id: 'one-too-many' });
  assert.equal(over.error?.code, -32000, JSON.stringify(over));
  assert.equal(over.error?.data?.code, 8, JSON.stringify(over));
  assert.match(over.error.message, /max_calls_per_caller is 5/);
  // Another caller is not affected.
  const other = await manager.api('other');
  other.request('runAction', { key: '/flow/never' }, { id: 'fine', timeoutMs: 60000 }).catch(() => {});
  await fake.waitForCount((m) => m.method === 'runAction', 6, 5000, 'the other caller\'s run');

  // Plain HTTP: the caller is the peer address, over any number of connections.
  const posts = [];
  for (let i = 0; i < 5; i++) posts.push(hangingPost(manager, '/api/runAction', { key: '/flow/never' }));
  await fake.waitForCount((m) => m.method === 'runAction', 11, 5000, 'HTTP runs');
  const res = await manager.post('/api/runAction', { key: '/flow/never' });
  assert.equal(res.status, 429, res.text);
  // /api/runAction answers in the Genkit tools server's shape: {"error": <Status>}.
  assert.equal(res.json.error.code, 8, res.text);
  assert.match(res.json.error.message, /max_calls_per_caller is 5/);
  assert.match(res.json.error.data?.genkitErrorMessage, /max_calls_per_caller is 5/);
  await manager.child.waitForLine(/calls in flight \(max_calls_per_caller\)/, 2000);
  assert.match((await manager.get('/metrics')).text, /^actor_host_calls_over_cap_total 2$/m);

  // Hanging up frees the slots.
  for (const p of posts) p.abort();
  await manager.waitForStats({ 'actors.pending_request': 6 });
  const again = hangingPost(manager, '/api/runAction', { key: '/flow/never' });
  await fake.waitForCount((m) => m.method === 'runAction', 12, 5000, 'a run after the slots were freed');
  again.abort();
  await api.terminate();
  await other.terminate();
  await manager.waitForStats({ 'actors.pending_request': 0 }, PROMPT_MS);
});

test('bidi input held for a run that never starts is capped and dropped', async () => {
  // The default cap (16 MiB): 40 chunks of 512 KiB go over it.
  const manager = await startManager();
  const fake = await silentRuntime(manager, 'rt-silent', { trace: false });
  const api = await manager.api('bidi');
  const run = api.request('runAction', { key: '/flow/never', streamInput: true }, { id: 'b1', timeoutMs: 30000 });
  await fake.waitFor((m) => m.method === 'runAction', 5000, 'runAction');
  const chunk = 'x'.repeat(512 * 1024);
  for (let i = 0; i < 40; i++) {
    api.notify('sendInputStreamChunk', { requestId: 'b1', chunk });
  }
  const reply = await withTimeout(run, 15000, 'the run to fail');
  assert.equal(reply.error?.data?.code, 8, JSON.stringify(reply.error));
  assert.match(reply.error.message, /max_bidi_input_bytes \(16777216 bytes\)/);
  await manager.waitForStats({ 'actors.pending_request': 0 });
  // Nothing of it reached the runtime, which was not ready for it.
  assert.equal(count(fake, 'sendInputStreamChunk'), 0);
  assert.ok(api.isOpen, 'the caller may go on');
  await manager.assertHealthy();
});
