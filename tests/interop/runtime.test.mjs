// Runtime-role specifics of `actor-host --role runtime`, against our manager:
// configuration from the environment, reconnecting (manager restarted on the
// same port, manager not up yet), program-backed actions from
// examples/runtime.yaml, and stopping programs (cancel, timeout, caller gone,
// SIGTERM and SIGKILL of the runtime) without leaving processes behind.
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, describe, test } from 'node:test';
import {
  childPids,
  cleanup,
  freePort,
  pgrep,
  pollUntil,
  startCppRuntime,
  startManager,
  TRACE_ID_RE,
  waitForRegistered,
  withTimeout,
} from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const here = path.dirname(fileURLToPath(import.meta.url));
const EXAMPLES_CONFIG = path.resolve(here, '..', '..', 'examples', 'runtime.yaml');
const TEST_CONFIG = path.join(here, 'runtime-test.yaml');

/** spdlog's "2024-01-02 03:04:05.678" prefix as ms since the epoch (local time is fine for differences). */
function logTime(line) {
  const m = line.match(/^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3})/);
  return m ? Date.parse(`${m[1]}T${m[2]}`) : NaN;
}

describe('configuration', () => {
  test('GENKIT_REFLECTION_V2_SERVER and GENKIT_RUNTIME_ID configure it like a Genkit runtime; the name defaults to the id', async () => {
    const manager = await startManager();
    const runtime = startCppRuntime(null, {
      env: { GENKIT_REFLECTION_V2_SERVER: manager.reflectionUrl, GENKIT_RUNTIME_ID: 'rt-env' },
    });
    const info = await manager.waitForRuntime('rt-env', { child: runtime, timeoutMs: 10000 });
    assert.equal(info.pid, runtime.pid);
    assert.equal(info.name, 'rt-env');
    assert.match(info.genkitVersion, /^cpp\//);
    assert.equal(info.reflectionApiSpecVersion, 1);
    const m = await waitForRegistered(runtime);
    assert.deepEqual([m[1], m[2]], [manager.reflectionUrl, 'rt-env']);
    const res = await manager.post('/api/rpc/runAction', { key: '/tool/add', input: { a: 2, b: 40 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result, 42);
  });
});

describe('reconnecting', () => {
  test('the manager killed and restarted on the same port: the same runtime process registers again', async () => {
    const first = await startManager();
    const runtime = startCppRuntime(first.reflectionUrl, { id: 'rt-re' });
    await first.waitForRuntime('rt-re', { child: runtime, timeoutMs: 10000 });
    await waitForRegistered(runtime);

    first.child.kill('SIGKILL');
    await withTimeout(first.child.exited, 5000, 'first manager exit');
    await runtime.waitForLine(/lost the manager link/, 5000);

    const second = await startManager([], { port: first.reflectionPort });
    const ready = Date.now();
    assert.equal(second.reflectionPort, first.reflectionPort);
    const info = await second.waitForRuntime('rt-re', { child: runtime, timeoutMs: 8000 });
    const elapsed = Date.now() - ready;
    // Backoff 500 ms x 2^n: the attempt after the new manager is up comes
    // within the current interval (0.5, 1 or 2 s this early).
    assert.ok(elapsed < 2500, `registered again ${elapsed} ms after the new manager listened`);
    assert.ok(runtime.running, 'the runtime process is still alive');
    assert.equal(info.pid, runtime.pid, 'the same process registered again');
    await waitForRegistered(runtime, { count: 2, timeoutMs: 2000 });

    const res = await second.post('/api/rpc/runAction', { key: '/flow/echo', input: 'again' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.result, 'again');
    const s = await second.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 3 } });
    assert.deepEqual(await s.lines.drain(5000).then((l) => l.slice(0, 3)), [{ i: 0 }, { i: 1 }, { i: 2 }]);
  });

  test('no manager yet: failed connects are retried with growing backoff until one is up', async () => {
    const port = await freePort();
    const url = `ws://127.0.0.1:${port}`;
    const runtime = startCppRuntime(url, { id: 'rt-early' });
    // Attempts at about 0, 0.5 and 1.5 s fail.
    await pollUntil(
      () => runtime.lines.filter((l) => /cannot reach manager/.test(l)),
      (fails) => fails.length >= 3,
      { timeoutMs: 6000, what: `3 failed connects of ${runtime.describe()}` }
    );
    assert.ok(runtime.running, 'failed connects do not end the runtime');

    const manager = await startManager([], { port });
    const ready = Date.now();
    await manager.waitForRuntime('rt-early', { child: runtime, timeoutMs: 8000 });
    const elapsed = Date.now() - ready;
    // The next attempt was due 2 s after the third failure at most.
    assert.ok(elapsed < 3000, `registered ${elapsed} ms after the manager listened`);

    const fails = runtime.lines.filter((l) => /cannot reach manager/.test(l)).map(logTime);
    const gaps = fails.slice(1, 4).map((t, i) => t - fails[i]);
    assert.ok(gaps.every((g) => !Number.isNaN(g)), `log lines carry timestamps: ${runtime.tail()}`);
    assert.ok(gaps[0] >= 450 && gaps[0] < 1500, `first retry after ~500 ms, was ${gaps[0]} ms`);
    assert.ok(gaps[1] >= 950 && gaps[1] < 2500, `second retry after ~1000 ms, was ${gaps[1]} ms`);
    if (gaps.length > 2) assert.ok(gaps[2] >= 1950, `third retry after ~2000 ms, was ${gaps[2]} ms`);

    const res = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 1 });
    assert.equal(res.status, 200, res.text);
  });
});

