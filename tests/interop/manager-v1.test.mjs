// The manager drives Reflection V1 runtimes: a Genkit app started the V1 way
// (GENKIT_ENV=dev, an HTTP reflection server and a runtime file in
// <project root>/.genkit/runtimes) is found through its file, health-checked,
// listed with "protocol":"v1" beside V2 runtimes, and called through the
// manager's front door like any runtime: unary, streaming, errors, cancel.
// Peers: the real Genkit JS runtime (genkit-runtime.mjs, pinned) and our own
// runtime role in V1 mode.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, afterEach, test } from 'node:test';
import {
  Child,
  cleanup,
  RUNTIME_SCRIPT,
  startCppRuntime,
  startManager,
  TRACE_ID_RE,
  tempDir,
} from './lib/harness.mjs';

const started = new Set();
afterEach(async () => {
  for (const c of started) await c.stop();
  started.clear();
  await cleanup();
});
after(cleanup);

function makeProject() {
  const root = tempDir('ah-mgr-v1-');
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'mgr-v1', private: true }));
  return root;
}

function runtimesDir(root) {
  return path.join(root, '.genkit', 'runtimes');
}

/**
 * The real Genkit JS runtime started the V1 way in `root` (no V2 manager URL).
 * Its id is its own `<pid>-<port>`: with GENKIT_RUNTIME_ID genkit 1.42 writes
 * that id into its file but answers health checks only for `<pid>-<port>`,
 * so the Genkit CLI would drop it too.
 */
function startJsV1(root) {
  const env = { ...process.env, GENKIT_ENV: 'dev' };
  for (const k of ['GENKIT_REFLECTION_V2_SERVER', 'GENKIT_TELEMETRY_SERVER', 'GENKIT_REFLECTION_PORT', 'GENKIT_RUNTIME_ID'])
    delete env[k];
  const child = new Child('runtime-js-v1', process.execPath, ['--preserve-symlinks-main', RUNTIME_SCRIPT],
    { cwd: root, env });
  started.add(child);
  return child;
}

async function setup({ managerArgs = [] } = {}) {
  const root = makeProject();
  const manager = await startManager(['--project-root', root, ...managerArgs]);
  await manager.child.waitForLine(/Watching .* for Reflection V1 runtimes/, 5000);
  const js = startJsV1(root);
  // Genkit creates the file, then writes it: read it once it parses.
  const readFile = () => {
    const files = fs.existsSync(runtimesDir(root)) ? fs.readdirSync(runtimesDir(root)) : [];
    try {
      return files.length === 1 ? JSON.parse(fs.readFileSync(path.join(runtimesDir(root), files[0]), 'utf8')) : null;
    } catch {
      return null;
    }
  };
  const { id } = await manager.poll(readFile, (f) => f !== null && typeof f.id === 'string',
    { timeoutMs: 30000, what: 'the JS runtime file, written whole' });
  const info = await manager.waitForRuntime(id, { timeoutMs: 10000, child: js });
  return { root, manager, js, info, id };
}

test('a V1 runtime is found by its file and listed as protocol v1 beside V2 runtimes', async () => {
  const { manager, info, id } = await setup();
  assert.equal(info.protocol, 'v1', JSON.stringify(info));
  assert.match(info.reflectionServerUrl, /^http:\/\/(localhost|127\.0\.0\.1):\d+$/);
  // A V2 runtime beside it keeps its shape (no protocol key).
  await manager.startRuntime('v2-cpp', { kind: 'cpp' });
  const list = (await manager.get('/api/runtimes')).json;
  const v2 = list.find((r) => r.id === 'v2-cpp');
  assert.ok(v2 && !('protocol' in v2), JSON.stringify(list));
  assert.ok(list.some((r) => r.id === id && r.protocol === 'v1'));
  // The manager's listing of its actions comes from the V1 runtime's /api/actions.
  const actions = await manager.get(`/api/actions?runtimeId=${id}`);
  assert.equal(actions.status, 200, actions.text);
  assert.ok(JSON.stringify(actions.json).includes('/flow/streamCount'), actions.text);
});

