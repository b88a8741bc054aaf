// The manager as the telemetry server of its runtimes (--trace-store): the
// real Genkit JS runtime is told telemetryServerUrl at register, exports the
// spans of its runs to /api/traces, and they are listed and loaded back in
// Genkit's TraceData shapes; bad documents are refused with the reason.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { ACTOR_HOST_BIN, cleanup, INTEROP_NODE_DIR, startManager } from './lib/harness.mjs';

const requireNode = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'));

afterEach(cleanup);
after(cleanup);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-traces-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

let seq = 0;
async function managerWithStore(args = []) {
  const store = path.join(tmp, `traces-${++seq}.sqlite`);
  const manager = await startManager(['--trace-store', store, ...args]);
  return { manager, store };
}

test('a Genkit runtime exports the spans of its runs to the manager, which lists and loads them', async () => {
  const { manager } = await managerWithStore();
  const genkit = await manager.startRuntime('gk', { kind: 'genkit' });
  const run = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: { hello: 'traces' } });
  assert.equal(run.status, 200, run.text);
  const traceId = run.json.telemetry.traceId;
  // The exporter sends on its own schedule: wait for the ended root span.
  const trace = await manager.poll(
    () => manager.get(`/api/traces/${traceId}`),
    (r) => r.status === 200 && Object.values(r.json.spans).some((s) => !s.parentSpanId && s.endTime > 0),
    { timeoutMs: 15000, intervalMs: 100, what: `trace ${traceId} with its ended root span` }
  );
  const root = Object.values(trace.json.spans).find((s) => !s.parentSpanId);
  assert.equal(trace.json.traceId, traceId);
  assert.equal(root.attributes['genkit:name'], 'echo');
  assert.equal(root.attributes['genkit:type'], 'action');
  assert.equal(JSON.parse(root.attributes['genkit:input']).hello, 'traces');
  const list = await manager.get('/api/traces?limit=5');
  assert.equal(list.status, 200);
  assert.ok(list.json.traces.some((t) => t.traceId === traceId), 'the run is listed');
  await genkit.stop();
});

test('our C++ runtime exports the spans of its runs to the manager, failures included', async () => {
  const { manager } = await managerWithStore();
  await manager.startRuntime('cpp', { kind: 'cpp' });
  const ok = await manager.post('/api/rpc/runAction', { key: '/tool/add', input: { a: 1, b: 2 } });
  const failed = await manager.post('/api/rpc/runAction', { key: '/flow/fail', input: 'boom' });
  for (const [run, state] of [[ok, 'success'], [failed, 'error']]) {
    const traceId = run.json.telemetry?.traceId ?? run.json.error.data.details.traceId;
    const trace = await manager.poll(() => manager.get(`/api/traces/${traceId}`), (r) => r.status === 200,
      { timeoutMs: 10000, intervalMs: 50, what: `trace ${traceId}` });
    const root = Object.values(trace.json.spans).find((s) => !s.parentSpanId);
    assert.equal(root.attributes['genkit:state'], state, JSON.stringify(root));
    assert.equal(root.spanId, traceId.slice(0, 16));
    assert.ok(root.endTime >= root.startTime && root.startTime > 1e12, JSON.stringify(root));
    if (state === 'success') {
      assert.deepEqual([root.attributes['genkit:name'], root.attributes['genkit:metadata:subtype']], ['add', 'tool']);
      assert.equal(JSON.parse(root.attributes['genkit:output']), 3);
      assert.deepEqual(root.status, { code: 0 });
    } else {
      assert.equal(root.status.code, 2);
      assert.match(root.status.message, /boom|fail/i);
    }
    // The manager's own span of the run: under the runtime's root, naming
    // the runtime it was routed to.
    const withRoute = await manager.poll(() => manager.get(`/api/traces/${traceId}`),
      (r) => Object.values(r.json.spans ?? {}).some((s) => s.attributes?.['genkit:type'] === 'actor-host'),
      { timeoutMs: 10000, intervalMs: 50, what: `the manager's span in trace ${traceId}` });
    const route = Object.values(withRoute.json.spans).find((s) => s.attributes['genkit:type'] === 'actor-host');
    assert.equal(route.parentSpanId, root.spanId, JSON.stringify(route));
    assert.equal(route.attributes['actor-host:runtime'], 'cpp');
    assert.equal(route.status.code, state === 'success' ? 0 : 2, JSON.stringify(route));
    assert.ok(route.endTime >= route.startTime, JSON.stringify(route));
  }
});