describe('program actions from examples/runtime.yaml', () => {
  const withExamples = async () => {
    const manager = await startManager();
    const runtime = await manager.startRuntime('rt-prog', { kind: 'cpp', demo: false, config: EXAMPLES_CONFIG });
    return { manager, runtime };
  };

  test('listActions lists them with their schemas', async () => {
    const { manager } = await withExamples();
    const actions = await manager.json('/api/actions');
    assert.deepEqual(Object.keys(actions).sort(), ['/flow/check', '/flow/upper', '/flow/wordcount']);
    const wc = actions['/flow/wordcount'];
    assert.equal(wc.key, '/flow/wordcount');
    assert.equal(wc.name, 'wordcount');
    assert.equal(wc.description, 'Counts the words of a text, streaming each word as a chunk.');
    assert.equal(wc.inputSchema?.type, 'object');
    assert.deepEqual(wc.inputSchema?.required, ['text']);
    assert.equal(wc.outputSchema?.properties?.words?.type, 'integer');
  });

  test('wordcount (python) over /api/streamAction: a chunk per word, then the result', async () => {
    const { manager } = await withExamples();
    const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/wordcount', input: { text: 'the quick  brown fox' } });
    assert.equal(s.status, 200);
    const lines = await s.lines.drain(10000);
    assert.deepEqual(lines.slice(0, -1), ['the', 'quick', 'brown', 'fox'].map((word) => ({ word })));
    const last = lines.at(-1);
    assert.deepEqual(last.result, { words: 4 }, JSON.stringify(last));
    assert.match(last.telemetry?.traceId ?? '', TRACE_ID_RE);
    assert.equal(s.traceId, last.telemetry.traceId);

    // Unary: the same result, no chunks.
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/wordcount', input: { text: 'one two' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.result, { words: 2 });

    // The input schema is checked before the program starts.
    const bad = await manager.post('/api/rpc/runAction', { key: '/flow/wordcount', input: { words: 1 } });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.data?.code, 3);
    assert.match(bad.json.error.message, /INVALID_ARGUMENT/);
    await manager.assertHealthy();
  });

  test('upper (node, bidi) over /api/ws with sendInputStreamChunk/endInputStream', async () => {
    const { manager } = await withExamples();
    const api = await manager.api();
    const run = api.request('runAction', { key: '/flow/upper', stream: true, streamInput: true }, { id: 'up-1', timeoutMs: 15000 });
    // The first chunk goes out right behind the runAction, before any
    // runActionState: it must not be lost.
    api.notify('sendInputStreamChunk', { requestId: 'up-1', chunk: 'hello' });
    const first = await api.waitFor((m) => m.method === 'streamChunk' && m.params?.requestId === 'up-1', 10000, 'first chunk');
    assert.deepEqual(first.params.chunk, { upper: 'HELLO' });
    // The run is live: each input gets its output before the input ends.
    api.notify('sendInputStreamChunk', { requestId: 'up-1', chunk: { text: 'bidi world' } });
    await api.waitForCount((m) => m.method === 'streamChunk' && m.params?.requestId === 'up-1', 2, 5000, 'second chunk');
    api.notify('endInputStream', { requestId: 'up-1' });
    const reply = await run;
    assert.deepEqual(reply.result?.result, { lines: 2 }, JSON.stringify(reply));
    assert.deepEqual(
      api.notificationsFor('streamChunk', 'up-1').map((m) => m.params.chunk),
      [{ upper: 'HELLO' }, { upper: 'BIDI WORLD' }]
    );
    const state = api.notificationsFor('runActionState', 'up-1');
    assert.equal(state.length, 1);
    assert.equal(state[0].params.state.traceId, reply.result.telemetry.traceId);
    await manager.assertHealthy();
  });

  test('upper over HTTP: streamAction?bidi=true with sendBidiInput/endBidiInput', async () => {
    const { manager } = await withExamples();
    const s = await manager.stream('/api/rpc/streamAction?bidi=true', { key: '/flow/upper' });
    assert.equal(s.status, 200);
    assert.match(s.traceId ?? '', TRACE_ID_RE);
    const send = await manager.post('/api/sendBidiInput', { traceId: s.traceId, chunk: { text: 'abc' } });
    assert.equal(send.status, 200, send.text);
    assert.deepEqual((await s.lines.next(5000, 'chunk')).value, { upper: 'ABC' });
    assert.equal((await manager.post('/api/endBidiInput', { traceId: s.traceId })).status, 200);
    const rest = await s.lines.drain(5000);
    assert.deepEqual(rest.map((l) => l.result), [{ lines: 1 }], JSON.stringify(rest));
  });

  test('check (sh): a result, a Status error line, a non-zero exit', async () => {
    const { manager } = await withExamples();
    const ok = await manager.post('/api/rpc/runAction', { key: '/flow/check', input: { same: ['json', 1, null] } });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json.result, { same: ['json', 1, null] });

    const missing = await manager.post('/api/rpc/runAction', { key: '/flow/check', input: 'missing' });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.json.error.code, -32000);
    assert.equal(missing.json.error.data?.code, 5);
    assert.match(missing.json.error.message, /nothing called missing/);
    assert.match(missing.json.error.data?.details?.traceId ?? '', TRACE_ID_RE);

    const crash = await manager.post('/api/rpc/runAction', { key: '/flow/check', input: 'crash' });
    assert.equal(crash.status, 500, crash.text);
    assert.equal(crash.json.error.data?.code, 13);
    assert.match(crash.json.error.message, /program exited with status 3/);
    assert.match(JSON.stringify(crash.json.error.data?.details ?? {}), /crashing on purpose/, 'the stderr tail is attached');
    await manager.assertHealthy();
  });
});

