// Trace streams: GET /api/traces/<id>/stream (Server-Sent Events, as
// @genkit-ai/telemetry-server serves it) and the tools server's
// POST /api/streamTrace (JSON lines). Differential: the same documents are
// posted to the manager and to the real telemetry server (pinned, started
// here), and both streams must tell the same span events in the same order.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { after, afterEach, test } from 'node:test';
import { AsyncQueue, cleanup, freePort, httpRequest, INTEROP_NODE_DIR, startManager } from './lib/harness.mjs';

const requireNode = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-trace-stream-'));
const open = new Set();
afterEach(async () => {
  for (const req of open) req.destroy();
  open.clear();
  await cleanup();
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const TRACE = 'aaaabbbbccccddddeeeeffff00001111';

/** The messages of a stream as parsed JSON: SSE `data:` blocks, or lines. */
function follow(url, { method = 'GET', body, sse = true } = {}) {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method,
      headers: { accept: sse ? 'text/event-stream' : '*/*', ...(body ? { 'content-type': 'application/json' } : {}) } });
    open.add(req);
    req.once('error', reject);
    req.once('response', (res) => {
      const messages = new AsyncQueue();
      let buf = '';
      const sep = sse ? '\n\n' : '\n';
      res.setEncoding('utf8');
      res.on('data', (text) => {
        buf += text;
        for (let i = buf.indexOf(sep); i >= 0; i = buf.indexOf(sep)) {
          const part = buf.slice(0, i).trim();
          buf = buf.slice(i + sep.length);
          if (part) messages.push(JSON.parse(sse ? part.replace(/^data: /, '') : part));
        }
      });
      res.once('end', () => messages.end());
      res.once('error', () => messages.end());
      resolve({ status: res.statusCode, headers: res.headers, messages });
    });
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

function span(id, { parent, start, end }) {
  return { spanId: id, traceId: TRACE, ...(parent ? { parentSpanId: parent } : {}), startTime: start, endTime: end,
    attributes: { 'genkit:name': id }, displayName: id, instrumentationLibrary: { name: 'genkit-tracer', version: 'v1' },
    spanKind: 'INTERNAL', status: { code: 0 } };
}
const doc = (...spans) => ({ traceId: TRACE, spans: Object.fromEntries(spans.map((s) => [s.spanId, s])) });

// A run as a realtime exporter sends it: the root starts, then the root and
// its child end, then a late copy of the running root (ignored: it has ended).
const DOCS = [
  doc(span('root', { start: 1000, end: 0 })),
  doc(span('root', { start: 1000, end: 1100 }), span('child', { parent: 'root', start: 1010, end: 1050 })),
  doc(span('root', { start: 1000, end: 0 })),
];

async function take(messages, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await messages.next(10000, `message ${i + 1} of ${n}`)).value);
  return out;
}

const shape = (events) => events.map((e) => `${e.type} ${e.span.spanId}`);

test('the manager streams the same span events as the real telemetry server', async () => {
  const { startTelemetryServer, stopTelemetryApi, LocalFileTraceStore, LocalFileLogStore } =
    requireNode('@genkit-ai/telemetry-server');
  const port = await freePort();
  await startTelemetryServer({ port, traceStore: new LocalFileTraceStore({ storeRoot: tmp, indexRoot: tmp }),
    logStore: new LocalFileLogStore({ storeRoot: tmp, indexRoot: tmp }) });
  const real = `http://localhost:${port}`;
  const manager = await startManager(['--trace-store', path.join(tmp, 'traces.sqlite')]);
  try {
    // The telemetry server sends nothing, not even its head, for a trace it
    // does not know yet: the run has started when the streams open.
    for (const base of [real, manager.apiUrl])
      assert.equal((await httpRequest(`${base}/api/traces`, { method: 'POST', body: DOCS[0] })).status, 200);
    const streams = [await follow(`${real}/api/traces/${TRACE}/stream`), await follow(`${manager.apiUrl}/api/traces/${TRACE}/stream`)];
    assert.equal(streams[1].status, 200);
    assert.match(streams[1].headers['content-type'], /text\/event-stream/);
    const [snapWant, snapGot] = await Promise.all(streams.map((s) => take(s.messages, 1)));
    assert.deepEqual(Object.keys(snapGot[0].spans), Object.keys(snapWant[0].spans));
    assert.equal(snapGot[0].spans.root.endTime, 0);
    for (const d of DOCS.slice(1))
      for (const base of [real, manager.apiUrl]) {
        const r = await httpRequest(`${base}/api/traces`, { method: 'POST', body: d });
        assert.equal(r.status, 200, r.text);
      }
    // The second document's 4 events; none for the third (its root has ended).
    const [want, got] = await Promise.all(streams.map((s) => take(s.messages, 4)));
    assert.deepEqual(shape(got), shape(want));
    assert.deepEqual(shape(got), ['span_start root', 'span_start child', 'span_end child', 'span_end root']);
    assert.ok(got.every((e) => e.traceId === TRACE));
    const one = doc(span('after', { parent: 'root', start: 1200, end: 1300 }));
    for (const base of [real, manager.apiUrl])
      await httpRequest(`${base}/api/traces`, { method: 'POST', body: one });
    const [w2, g2] = await Promise.all(streams.map((s) => take(s.messages, 2)));
    assert.deepEqual(shape(g2), shape(w2));
  } finally {
    for (const req of open) req.destroy();
    open.clear();
    await stopTelemetryApi();
  }
});

test('POST /api/streamTrace: the trace and its events as JSON lines; bad input and no store', async () => {
  const manager = await startManager(['--trace-store', path.join(tmp, 'traces-2.sqlite')]);
  await manager.post('/api/traces', DOCS[1]);
  const s = await follow(`${manager.apiUrl}/api/streamTrace`, { method: 'POST', body: { traceId: TRACE }, sse: false });
  assert.equal(s.status, 200);
  assert.equal(s.headers['x-genkit-trace-id'], TRACE);
  const [snapshot] = await take(s.messages, 1);
  assert.deepEqual(Object.keys(snapshot.spans).sort(), ['child', 'root']);
  await manager.post('/api/traces', doc(span('late', { parent: 'root', start: 1060, end: 1070 })));
  assert.deepEqual(shape(await take(s.messages, 2)), ['span_start late', 'span_end late']);
  // The client leaves.
  for (const req of open) req.destroy();
  open.clear();
  const missing = await manager.post('/api/streamTrace', {});
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.json, { error: 'traceId is required' });
  const bad = await manager.post('/api/streamTrace', { traceId: 'a\r\nSet-Cookie: x=1' });
  assert.equal(bad.status, 400);
  const none = await startManager();
  const noStore = await none.post('/api/streamTrace', { traceId: TRACE });
  assert.equal(noStore.status, 500);
  assert.match(noStore.text, /--trace-store/);
});
