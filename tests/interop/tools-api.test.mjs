// The Genkit tools server's tRPC queries (alone and batched) and its
// runAction/streamAction/cancelAction routes on the manager's API port, checked
// differentially: the same requests go to the real tools server
// (@genkit-ai/tools-common's startServer over its RuntimeManager, pinned,
// bench/tools_server.mjs) and to actor-host, each with our C++ demo runtime
// attached, and the answers must have the same shape (keys and types) and
// the same HTTP status. Then the queries actor-host adds to it: traces from
// its store, and clear errors for what it does not serve.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, test } from 'node:test';
import {
  Child,
  cleanup,
  freePort,
  httpRequest,
  INTEROP_NODE_DIR,
  pollUntil,
  startCppRuntime,
  startManager,
  tempDir,
} from './lib/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const TOOLS_SERVER = path.resolve(here, '..', '..', 'bench', 'tools_server.mjs');

/** The shape of a JSON value: its type, and for objects the shapes by key (arrays: their first element's). */
function shape(v) {
  if (Array.isArray(v)) return v.length ? [shape(v[0])] : [];
  if (v === null) return 'null';
  if (typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape(v[k])]));
  return typeof v;
}

const query = (base, proc, input) =>
  httpRequest(`${base}/api/${proc}${input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`}`);

const post = (base, route, body) => httpRequest(`${base}${route}`, {
  method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' },
});

/** The last NDJSON line of a streamAction answer, parsed. */
const lastLine = (r) => JSON.parse(r.text.trim().split('\n').pop());

describe('the tools server queries and routes, against the real tools server', () => {
  let tools;
  let ours;
  let toolsChild;
  before(async () => {
    const port = await freePort();
    const httpPort = await freePort();
    const home = tempDir('ah-tools-home-');
    toolsChild = new Child('tools-server', process.execPath,
      [TOOLS_SERVER, '--node-dir', INTEROP_NODE_DIR, '--port', String(port), '--http-port', String(httpPort), '--home', home],
      { env: { ...process.env, GENKIT_ENV: 'dev' } });
    await toolsChild.waitForLine(/"ready":true/, 30000);
    tools = `http://127.0.0.1:${httpPort}`;
    const rt = startCppRuntime(`ws://127.0.0.1:${port}`, { id: 'rt' });
    rt.mayExit = true;
    await pollUntil(() => query(tools, 'getActiveRuntimes').catch(() => null),
      (r) => r?.status === 200 && r.json.result.data.length === 1, { timeoutMs: 20000, what: 'rt at the tools server' });
    const manager = await startManager([], { env: { GENKIT_ENV: 'dev' } });
    await manager.startRuntime('rt', { kind: 'cpp' });
    ours = manager.apiUrl;
  });
  after(async () => {
    await toolsChild?.stop();
    await cleanup();
  });

  const cases = [
    ['listActions', { runtimeId: 'rt' }],
    ['listActions', undefined],
    ['listValues', { runtimeId: 'rt', type: 'defaultModel' }],
    ['getActiveRuntimes', undefined],
    ['getCurrentRuntime', undefined],
    ['getGenkitEnvironment', undefined],
  ];
  for (const [proc, input] of cases) {
    test(`${proc} ${JSON.stringify(input) ?? ''} has the tools server's status and shape`, async () => {
      const [a, b] = await Promise.all([query(tools, proc, input), query(ours, proc, input)]);
      assert.equal(b.status, a.status, `${proc}: tools ${a.status} ${a.text.slice(0, 300)} / ours ${b.status} ${b.text.slice(0, 300)}`);
      assert.deepEqual(shape(b.json), shape(a.json), `${proc}: tools ${a.text.slice(0, 500)}\nours ${b.text.slice(0, 500)}`);
    });
  }

  test('listActions of the same runtime answers the same actions', async () => {
    const [a, b] = await Promise.all([query(tools, 'listActions', { runtimeId: 'rt' }), query(ours, 'listActions', { runtimeId: 'rt' })]);
    assert.deepEqual(Object.keys(b.json.result.data).sort(), Object.keys(a.json.result.data).sort());
    assert.deepEqual(b.json.result.data['/flow/echo'], a.json.result.data['/flow/echo']);
  });

  test('batched queries (httpBatchLink): the same statuses and shapes, an answer per procedure', async () => {
    const batches = [
      ['listActions,getActiveRuntimes,listValues', { 0: { runtimeId: 'rt' }, 2: { runtimeId: 'rt', type: 'defaultModel' } }],
      // A part that fails: the batch is 207 Multi-Status.
      ['getCurrentRuntime,listValues', { 1: { runtimeId: 'rt' } }],
      // Every part fails alike: their status.
      ['listValues,listValues', { 0: { runtimeId: 'rt' }, 1: {} }],
      ['nosuchProcedure,getActiveRuntimes', {}],
    ];
    for (const [names, input] of batches) {
      const url = (base) => `${base}/api/${names}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`;
      const [a, b] = await Promise.all([httpRequest(url(tools)), httpRequest(url(ours))]);
      const what = `${names}: tools ${a.status} ${a.text.slice(0, 400)}\nours ${b.status} ${b.text.slice(0, 400)}`;
      assert.ok(Array.isArray(a.json) && Array.isArray(b.json), what);
      assert.equal(b.json.length, a.json.length, what);
      b.json.forEach((part, i) => {
        assert.deepEqual(Object.keys(part), Object.keys(a.json[i]), `${what}\npart ${i}`);
        // Error parts: the keys (our statuses may be more precise, as alone).
        if (!part.error) assert.deepEqual(shape(part), shape(a.json[i]), `${what}\npart ${i}`);
      });
      assert.equal(b.status, a.status, what);
    }
  });

  test('errors have the tRPC error shape: a bad input and an unknown runtime', async () => {
    for (const [proc, input] of [['listValues', { runtimeId: 'rt' }], ['listActions', { runtimeId: 'nope' }]]) {
      const [a, b] = await Promise.all([query(tools, proc, input), query(ours, proc, input)]);
      assert.ok(a.json.error && b.json.error, `${proc}: tools ${a.text.slice(0, 300)} / ours ${b.text.slice(0, 300)}`);
      assert.deepEqual(Object.keys(b.json.error).sort(), Object.keys(a.json.error).sort());
      assert.equal(typeof b.json.error.message, 'string');
      assert.equal(typeof b.json.error.data.httpStatus, 'number');
      assert.equal(b.json.error.data.path, proc);
    }
  });

  test('a run that succeeds has the same shape', async () => {
    const body = { key: '/flow/echo', input: 'same' };
    const [a, b] = await Promise.all([post(tools, '/api/runAction', body), post(ours, '/api/runAction', body)]);
    assert.deepEqual([b.status, shape(b.json)], [a.status, shape(a.json)], `tools ${a.text}\nours ${b.text}`);
    assert.deepEqual(b.json.result, a.json.result);
  });

  test('a run that fails: the error the Dev UI reads, with the Status inside', async () => {
    const body = { key: '/flow/fail', input: { status: 'PERMISSION_DENIED', message: 'no' } };
    const [a, b] = await Promise.all([post(tools, '/api/runAction', body), post(ours, '/api/runAction', body)]);
    assert.ok(a.json.error && b.json.error, `tools ${a.text}\nours ${b.text}`);
    assert.deepEqual(shape(b.json), shape(a.json), `tools ${a.text}\nours ${b.text}`);
    assert.equal(b.json.error.code, a.json.error.code); // the Status code, 7
    assert.equal(b.json.error.message, a.json.error.message);
    assert.equal(b.json.error.data.genkitErrorMessage, a.json.error.data.genkitErrorMessage);
    // The same call on /api/rpc/ keeps our JSON-RPC error object.
    const rpc = await post(ours, '/api/rpc/runAction', body);
    assert.equal(rpc.json.error.code, -32000);
    assert.equal(rpc.json.error.data.code, 7);
  });

  test('a stream that fails ends with the same error line', async () => {
    const body = { key: '/flow/fail', input: { message: 'stream no' } };
    const [a, b] = await Promise.all([post(tools, '/api/streamAction', body), post(ours, '/api/streamAction', body)]);
    const [ea, eb] = [lastLine(a), lastLine(b)];
    assert.deepEqual(shape(eb), shape(ea), `tools ${a.text}\nours ${b.text}`);
    assert.equal(eb.error.message, ea.error.message);
    const rpc = await post(ours, '/api/rpc/streamAction', body);
    assert.equal(lastLine(rpc).error.code, -32000);
  });

  test('cancelAction is a tRPC mutation: an unknown trace id is a tRPC error', async () => {
    const body = { traceId: 'f'.repeat(32) };
    const [a, b] = await Promise.all([post(tools, '/api/cancelAction', body), post(ours, '/api/cancelAction', body)]);
    assert.ok(a.json.error && b.json.error, `tools ${a.text}\nours ${b.text}`);
    assert.deepEqual(Object.keys(b.json.error).sort(), Object.keys(a.json.error).sort());
    assert.equal(typeof b.json.error.data.httpStatus, 'number');
    assert.equal(b.json.error.data.path, 'cancelAction');
    // /api/rpc/ relays the runtime's JSON-RPC error as it is.
    const rpc = await post(ours, '/api/rpc/cancelAction', body);
    assert.deepEqual([rpc.status, rpc.json.error.code, rpc.json.error.message],
      [400, -32602, 'Action not found or already completed']);
  });
});