describe('stopping program runs', () => {
  let seq = 0;
  /**
   * A manager and a runtime hosting runtime-test.yaml (plus the demo actions),
   * whose programs sleep for a duration unique to this runtime: `marker`, the
   * pgrep -f pattern that finds them.
   */
  const withSleepers = async () => {
    const duration = `30.${String(process.pid).padStart(7, '0')}${String(++seq).padStart(2, '0')}`;
    const manager = await startManager();
    const runtime = await manager.startRuntime('rt-sleep', {
      kind: 'cpp',
      config: TEST_CONFIG,
      env: { INTEROP_SLEEP_MARKER: duration },
    });
    const marker = `sleep ${duration.replace('.', '\\.')}`;
    assert.deepEqual(pgrep(marker), [], `no process matches ${marker} yet`);
    return { manager, runtime, marker };
  };
  const programsUp = (marker, n = 1) =>
    pollUntil(() => pgrep(marker), (pids) => pids.length >= n, { timeoutMs: 5000, what: `${n} process(es) matching ${marker}` });
  const programsGone = (marker, runtime) =>
    pollUntil(
      () => ({ marked: pgrep(marker), children: runtime?.running ? childPids(runtime.pid) : [] }),
      (p) => p.marked.length === 0 && p.children.length === 0,
      { timeoutMs: 1000, intervalMs: 20, what: `no process matching ${marker} and no child of the runtime` }
    );

  /** Starts a runAction over /api/ws and waits for its runActionState; returns {api, run, traceId}. */
  const startRun = async (manager, key, id, extra = {}) => {
    const api = extra.api ?? (await manager.api());
    const run = api.request('runAction', { key, input: {} }, { id, timeoutMs: 20000 });
    const state = await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === id, 10000, `runActionState for ${id}`);
    return { api, run, traceId: state.params.state.traceId };
  };

  test('cancelAction ends a program run with CANCELLED and kills its process group', async () => {
    const { manager, runtime, marker } = await withSleepers();
    const { run, traceId } = await startRun(manager, '/flow/sleeper', 'sl-1');
    await programsUp(marker);
    assert.ok(childPids(runtime.pid).length > 0, 'the program is a child of the runtime');

    const t0 = Date.now();
    const cancelled = await manager.post('/api/rpc/cancelAction', { traceId });
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.deepEqual(cancelled.json, { message: 'Action cancelled' });
    const reply = await run;
    const elapsed = Date.now() - t0;
    assert.equal(reply.error?.code, -32000, JSON.stringify(reply));
    assert.equal(reply.error?.data?.code, 1, JSON.stringify(reply));
    assert.equal(reply.error?.message, 'Action was cancelled');
    assert.ok(elapsed < 1500, `run ended ${elapsed} ms after the cancel (the program dies on SIGTERM)`);
    await programsGone(marker, runtime);
    await manager.assertHealthy();
  });

  test('a program that ignores SIGTERM is killed after killGrace', async () => {
    const { manager, runtime, marker } = await withSleepers();
    const { run, traceId } = await startRun(manager, '/flow/stubborn', 'st-1');
    await programsUp(marker);
    const t0 = Date.now();
    assert.equal((await manager.post('/api/rpc/cancelAction', { traceId })).status, 200);
    const reply = await run;
    const elapsed = Date.now() - t0;
    assert.equal(reply.error?.data?.code, 1, JSON.stringify(reply));
    assert.ok(elapsed >= 250, `SIGKILL came ${elapsed} ms after the cancel, before killGrace (300 ms)`);
    assert.ok(elapsed < 2500, `run ended ${elapsed} ms after the cancel`);
    await programsGone(marker, runtime);
  });

  test('a program over its timeout ends with DEADLINE_EXCEEDED / HTTP 504', async () => {
    const { manager, runtime, marker } = await withSleepers();
    const t0 = Date.now();
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/napper', input: {} });
    const elapsed = Date.now() - t0;
    assert.equal(res.status, 504, res.text);
    assert.equal(res.json.error.data?.code, 4);
    assert.match(res.json.error.message, /napper timed out after 300 ms/);
    assert.ok(elapsed >= 280 && elapsed < 2500, `ended after ${elapsed} ms`);
    await programsGone(marker, runtime);
  });

  test('a caller closing /api/ws stops its program run', async () => {
    const { manager, runtime, marker } = await withSleepers();
    const { api, run } = await startRun(manager, '/flow/sleeper', 'gone-1');
    run.catch(() => {}); // rejected when the socket closes
    await programsUp(marker);
    await api.close();
    await pollUntil(() => pgrep(marker), (pids) => pids.length === 0, { timeoutMs: 5000, what: `programs matching ${marker} to end` });
    await programsGone(marker, runtime);
    await manager.waitForStats({ 'actors.pending_request': 0 });
  });

  test('SIGTERM with runs in flight: the runtime exits 0 and leaves no process behind', async () => {
    const { manager, runtime, marker } = await withSleepers();
    const api = await manager.api();
    const runs = [];
    for (const [key, id] of [['/flow/sleeper', 'a'], ['/flow/stubborn', 'b'], ['/flow/slow', 'c']]) {
      const r = api.request('runAction', { key, input: key === '/flow/slow' ? { ms: 30000 } : {} }, { id, timeoutMs: 20000 });
      runs.push(r);
      await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === id, 10000, `runActionState for ${id}`);
    }
    await programsUp(marker, 2);

    runtime.kill('SIGTERM');
    const t0 = Date.now();
    const exit = await withTimeout(runtime.exited, 6000, 'runtime exit after SIGTERM');
    const elapsed = Date.now() - t0;
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null }, runtime.describe());
    assert.ok(elapsed < 3000, `exited ${elapsed} ms after SIGTERM (stubborn's killGrace is 300 ms)`);
    await programsGone(marker, null);

    // Every caller hears about it: cancelled by the runtime, or the link closed.
    const replies = await withTimeout(Promise.all(runs), 5000, 'replies to the callers');
    for (const reply of replies) {
      assert.ok([1, 14].includes(reply.error?.data?.code), `run ${reply.id}: ${JSON.stringify(reply)}`);
    }
    await manager.waitForRuntimeGone('rt-sleep');
    await manager.waitForStats({ 'actors.pending_request': 0, 'actors.runtime_connection': 0 });
  });

  test('SIGKILL of the runtime: its program (the direct child) dies with it', async () => {
    const { manager, runtime, marker } = await withSleepers();
    const { run } = await startRun(manager, '/flow/sleeperExec', 'k-1');
    run.catch(() => {});
    await programsUp(marker);
    runtime.kill('SIGKILL');
    await withTimeout(runtime.exited, 5000, 'runtime exit after SIGKILL');
    await pollUntil(() => pgrep(marker), (pids) => pids.length === 0, { timeoutMs: 2000, what: `the program to die with the runtime (${marker})` });
    const reply = await run;
    assert.equal(reply.error?.data?.code, 14, JSON.stringify(reply));
  });
});

describe('deeply nested input', () => {
  // One depth limit across the system (512, the manager's): within it the
  // runtime reads the input as sent; beyond it the call fails with
  // INVALID_ARGUMENT. The runtime used to stop at Boost.JSON's default of 32
  // and run the action with null.
  const nested = (depth) => '['.repeat(depth) + '1' + ']'.repeat(depth);

  test('40 levels run as sent; 600 levels are INVALID_ARGUMENT, never null', async () => {
    const manager = await startManager();
    await manager.startRuntime('deep', { kind: 'cpp' });
    const body = (depth) => `{"key":"/flow/echo","input":${nested(depth)}}`;
    const ok = await manager.post('/api/runAction', body(40), { headers: { 'content-type': 'application/json' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(JSON.stringify(ok.json.result), nested(40));
    const deep = await manager.post('/api/runAction', body(600), { headers: { 'content-type': 'application/json' } });
    assert.equal(deep.status, 400, deep.text);
    assert.notEqual(deep.json?.result, null);
  });
});
