// Reflection V1 on the runtime role, driven by the real genkit-cli (pinned
// in package.json): `genkit start -- actor-host --role runtime --demo`
// finds our runtime by its runtime file, `genkit flow:run` (unary,
// streaming -s, context -c) and `genkit flow:batchRun` call it, and the file
// goes when the runtime stops. The HTTP API itself is checked against the
// shapes of ../shared/spec/REFLECTION_V1.md (the JS runtime's).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, afterEach, describe, test } from 'node:test';
import {
  ACTOR_HOST_BIN,
  Child,
  cleanup,
  httpRequest,
  INTEROP_NODE_DIR,
  ndjsonStream,
  pollUntil,
  startCppRuntime,
  startManager,
  TRACE_ID_RE,
  tempDir,
} from './lib/harness.mjs';

const GENKIT_CLI = path.join(INTEROP_NODE_DIR, 'node_modules', 'genkit-cli', 'dist', 'bin', 'genkit.js');
const started = new Set();

/** Ctrl-C in a terminal: SIGINT to the whole process group (genkit start forwards no signal to its app). */
function interrupt(child) {
  try {
    process.kill(-child.pid, 'SIGINT');
  } catch {}
}

afterEach(async () => {
  for (const c of started) {
    if (c.running) interrupt(c);
    await c.stop({ graceMs: 8000 });
  }
  started.clear();
  await cleanup();
});
after(cleanup);

/** A fresh Genkit project (a package.json marks its root) and a HOME whose CLI config opts out of analytics. */
function makeProject() {
  const root = tempDir('ah-v1-project-');
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'v1-test', private: true }));
  const home = tempDir('ah-v1-home-');
  const env = { ...process.env, HOME: home };
  for (const k of Object.keys(env)) if (k.startsWith('GENKIT_')) delete env[k];
  return { root, env };
}

function genkit(project, args, { timeoutMs = 60000 } = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [GENKIT_CLI, ...args, '--non-interactive'],
      { cwd: project.root, env: project.env, timeout: timeoutMs, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => resolve({ code: error ? error.code ?? 1 : 0, stdout, stderr, out: stdout + stderr }));
  });
}

function runtimeFiles(project) {
  const dir = path.join(project.root, '.genkit', 'runtimes');
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => path.join(dir, f)) : [];
  // Every file there counts: the CLI reads whatever appears (no temporaries).
}

async function startUnderGenkit(project) {
  assert.equal((await genkit(project, ['config', 'set', 'analyticsOptOut', 'true'])).code, 0);
  const start = new Child('genkit-start', process.execPath,
    [GENKIT_CLI, 'start', '--non-interactive', '--noui', '--', ACTOR_HOST_BIN, '--role', 'runtime', '--demo'],
    { cwd: project.root, env: project.env, detached: true });
  started.add(start);
  const [file] = await pollUntil(() => runtimeFiles(project), (files) => files.length === 1,
    { timeoutMs: 20000, what: 'the runtime file' });
  await start.waitForLine(/Reflection V1 at http:\/\/127\.0\.0\.1:\d+/, 10000);
  return { start, file, info: JSON.parse(fs.readFileSync(file, 'utf8')) };
}