test('--otlp-endpoint: every stored span also goes to an OpenTelemetry collector as OTLP/HTTP JSON', async () => {
  // The collector is another manager's OTLP receiver (itself checked against
  // the OpenTelemetry JS exporter below): what arrives there is compared
  // with what the exporting manager stored.
  const { manager: collector } = await managerWithStore();
  const { manager } = await managerWithStore(['--otlp-endpoint', `${collector.apiUrl}/api/otlp/`]);
  await manager.child.waitForLine(/exported to the OpenTelemetry collector at .*\/api\/otlp\/v1\/traces/, 5000);
  await manager.startRuntime('cpp', { kind: 'cpp' });
  const run = await manager.post('/api/rpc/runAction', { key: '/tool/add', input: { a: 2, b: 3 } });
  assert.equal(run.status, 200, run.text);
  const traceId = run.json.telemetry.traceId;
  const done = (r) => r.status === 200 && Object.keys(r.json.spans).length === 2;
  const here = await manager.poll(() => manager.get(`/api/traces/${traceId}`), done,
    { timeoutMs: 15000, intervalMs: 50, what: 'both spans stored' });
  const there = await collector.poll(() => collector.get(`/api/traces/${traceId}`), done,
    { timeoutMs: 15000, intervalMs: 50, what: 'both spans at the collector' });
  for (const [id, span] of Object.entries(here.json.spans)) {
    const got = there.json.spans[id];
    assert.ok(got, `span ${id} reached the collector`);
    for (const k of ['traceId', 'spanId', 'parentSpanId', 'startTime', 'endTime', 'displayName'])
      assert.equal(got[k], span[k], `${k} of span ${id}`);
    assert.equal(got.attributes['genkit:name'] ?? null, span.attributes['genkit:name'] ?? null);
    assert.equal(got.attributes['actor-host:runtime'] ?? null, span.attributes['actor-host:runtime'] ?? null);
  }
});

test('--otlp-endpoint without a trace store, or not http, stops the start with the reason', async () => {
  const run = (args) => spawnSync(ACTOR_HOST_BIN, ['--role', 'manager', '--port', '0', '--http-port', '0', '--worker-port', '0', ...args],
    { encoding: 'utf8', timeout: 20000 });
  let r = run(['--otlp-endpoint', 'http://127.0.0.1:4318', '--trace-store', 'none']);
  assert.notEqual(r.status, 0);
  assert.match(r.stdout + r.stderr, /set trace_store too/);
  r = run(['--otlp-endpoint', 'grpc://127.0.0.1:4317', '--trace-store', path.join(tmp, 'x.sqlite')]);
  assert.notEqual(r.status, 0);
  assert.match(r.stdout + r.stderr, /not an http:\/\/ URL/);
});