describe('queries actor-host adds or refuses', () => {
  afterEach(cleanup);

  test('listTraces and getTrace read the trace store; unserved procedures, batches and POSTs get clear errors', async () => {
    const store = path.join(tempDir('ah-tools-traces-'), 't.sqlite');
    const manager = await startManager(['--trace-store', store]);
    await manager.startRuntime('cpp', { kind: 'cpp' });
    const run = await manager.post('/api/runAction', { key: '/flow/echo', input: 'traced' });
    const traceId = run.json.telemetry.traceId;
    const got = await manager.poll(() => query(manager.apiUrl, 'getTrace', { traceId }), (r) => r.status === 200,
      { timeoutMs: 10000, intervalMs: 50, what: `trace ${traceId}` });
    assert.equal(got.json.result.data.traceId, traceId);
    const list = await query(manager.apiUrl, 'listTraces', { limit: 5 });
    assert.ok(list.json.result.data.traces.some((t) => t.traceId === traceId));
    const missing = await query(manager.apiUrl, 'getTrace', { traceId: 'f'.repeat(32) });
    assert.deepEqual([missing.status, missing.json.error.data.code], [404, 'NOT_FOUND']);
    const bad = await query(manager.apiUrl, 'listTraces', { limit: 0 });
    assert.deepEqual([bad.status, bad.json.error.data.code], [400, 'BAD_REQUEST']);
    const unserved = await query(manager.apiUrl, 'listDatasets');
    assert.equal(unserved.status, 501);
    assert.match(unserved.json.error.message, /listDatasets is not served by actor-host/);
    // Batches: an answer per procedure, in order; bad batches get one clear error.
    const batch = await httpRequest(`${manager.apiUrl}/api/listActions,getActiveRuntimes?batch=1&input=%7B%7D`);
    assert.equal(batch.status, 200);
    assert.equal(batch.json.length, 2);
    assert.ok(Array.isArray(batch.json[1].result.data));
    const tooMany = Array(33).fill('getActiveRuntimes').join(',');
    const big = await httpRequest(`${manager.apiUrl}/api/${tooMany}?batch=1`);
    assert.deepEqual([big.status, big.json.error.data.code], [400, 'BAD_REQUEST']);
    const emptyName = await httpRequest(`${manager.apiUrl}/api/listActions,,getTrace?batch=1`);
    assert.equal(emptyName.status, 400);
    // One trace query per batch (32 listTraces of 1000 in one GET held 4 GB).
    const traceBatch = await httpRequest(`${manager.apiUrl}/api/listTraces,getActiveRuntimes,listTraces?batch=1`);
    assert.equal(traceBatch.status, 207);
    assert.ok(Array.isArray(traceBatch.json[0].result.data.traces));
    assert.equal(traceBatch.json[2].error.data.code, 'BAD_REQUEST');
    assert.match(traceBatch.json[2].error.message, /one trace query \(listTraces, getTrace\) per batch/);
    const notKeyed = await httpRequest(`${manager.apiUrl}/api/listActions?batch=1&input=%5B1%5D`);
    assert.equal(notKeyed.status, 400);
    const postBatch = await manager.post('/api/cancelAction,cancelAction?batch=1', { 0: { traceId: 'x' } });
    assert.equal(postBatch.status, 405);
    const notJson = await httpRequest(`${manager.apiUrl}/api/listActions?input=%7Bnope`);
    assert.equal(notJson.status, 400);
    const post = await manager.post('/api/getActiveRuntimes', {});
    assert.equal(post.status, 405);
    // Environment: only GENKIT_* variables, never the manager's other secrets.
    const env = await query(manager.apiUrl, 'getGenkitEnvironment');
    assert.ok(env.json.result.data.environmentVars.every((v) => v.name.startsWith('GENKIT_')));
  });
});