describe('genkit-cli against our V1 runtime', () => {
  test('genkit start runs it; flow:run (plain, -s, -c) and flow:batchRun call it; its file goes when it stops', async () => {
    const project = makeProject();
    const { start, file, info } = await startUnderGenkit(project);
    assert.equal(typeof info.id, 'string');
    assert.ok(Number.isInteger(info.pid) && info.pid !== start.pid, JSON.stringify(info));
    assert.match(info.reflectionServerUrl, /^http:\/\/localhost:\d+$/);
    assert.match(info.genkitVersion, /^cpp\//);
    assert.equal(info.reflectionApiSpecVersion, 1);
    assert.ok(!Number.isNaN(Date.parse(info.timestamp)));
    assert.equal(path.basename(file).startsWith(`${info.id}-`), true);

    const plain = await genkit(project, ['flow:run', 'echo', '"hi from the cli"']);
    assert.equal(plain.code, 0, plain.out);
    assert.match(plain.stdout, /Result:\s*\n\s*hi from the cli/, plain.out);
    assert.match(plain.stdout, /Trace ID: [0-9a-f]{32}/, plain.out);

    // The run's span went to genkit start's telemetry server: trace:get shows it.
    const traceId = plain.stdout.match(/Trace ID: ([0-9a-f]{32})/)[1];
    const trace = await pollUntil(() => genkit(project, ['trace:get', traceId, '--format', 'json']),
      (r) => r.code === 0 && r.stdout.includes('"spans"'), { timeoutMs: 15000, intervalMs: 250, what: `trace ${traceId}` });
    const data = JSON.parse(trace.stdout.slice(trace.stdout.indexOf('{')));
    const root = Object.values(data.spans).find((sp) => !sp.parentSpanId);
    assert.equal(root.attributes['genkit:name'], 'echo');
    assert.equal(root.attributes['genkit:metadata:subtype'], 'flow');
    assert.equal(root.attributes['genkit:state'], 'success');
    assert.equal(JSON.parse(root.attributes['genkit:output']), 'hi from the cli');
    const shown = await genkit(project, ['trace:get', traceId]);
    assert.match(shown.stdout, /echo \(flow\).*✔/, shown.out);

    const streamed = await genkit(project, ['flow:run', 'streamCount', '{"n":3}', '-s']);
    assert.equal(streamed.code, 0, streamed.out);
    const chunkAt = [0, 1, 2].map((i) => streamed.stdout.search(new RegExp(`"i": ${i}`)));
    assert.ok(chunkAt.every((at) => at >= 0), streamed.out);
    assert.deepEqual([...chunkAt].sort((a, b) => a - b), chunkAt, 'chunks in order');
    assert.ok(streamed.stdout.indexOf('Result:') > chunkAt[2], 'the result after the chunks');

    const ctx = await genkit(project, ['flow:run', 'whoami', '"me"', '-c', '{"auth":{"uid":"u-7"}}']);
    assert.equal(ctx.code, 0, ctx.out);
    assert.match(ctx.stdout, /"uid": "u-7"/, ctx.out);

    const inputs = path.join(project.root, 'inputs.json');
    fs.writeFileSync(inputs, JSON.stringify([{ n: 1 }, { n: 4 }]));
    const output = path.join(project.root, 'out.json');
    const batch = await genkit(project, ['flow:batchRun', 'streamCount', inputs, '--output', output]);
    assert.equal(batch.code, 0, batch.out);
    const results = JSON.parse(fs.readFileSync(output, 'utf8'));
    assert.deepEqual(results.map((r) => r.output), [{ count: 1, sum: 0 }, { count: 4, sum: 6 }]);

    const failing = await genkit(project, ['flow:run', 'fail', '"x"']);
    assert.match(failing.out, /fail/i, failing.out);

    // Ctrl-C: genkit start and our runtime end, and it removes its file.
    interrupt(start);
    await start.exited;
    await pollUntil(() => runtimeFiles(project), (files) => files.length === 0, { timeoutMs: 10000, what: 'the runtime file removed' });
    await pollUntil(() => { try { process.kill(info.pid, 0); return true; } catch { return false; } }, (alive) => !alive,
      { timeoutMs: 10000, what: `runtime pid ${info.pid} gone` });
  });
});

describe('genkit-cli against our manager as its telemetry server', () => {
  test('genkit trace:get shows a run routed through the manager, from its trace store', async () => {
    const project = makeProject();
    assert.equal((await genkit(project, ['config', 'set', 'analyticsOptOut', 'true'])).code, 0);
    const store = path.join(project.root, 'traces.sqlite');
    const manager = await startManager(['--trace-store', store]);
    await manager.startRuntime('cpp', { kind: 'cpp' });
    const run = await manager.post('/api/runAction', { key: '/tool/add', input: { a: 20, b: 22 } });
    const traceId = run.json.telemetry.traceId;
    await manager.poll(() => manager.get(`/api/traces/${traceId}`), (r) => r.status === 200,
      { timeoutMs: 10000, intervalMs: 50, what: `trace ${traceId}` });
    const withServer = { ...project, env: { ...project.env, GENKIT_TELEMETRY_SERVER: manager.apiUrl } };
    const shown = await genkit(withServer, ['trace:get', traceId]);
    assert.equal(shown.code, 0, shown.out);
    assert.match(shown.stdout, /add \(tool\).*✔/, shown.out);
    assert.match(shown.stdout, /42/, shown.out);
    // trace:list sends a filter (neq genkitx:ignore-trace) the store applies.
    const listed = await genkit(withServer, ['trace:list']);
    assert.equal(listed.code, 0, listed.out);
    assert.ok(listed.out.includes(traceId), listed.out);
  });
});

describe('the V1 HTTP API', () => {
  async function startV1(env = {}) {
    const project = makeProject();
    const rt = startCppRuntime(null, { cwd: project.root, env: { ...project.env, GENKIT_ENV: 'dev', ...env } });
    const m = await rt.waitForLine(/Reflection V1 at (http:\/\/\S+?:\d+)/, 10000);
    const [file] = runtimeFiles(project);
    return { project, rt, base: `http://127.0.0.1:${m[1].split(':').pop()}`, info: JSON.parse(fs.readFileSync(file, 'utf8')) };
  }
  const post = (url, body, headers = {}) => httpRequest(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

  test('routes, headers, errors and cancel have the JS runtime shapes', async () => {
    const { base, info } = await startV1({ GENKIT_RUNTIME_ID: 'rt-v1' });
    assert.equal(info.id, 'rt-v1');
    const health = await httpRequest(`${base}/api/__health?id=rt-v1`);
    assert.equal(health.status, 200);
    assert.equal(health.text, 'OK');
    assert.match(health.headers['x-genkit-version'], /^cpp\//);
    assert.equal((await httpRequest(`${base}/api/__health?id=other`)).status, 503);
    const actions = await httpRequest(`${base}/api/actions`);
    assert.equal(actions.json['/flow/echo'].name, 'echo');
    assert.equal(actions.json.actions, undefined);
    const run = await post(`${base}/api/runAction`, { key: '/flow/echo', input: { a: 1 } });
    assert.match(run.headers['x-genkit-trace-id'], TRACE_ID_RE);
    assert.deepEqual(run.json, { result: { a: 1 }, telemetry: { traceId: run.headers['x-genkit-trace-id'] } });
    const unknown = await post(`${base}/api/runAction`, { key: '/flow/none' });
    assert.deepEqual([unknown.status, unknown.text], [404, 'action /flow/none not found']);
    const failed = await post(`${base}/api/runAction`, { key: '/flow/fail', input: 'x' });
    assert.equal(failed.status, 200);
    assert.equal(typeof failed.json.error.code, 'number');
    assert.equal(failed.json.error.details.traceId, failed.headers['x-genkit-trace-id']);
    // A cross-site page cannot drive it.
    const csrf = await httpRequest(`${base}/api/runAction`, { method: 'POST', body: '{"key":"/flow/echo"}', headers: { 'content-type': 'text/plain', origin: 'http://evil.example' } });
    assert.equal(csrf.status, 403);
    // Cancel by the trace id from the early head.
    const slow = await ndjsonStream(`${base}/api/runAction?stream=true`, { key: '/flow/slow', input: { ms: 60000 } });
    assert.match(slow.traceId, TRACE_ID_RE);
    assert.deepEqual((await post(`${base}/api/cancelAction`, {})).json, { error: 'traceId is required' });
    const cancelled = await post(`${base}/api/cancelAction`, { traceId: slow.traceId });
    assert.deepEqual([cancelled.status, cancelled.json], [200, { message: 'Action cancelled' }]);
    const end = await slow.lines.drain(10000, 'the cancelled run');
    assert.equal(end.at(-1).error.code, 1, JSON.stringify(end));
    const again = await post(`${base}/api/cancelAction`, { traceId: slow.traceId });
    assert.deepEqual([again.status, again.json], [404, { message: 'Action not found or already completed' }]);
  });

  test('a bad GENKIT_REFLECTION_PORT is refused at start; without GENKIT_ENV=dev it says how to pick a protocol', async () => {
    const project = makeProject();
    const bad = startCppRuntime(null, { cwd: project.root, env: { ...project.env, GENKIT_ENV: 'dev', GENKIT_REFLECTION_PORT: 'abc' } });
    bad.mayExit = true;
    await bad.waitForLine(/invalid GENKIT_REFLECTION_PORT: 'abc'/, 10000);
    assert.equal((await bad.exited).code, 1);
    const none = startCppRuntime(null, { cwd: project.root, env: project.env });
    none.mayExit = true;
    await none.waitForLine(/no manager to dial.*GENKIT_ENV=dev/, 10000);
    assert.equal((await none.exited).code, 1);
  });
});