test('OpenTelemetry JS exports over OTLP/HTTP JSON: the spans are stored as TraceData; malformed exports are refused', async () => {
  const { manager } = await managerWithStore();
  const { OTLPTraceExporter } = requireNode('@opentelemetry/exporter-trace-otlp-http');
  const { BasicTracerProvider, SimpleSpanProcessor } = requireNode('@opentelemetry/sdk-trace-base');
  const { SpanKind, SpanStatusCode, context, trace } = requireNode('@opentelemetry/api');
  const provider = new BasicTracerProvider();
  provider.addSpanProcessor(new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${manager.apiUrl}/api/otlp/v1/traces` })));
  const tracer = provider.getTracer('otlp-test', '1.2.3');
  const root = tracer.startSpan('checkout', { attributes: { 'genkit:name': 'checkout', 'genkit:isRoot': true, n: 7 } });
  const child = tracer.startSpan('pay', { kind: SpanKind.SERVER, attributes: { tags: ['a', 'b'] } }, trace.setSpan(context.active(), root));
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'card declined' });
  child.end();
  root.end();
  await provider.forceFlush();
  await provider.shutdown();
  const traceId = root.spanContext().traceId;
  const stored = await manager.get(`/api/traces/${traceId}`);
  assert.equal(stored.status, 200, stored.text);
  const r = stored.json.spans[root.spanContext().spanId];
  const c = stored.json.spans[child.spanContext().spanId];
  assert.deepEqual([r.displayName, r.attributes['genkit:name'], r.attributes['genkit:isRoot'], r.attributes.n], ['checkout', 'checkout', true, 7]);
  assert.deepEqual(r.instrumentationLibrary, { name: 'otlp-test', version: '1.2.3' });
  assert.equal(r.spanKind, 'INTERNAL');
  assert.ok(r.endTime >= r.startTime && r.startTime > 1e12);
  assert.equal(c.parentSpanId, r.spanId);
  assert.equal(c.spanKind, 'SERVER');
  assert.deepEqual(c.attributes.tags, ['a', 'b']);
  assert.deepEqual(c.status, { code: 2, message: 'card declined' });
  // Malformed exports get the reason; logs are accepted and not kept.
  const bad = await manager.post('/api/otlp/v1/traces', { resourceSpans: [{ scopeSpans: [{ spans: [{ spanId: 'x' }] }] }] });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /^Invalid OTLP export: every span needs a traceId and a spanId/);
  const notJson = await manager.post('/api/otlp/v1/traces', [1]);
  assert.equal(notJson.status, 400);
  assert.equal((await manager.post('/api/otlp/v1/logs', { resourceLogs: [] })).status, 200);
  assert.equal((await manager.get('/api/otlp/v1/traces')).status, 405);
});

test('listing pages, bad documents and bad parameters get clear answers', async () => {
  const { manager } = await managerWithStore();
  const span = (traceId, spanId, parent) => ({
    spanId, traceId, ...(parent ? { parentSpanId: parent } : {}), startTime: 1, endTime: 2,
    attributes: { 'genkit:name': spanId }, displayName: spanId,
    instrumentationLibrary: { name: 'genkit-tracer', version: 'v1' }, spanKind: 'INTERNAL',
  });
  for (let i = 0; i < 3; i++) {
    const traceId = `${'a'.repeat(31)}${i}`;
    const r = await manager.post('/api/traces', { traceId, displayName: `t${i}`, spans: { root: span(traceId, 'root') } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, 'OK');
  }
  const page1 = await manager.get('/api/traces?limit=2');
  assert.equal(page1.json.traces.length, 2);
  assert.equal(page1.json.continuationToken, '2');
  const page2 = await manager.get(`/api/traces?limit=2&continuationToken=${page1.json.continuationToken}`);
  assert.equal(page2.json.traces.length, 1);
  assert.equal(page2.json.continuationToken, undefined);
  const bad = await manager.post('/api/traces', { traceId: 'x', spans: { s: { ...span('x', 's'), spanKind: 7 } } });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.message, "Invalid TraceData: spans['s'].spanKind must be a string");
  assert.equal((await manager.get('/api/traces?limit=0')).status, 400);
  const badFilter = await manager.get(`/api/traces?filter=${encodeURIComponent('{"like":{}}')}`);
  assert.equal(badFilter.status, 400);
  assert.match(badFilter.json.error.message, /unknown operator 'like'/);
  const one = `${'a'.repeat(31)}1`;
  const filtered = await manager.get(`/api/traces?limit=5&filter=${encodeURIComponent(JSON.stringify({ eq: { id: one } }))}`);
  assert.deepEqual(filtered.json.traces.map((t) => t.traceId), [one]);
  assert.equal((await manager.get(`/api/traces/${'f'.repeat(32)}`)).status, 404);
  assert.equal((await manager.get('/api/traces/..%2f..%2fetc')).status, 400);
  assert.equal((await manager.post('/api/traces/abc', {})).status, 405);
});

test('without a trace store the routes say how to get one, and runtimes are not told of one', async () => {
  const manager = await startManager([]);
  const r = await manager.get('/api/traces');
  assert.equal(r.status, 404);
  assert.match(r.json.error.message, /--trace-store/);
  const rt = await manager.fakeRuntime();
  const reply = await rt.request('register', { id: 'fake', pid: 1 });
  assert.deepEqual(reply.result, {});
});

test('a runtime that registers is told the telemetry server, and a bad store path stops the start', async () => {
  const { manager } = await managerWithStore();
  const rt = await manager.fakeRuntime();
  const reply = await rt.request('register', { id: 'fake', pid: 1 });
  assert.equal(reply.result.telemetryServerUrl, `http://localhost:${manager.apiPort}`);
  // Children (and --write-env-file) get it as GENKIT_TELEMETRY_SERVER.
  const envFile = path.join(tmp, 'child.env');
  const withEnv = await managerWithStore(['--write-env-file', envFile]);
  await withEnv.manager.poll(() => fs.existsSync(envFile), (x) => x, { what: 'the env file' });
  assert.match(fs.readFileSync(envFile, 'utf8'), new RegExp(`^GENKIT_TELEMETRY_SERVER=http://localhost:${withEnv.manager.apiPort}$`, 'm'));
  const missing = path.join(tmp, 'no', 'such', 'dir', 'traces.sqlite');
  const r = spawnSync(ACTOR_HOST_BIN, ['--trace-store', missing, '--port', '0', '--http-port', '0', '--worker-port', '0'],
    { encoding: 'utf8', timeout: 10000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, new RegExp(`cannot start: trace store: cannot open ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
});

test('without --trace-store the manager keeps traces under the project root; a project where it cannot degrades to none', async () => {
  const root = fs.mkdtempSync(path.join(tmp, 'project-'));
  // `--trace-store ''` is "not set" (the harness turns the store off otherwise).
  const manager = await startManager(['--project-root', root, '--trace-store', '']);
  const store = path.join(root, '.genkit', 'actor-host', 'traces.sqlite');
  assert.ok(fs.existsSync(store), `no store at ${store}`);
  assert.equal(fs.statSync(path.dirname(store)).mode & 0o777, 0o700);
  const rt = await manager.fakeRuntime();
  const reply = await rt.request('register', { id: 'fake', pid: 1 });
  assert.equal(reply.result.telemetryServerUrl, `http://localhost:${manager.apiPort}`);
  await manager.startRuntime('cpp', { kind: 'cpp' });
  const run = await manager.post('/api/runAction', { key: '/flow/echo', input: 'default store', runtimeId: 'cpp' });
  const traceId = run.json.telemetry.traceId;
  const url = `/api/getTrace?input=${encodeURIComponent(JSON.stringify({ traceId }))}`;
  await manager.poll(() => manager.get(url), (r) => r.status === 200, { timeoutMs: 10000, intervalMs: 50, what: `trace ${traceId}` });

  // .genkit is a file here: no folder for the store. The manager starts,
  // says why, shows it in /metrics and tells no runtime to export.
  const broken = fs.mkdtempSync(path.join(tmp, 'project-'));
  fs.writeFileSync(path.join(broken, '.genkit'), 'not a folder');
  const degraded = await startManager(['--project-root', broken, '--trace-store', '']);
  await degraded.child.waitForLine(/No trace store: the default one .* cannot be used/);
  const metrics = await degraded.get('/metrics');
  assert.match(metrics.text, /^actor_host_trace_store_unavailable 1$/m);
  const rt2 = await degraded.fakeRuntime();
  const reply2 = await rt2.request('register', { id: 'fake', pid: 1 });
  assert.equal(reply2.result.telemetryServerUrl, undefined);
  const none = await startManager(['--project-root', broken, '--trace-store', 'none']);
  assert.match((await none.get('/metrics')).text, /^actor_host_trace_store_unavailable 0$/m);
});