test('unary, streaming and failing runs of a V1 runtime through the manager', async () => {
  const { manager, id } = await setup();
  const echo = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: { hi: 1 }, runtimeId: id });
  assert.equal(echo.status, 200, echo.text);
  assert.deepEqual(echo.json.result, { hi: 1 });
  assert.match(echo.json.telemetry.traceId, TRACE_ID_RE);

  const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 4, delayMs: 5 }, runtimeId: id });
  assert.equal(s.status, 200);
  assert.match(s.traceId ?? '', TRACE_ID_RE, 'the trace id comes early, from the V1 head');
  const lines = await s.lines.drain(10000);
  assert.deepEqual(lines.slice(0, -1), [0, 1, 2, 3].map((i) => ({ i })));
  assert.deepEqual(lines.at(-1).result, { count: 4, sum: 6 });
  assert.equal(lines.at(-1).telemetry.traceId, s.traceId);

  const fail = await manager.post('/api/rpc/runAction', { key: '/flow/fail', input: { status: 'FAILED_PRECONDITION', message: 'not yet' }, runtimeId: id });
  assert.notEqual(fail.status, 200);
  assert.equal(fail.json.error.data.code, 9, fail.text);
  assert.match(fail.json.error.message, /not yet/); // as over V2: 'FAILED_PRECONDITION: not yet'

  const unknown = await manager.post('/api/rpc/runAction', { key: '/flow/nope', input: 1, runtimeId: id });
  assert.notEqual(unknown.status, 200);
  assert.match(unknown.text, /nope/);

  // Bidi input exists only in V2: refused at once, with the reason.
  const bidi = await manager.stream('/api/rpc/streamAction?bidi=true', { key: '/flow/chat', runtimeId: id });
  const bidiText = bidi.text ?? JSON.stringify(await bidi.lines.drain(10000));
  assert.match(bidiText, /UNIMPLEMENTED|"code":12|Reflection V2/, bidiText);
  await manager.assertHealthy();
});

test('cancelAction through the manager cancels a V1 run, which ends CANCELLED', async () => {
  const { manager, id } = await setup();
  const api = await manager.api();
  const run = api.request('runAction', { key: '/flow/slow', input: { ms: 30000 }, runtimeId: id }, { id: 'slow-1', timeoutMs: 20000 });
  const state = await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === 'slow-1', 10000, 'runActionState');
  const traceId = state.params.state.traceId;
  assert.match(traceId, TRACE_ID_RE);
  const t0 = Date.now();
  const cancelled = await manager.post('/api/rpc/cancelAction', { traceId, runtimeId: id });
  assert.equal(cancelled.status, 200, cancelled.text);
  assert.deepEqual(cancelled.json, { message: 'Action cancelled' });
  const reply = await run;
  assert.equal(reply.error?.data?.code, 1, JSON.stringify(reply));
  // The runtime ended it, not the link's 10 s cancel grace (which answers
  // CANCELLED too): well under the grace, with room for a loaded machine.
  assert.ok(Date.now() - t0 < 8000, 'the run ended before the cancel grace');
  // A finished run: the same answer as a V2 runtime's (-32602, HTTP 400 on this route).
  const again = await manager.post('/api/rpc/cancelAction', { traceId, runtimeId: id });
  assert.equal(again.status, 400, again.text);
  assert.equal(again.json.error.message, 'Action not found or already completed');
  await manager.waitForStats({ 'actors.pending_request': 0 });
});

test('our own runtime role in V1 mode is driven by the manager too', async () => {
  const root = makeProject();
  const manager = await startManager(['--project-root', root]);
  const rt = startCppRuntime(null, { id: 'cpp-v1', cwd: root, env: { GENKIT_ENV: 'dev' } });
  await manager.waitForRuntime('cpp-v1', { timeoutMs: 20000, child: rt });
  const echo = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 'hi', runtimeId: 'cpp-v1' });
  assert.equal(echo.status, 200, echo.text);
  assert.equal(echo.json.result, 'hi');
  // It stops: its file goes, and so does its listing.
  await rt.stop();
  await manager.waitForRuntimeGone('cpp-v1', 5000);
});

test('a V1 runtime that dies without removing its file disappears at its next health check', async () => {
  const { root, manager, js, id } = await setup();
  const files = fs.readdirSync(runtimesDir(root));
  assert.equal(files.length, 1);
  js.kill('SIGKILL');
  await manager.waitForRuntimeGone(id, 12000);
  // Its process is gone: the manager removes its file, as the Genkit CLI does.
  await manager.poll(() => fs.readdirSync(runtimesDir(root)), (f) => f.length === 0, { timeoutMs: 5000, what: 'the file removed' });
  await manager.assertHealthy();
});

test('with a trace store the V1 runtime is told of it through /api/notify and its spans arrive', async () => {
  const store = path.join(tempDir('ah-mgr-v1-store-'), 'traces.db');
  const { manager, id } = await setup({ managerArgs: ['--trace-store', store] });
  const echo = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: 'traced', runtimeId: id });
  assert.equal(echo.status, 200, echo.text);
  const traceId = echo.json.telemetry.traceId;
  const trace = await manager.poll(() => manager.get(`/api/traces/${traceId}`), (r) => r.status === 200,
    { timeoutMs: 15000, what: 'the V1 runtime\'s trace in the store' });
  const spans = Object.values(trace.json.spans);
  assert.ok(spans.some((s) => s.attributes?.['genkit:name'] === 'echo'), trace.text);
});

test('runtime files that are not valid or not on loopback are ignored with a reason', async () => {
  const root = makeProject();
  fs.mkdirSync(runtimesDir(root), { recursive: true });
  fs.writeFileSync(path.join(runtimesDir(root), 'bad-1.json'), '{"id":');
  fs.writeFileSync(path.join(runtimesDir(root), 'far-1.json'), JSON.stringify({
    id: 'far', pid: process.pid, reflectionServerUrl: 'http://192.0.2.1:3100', timestamp: new Date().toISOString(),
  }));
  const manager = await startManager(['--project-root', root]);
  await manager.child.waitForLine(/runtime file bad-1\.json: not a JSON object/, 5000);
  await manager.child.waitForLine(/runtime file far-1\.json \(runtime far\): reflectionServerUrl is not on a loopback host/, 5000);
  assert.deepEqual((await manager.get('/api/runtimes')).json, []);
});

test('a runtime file whose URL reaches our own API through a proxy makes a call loop, cut at 8 hops', async () => {
  const root = makeProject();
  fs.mkdirSync(runtimesDir(root), { recursive: true });
  const manager = await startManager(['--project-root', root]);
  // A plain TCP relay to the manager's API: the file's URL is not one of
  // the manager's listeners, so only the hop count can see the loop.
  let calls = 0;
  const sockets = new Set();
  const proxy = net.createServer((down) => {
    const up = net.connect(manager.apiPort, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    down.on('data', (d) => {
      calls += (d.toString('latin1').match(/^POST \/api\/runAction[ ?]/gm) || []).length;
    });
    down.pipe(up);
    up.pipe(down);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  try {
    fs.writeFileSync(path.join(runtimesDir(root), 'loop-1.json'), JSON.stringify({
      id: 'loop', pid: process.pid, reflectionServerUrl: `http://127.0.0.1:${proxy.address().port}`,
      timestamp: new Date().toISOString(),
    }));
    await manager.waitForRuntime('loop', { timeoutMs: 15000 });
    const started = Date.now();
    const res = await manager.post('/api/runAction', { key: '/flow/echo', input: 'round and round', runtimeId: 'loop' });
    assert.notEqual(res.status, 200, res.text);
    assert.match(res.text, /came back through a manager 8 times: .*a call loop/);
    // The first call and seven that came back through the proxy; the 8th hop was refused at the door.
    assert.equal(calls, 8);
    assert.ok(Date.now() - started < 10000);
    await manager.waitForStats({ 'actors.pending_request': 0 });
    await manager.assertHealthy();
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => proxy.close(resolve));
  }
});
