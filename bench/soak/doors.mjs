// The soak's traffic on the doors added last (see soak.mjs and README.md):
// the gRPC front door, the cluster port (this manager is node `a`, node `b`
// hosts `stable-b`) and the trace store, each with normal callers and with
// its attackers. Same rules as workloads.mjs: 127.0.0.1 only, every loop
// bounded by loop(), every round by its roundMs, outcomes counted, never thrown.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { freePort, pollUntil, startCppRuntime, startManager } from '../../tests/interop/lib/harness.mjs';
import { grpc, GrpcReflection, LOADER_OPTIONS } from '../../tests/interop/lib/grpc.mjs';
import { loop, post, sleep } from './workloads.mjs';

/**
 * The flags node `a` (the soaked manager) needs for the doors. Every call of
 * the soak is traced, ~1 MiB/s: unless `managerArgs` say otherwise the store
 * is capped at 16 MiB, so its file (memory-mapped: its pages count in RSS;
 * soak.mjs judges RSS without them) stays at about the cap plus the minute
 * of traces between two prunes.
 */
export async function doorArgs(outDir, managerArgs = []) {
  const clusterPort = await freePort();
  const store = path.join(outDir, 'traces.db');
  const cap = managerArgs.some((a) => a.startsWith('--trace-max-bytes')) ? [] : ['--trace-max-bytes', String(16 << 20)];
  return {
    store,
    args: ['--grpc-port', '0', '--trace-store', store, ...cap, '--node-name', 'a', '--cluster-port', String(clusterPort),
      '--cluster-heartbeat-interval', '500ms'],
  };
}

/**
 * Once node a is up with `stable-cpp` registered: finds the gRPC door and the
 * cluster port in its log, starts node b and `stable-b` there, waits until a
 * lists `b/stable-b`, and loads the genkit.flow.Flows stub through reflection.
 */
export async function startDoors(manager, { maxBodyBytes, store }) {
  const grpcLine = await manager.child.waitForLine(/Starting gRPC front door: \S+:(\d+)/, 10000);
  const clusterLine = await manager.child.waitForLine(/Cluster node \S+: listening on (\S+)/, 10000);
  const d = { grpcAddress: `127.0.0.1:${grpcLine[1]}`, clusterAddress: clusterLine[1], maxBodyBytes, store, notes: {} };
  const i = d.clusterAddress.lastIndexOf(':');
  d.clusterPort = Number(d.clusterAddress.slice(i + 1));
  d.nodeB = await startManager(['--node-name', 'b', '--cluster-port', '0', '--cluster-heartbeat-interval', '500ms',
    '--cluster-seeds', `127.0.0.1:${d.clusterPort}`]);
  d.stableB = startCppRuntime(d.nodeB.reflectionUrl, { id: 'stable-b' });
  await d.nodeB.waitForRuntime('stable-b', { timeoutMs: 30000, child: d.stableB });
  await manager.poll(() => manager.json('/api/cluster'), (c) => c.nodes.some((n) => n.name === 'b' && n.status === 'up'),
    { timeoutMs: 15000, intervalMs: 100, what: 'node b up at a' });
  await manager.poll(() => manager.runtimes(), (rts) => rts.some((r) => r.qualifiedId === 'b/stable-b'),
    { timeoutMs: 15000, intervalMs: 100, what: 'b/stable-b listed at a' });
  const reflection = new GrpcReflection(d.grpcAddress, grpc.credentials.createInsecure());
  try {
    await pollUntil(() => reflection.listServices().catch(() => []), (l) => l.includes('genkit.flow.Flows'),
      { timeoutMs: 15000, intervalMs: 100, what: 'genkit.flow.Flows on the gRPC door' });
    const descriptor = await reflection.getDescriptorBySymbol('genkit.flow.Flows');
    d.Flows = descriptor.getPackageObject(LOADER_OPTIONS).genkit.flow.Flows;
    // streamCount is server-streaming when the catalog takes our runtime's
    // schemas; with the Genkit runtime's (no streamSchema) it is unary and
    // its streaming twin is streamCount_stream.
    d.streamMethod = ['streamCount', 'streamCount_stream'].find((m) => d.Flows.service[m]?.responseStream);
    if (!d.streamMethod) throw new Error('genkit.flow.Flows has no server-streaming streamCount');
  } finally {
    reflection.client?.close();
  }
  return d;
}

/** Stops `stable-b` and node b (SIGTERM, SIGKILL after the grace); their exits. */
export async function stopDoors(d) {
  const stableB = await d.stableB.stop({ graceMs: 6000 });
  const nodeB = await d.nodeB.child.stop({ graceMs: 10000 });
  return { stableB, nodeB, nodeBLog: d.nodeB.child.logPath };
}

/** Node a's /metrics lines of the doors (counters without labels). */
export async function doorMetrics(manager) {
  const res = await manager.get('/metrics').catch(() => null);
  if (!res || res.status !== 200) return [];
  return res.text.split('\n').filter((l) => /^actor_host_(grpc|cluster|trace|remote)\w* \S+$/.test(l));
}

/** The trace store's files and their sizes, then removed (the store may hold 256 MiB). */
export function removeStore(store) {
  const files = {};
  for (const f of [store, `${store}-wal`, `${store}-shm`]) {
    try {
      files[path.basename(f)] = fs.statSync(f).size;
      fs.rmSync(f, { force: true });
    } catch {}
  }
  return files;
}

// ---------------------------------------------------------------------------
// helpers

/** A JS string as google.protobuf.Value (proto-loader's object form). */
const str = (s) => ({ string_value: s });
const mdFor = (runtimeId) => {
  const md = new grpc.Metadata();
  md.set('runtime-id', runtimeId);
  return md;
};

/** A grpc-js client of genkit.flow.Flows closed when the soak ends, whatever its state. */
function flowsClient(ctx, d) {
  const client = new d.Flows(d.grpcAddress, grpc.credentials.createInsecure());
  const entry = { destroy: () => client.close() };
  ctx.sockets.add(entry);
  return { client, close: () => (client.close(), ctx.sockets.delete(entry)) };
}

/** A raw HTTP/2 session to the door (no grpc-js); errors swallowed, destroyed with the soak. */
function session(ctx, d) {
  const s = http2.connect(`http://${d.grpcAddress}`);
  s.on('error', () => {});
  return ctx.track(s);
}

const grpcHeaders = (p, extra = {}) => ({ ':method': 'POST', ':path': p, 'content-type': 'application/grpc', te: 'trailers',
  'runtime-id': 'stable-cpp', ...extra });

/** A length-prefixed gRPC message. */
function frame(bytes, compressed = false) {
  const head = Buffer.alloc(5);
  head[0] = compressed ? 1 : 0;
  head.writeUInt32BE(bytes.length, 1);
  return Buffer.concat([head, bytes]);
}

/** Resolves with the grpc-status of a raw stream (headers-only answer or trailers), or null after `ms`. */
function statusOf(req, ms) {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(null), ms);
    const done = (h) => (clearTimeout(t), resolve(h['grpc-status'] === undefined ? 'none' : Number(h['grpc-status'])));
    req.on('trailers', done);
    req.on('response', (h) => h['grpc-status'] !== undefined && done(h));
    req.on('close', () => (clearTimeout(t), resolve((req.rstCode ? `rst-${req.rstCode}` : 'closed'))));
  });
}

/** GET on the API port; resolves {status, bytes, text (the first `keep` bytes or so)}; destroyed after `timeoutMs`. */
function get(ctx, p, { headers = {}, timeoutMs = 15000, keep = 8 << 20 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(ctx.manager.apiUrl + p, { agent: false, headers });
    const timer = setTimeout(() => req.destroy(new Error(`GET ${p.slice(0, 80)}: no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('socket', (s) => ctx.track(s));
    req.once('error', (e) => (clearTimeout(timer), reject(e)));
    req.once('response', (res) => {
      const kept = [];
      let bytes = 0;
      res.on('data', (c) => {
        if (bytes < keep) kept.push(c);
        bytes += c.length;
      });
      res.once('end', () => (clearTimeout(timer), resolve({ status: res.statusCode, bytes, text: Buffer.concat(kept).toString() })));
      res.once('error', (e) => (clearTimeout(timer), reject(e)));
    });
    req.end();
  });
}

/** Raw TCP to 127.0.0.1:port: sends `payload` (undefined: nothing), waits up to `ms` for the far side to close. */
function rawTcp(ctx, port, payload, ms) {
  return new Promise((resolve) => {
    const s = ctx.track(net.connect({ host: '127.0.0.1', port, allowHalfOpen: true }));
    let connected = false;
    const t = setTimeout(() => (s.destroy(), resolve(connected ? 'left-open' : 'no-connect')), ms);
    s.on('connect', () => {
      connected = true;
      if (payload !== undefined) s.write(payload);
    });
    s.resume();
    const closed = () => (clearTimeout(t), s.destroy(), resolve(connected ? 'closed-by-server' : 'refused'));
    s.on('end', closed);
    s.on('close', closed);
    s.on('error', closed);
  });
}

// ---------------------------------------------------------------------------
// gRPC

/** {n} as streamCount's request: field 1, whichever runtime's schema it came from. */
const serializeStreamRequest = (d) => d.Flows.service.streamCount.requestSerialize;

/** Unary echo and short server streams on stable-cpp; now and then a slow call cancelled. */
export async function grpcCalls(ctx, d) {
  const { client, close } = flowsClient(ctx, d);
  try {
    await loop(ctx, 'grpc.calls', { everyMs: 50, concurrency: 2, roundMs: 15000 }, async (r) => {
      const deadline = Date.now() + 10000;
      if (r % 40 === 39) {
        const call = client.slow({ ms: 3000 }, mdFor('stable-cpp'), { deadline }, () => {});
        await sleep(50 + Math.random() * 150);
        call.cancel();
        return 'slow-cancelled';
      }
      if (r % 3 === 2) {
        const n = 5 + (r % 20);
        const method = d.streamMethod;
        const messages = await new Promise((resolve, reject) => {
          const got = [];
          // Raw bytes back: the chunk type follows whichever runtime's schemas the catalog took.
          const call = client.makeServerStreamRequest(`/genkit.flow.Flows/${method}`, serializeStreamRequest(d), (b) => b,
            { n }, mdFor('stable-cpp'), { deadline });
          call.on('data', (m) => got.push(m));
          call.on('error', reject);
          call.on('status', (s) => s.code === 0 && resolve(got));
        }).catch((e) => {
          if (e.code !== grpc.status.UNIMPLEMENTED) throw e;
          return null;
        });
        // A runtime joined or left and the catalog took another runtime's
        // schemas for /flow/streamCount: with ours streamCount streams and
        // there is no streamCount_stream; with the Genkit runtime's
        // streamCount is unary (one message) and streamCount_stream streams.
        if (!messages || (messages.length === 1 && method === 'streamCount')) {
          if (d.streamMethod === method) d.streamMethod = method === 'streamCount' ? 'streamCount_stream' : 'streamCount';
          return 'stream-method-renamed';
        }
        if (messages.length !== n + 1) throw new Error(`${method} of ${n}: ${messages.length} messages`);
        return 'stream-ok';
      }
      const text = `r${r}-${'x'.repeat(Math.floor(Math.random() * 2048))}`;
      const out = await new Promise((resolve, reject) =>
        client.echo(str(text), mdFor('stable-cpp'), { deadline }, (err, res) => (err ? reject(err) : resolve(res))));
      if (out.string_value !== text) throw new Error(`echo: got ${JSON.stringify(out).slice(0, 100)}`);
      return 'echo-ok';
    });
  } finally {
    close();
  }
}

/** Rapid reset: HEADERS, DATA, RST_STREAM in a loop on one connection for up to 3 s or until the server closes it. */
async function rapidReset(ctx, d) {
  const s = session(ctx, d);
  let byServer = false;
  s.once('goaway', () => (byServer = true));
  s.once('close', () => (byServer = true));
  await Promise.race([new Promise((r) => (s.once('remoteSettings', r), s.once('close', r))), sleep(3000)]);
  const message = frame(Buffer.from([0x1a, 0])); // a Value with string_value ''
  let opened = 0;
  const until = Date.now() + 3000;
  while (!byServer && !s.destroyed && Date.now() < until && !ctx.stopping) {
    for (let i = 0; i < 100 && !byServer; i++) {
      try {
        const req = s.request(grpcHeaders('/genkit.flow.Flows/echo'));
        req.on('error', () => {});
        req.write(message);
        req.close(http2.constants.NGHTTP2_CANCEL);
        ++opened;
      } catch {
        byServer = true; // the session is closing under us
      }
    }
    await new Promise((r) => setImmediate(r));
  }
  if (!byServer) await Promise.race([new Promise((r) => s.once('close', r)), sleep(1000)]);
  const closed = byServer;
  s.destroy();
  ctx.tally.add('grpc.attack.rapid-reset-streams', opened);
  return closed ? 'rapid-reset-closed-by-server' : 'rapid-reset-not-closed';
}

/** 150 calls that never send their message: left after 3 s, or (every other time) held until the server ends them. */
async function silentStreams(ctx, d, r) {
  const s = session(ctx, d);
  const ends = Array.from({ length: 150 }, () => {
    try {
      const req = s.request(grpcHeaders('/genkit.flow.Flows/echo'));
      req.on('error', () => {});
      req.on('data', () => {});
      return statusOf(req, r % 2 ? 12000 : 3000);
    } catch {
      return Promise.resolve('no-stream');
    }
  });
  const statuses = await Promise.all(ends);
  s.destroy();
  const ended = statuses.filter((x) => typeof x === 'number');
  for (const x of new Set(ended)) ctx.tally.add(`grpc.attack.silent-status-${x}`, ended.filter((y) => y === x).length);
  return r % 2 ? `silent-held-${ended.length ? 'ended-by-server' : 'never-ended'}` : 'silent-dropped-after-3s';
}

/** A gzip-compressed request (grpc-encoding gzip): must be refused UNIMPLEMENTED before it is inflated. */
async function gzipRequest(ctx, d) {
  const s = session(ctx, d);
  const req = s.request(grpcHeaders('/genkit.flow.Flows/echo', { 'grpc-encoding': 'gzip', 'grpc-accept-encoding': 'identity,gzip' }));
  req.on('error', () => {});
  req.on('data', () => {});
  const status = statusOf(req, 5000);
  req.end(frame(zlib.gzipSync(Buffer.alloc(1 << 20)), true));
  const st = await status;
  s.destroy();
  return st === grpc.status.UNIMPLEMENTED ? 'gzip-refused-unimplemented' : `gzip-answered-${st}`;
}

/** One message larger than --max-body-bytes through grpc-js: RESOURCE_EXHAUSTED expected. */
async function oversized(ctx, d) {
  const { client, close } = flowsClient(ctx, d);
  try {
    const err = await new Promise((resolve) =>
      client.echo(str('x'.repeat(d.maxBodyBytes + 1024)), mdFor('stable-cpp'), { deadline: Date.now() + 10000 }, (e) => resolve(e)));
    if (!err) return 'oversized-accepted';
    return err.code === grpc.status.RESOURCE_EXHAUSTED ? 'oversized-refused' : `oversized-status-${err.code}`;
  } finally {
    close();
  }
}

/** A server stream of 100,000 chunks whose client never reads (paused HTTP/2 stream), left after 3 s. */
async function pausedStream(ctx, d) {
  const s = session(ctx, d);
  const req = s.request(grpcHeaders(`/genkit.flow.Flows/${d.streamMethod}`));
  req.on('error', () => {});
  const status = statusOf(req, 3000);
  req.end(frame(serializeStreamRequest(d)({ n: 100000 })));
  req.pause();
  const st = await status;
  s.destroy();
  return st === null ? 'paused-stream-left' : `paused-stream-ended-${st}`;
}

/** Garbage bytes on the gRPC port. */
async function garbage(ctx, d) {
  const port = Number(d.grpcAddress.split(':')[1]);
  return `garbage-${await rawTcp(ctx, port, crypto.randomBytes(2048), 2000)}`;
}

/** Every ~5 s one of the attacks above, in turn. */
export async function grpcAttacks(ctx, d) {
  const attacks = [rapidReset, silentStreams, gzipRequest, oversized, pausedStream, garbage];
  await loop(ctx, 'grpc.attack', { everyMs: 5000, concurrency: 1, roundMs: 20000 }, (r) =>
    attacks[r % attacks.length](ctx, d, Math.floor(r / attacks.length)));
}

// ---------------------------------------------------------------------------
// cluster

/** Calls at node a for stable-b (they cross the cluster link): echo, and every 10th a short NDJSON stream. */
export async function clusterCalls(ctx) {
  await loop(ctx, 'cluster.calls', { everyMs: 50, concurrency: 2, roundMs: 20000 }, async (r) => {
    if (r % 10 === 9) {
      const res = await post(ctx, '/api/streamAction', { key: '/flow/streamCount', input: { n: 20 }, runtimeId: 'stable-b' });
      if (res.status !== 200) throw new Error(`stream: HTTP ${res.status}: ${res.text.slice(0, 200)}`);
      const last = JSON.parse(res.text.trim().split('\n').at(-1));
      if (last.result?.count !== 20) throw new Error(`stream: last line ${JSON.stringify(last).slice(0, 200)}`);
      return 'stream-ok';
    }
    const input = { r, pad: 'y'.repeat(Math.floor(Math.random() * 2048)) };
    const res = await post(ctx, '/api/runAction', { key: '/flow/echo', input, runtimeId: 'stable-b' });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
    if (JSON.parse(res.text).result?.r !== r) throw new Error(`echo: ${res.text.slice(0, 200)}`);
    return 'echo-ok';
  });
}

/** Raw TCP on a's cluster port: a BASP header announcing 2 GB, random bytes, a silent connection left open 3 s. */
export async function clusterAttacks(ctx, d) {
  const basp = Buffer.alloc(32, 0);
  basp[0] = 0x01; // client handshake
  basp.writeUInt32BE(2_000_000_000, 4); // payload_len
  const variants = [['basp-2gb', () => basp, 3000], ['random', () => crypto.randomBytes(64 + Math.floor(Math.random() * 2000)), 3000],
    ['silent', () => undefined, 3000]];
  await loop(ctx, 'cluster.attack', { everyMs: 5000, concurrency: 1, roundMs: 10000 }, async (r) => {
    const [name, payload, ms] = variants[r % variants.length];
    return `${name}-${await rawTcp(ctx, d.clusterPort, payload(), ms)}`;
  });
}

// ---------------------------------------------------------------------------
// traces

/** listTraces / getTrace (tRPC and REST) of the recent traces of the soak's calls. */
export async function traceReads(ctx) {
  const recent = [];
  const enc = (x) => encodeURIComponent(JSON.stringify(x));
  await loop(ctx, 'traces.reads', { everyMs: 400, concurrency: 1, roundMs: 15000 }, async (r) => {
    const pick = () => recent[Math.floor(Math.random() * recent.length)];
    if (r % 4 === 0 || !recent.length) {
      const res = await get(ctx, r % 8 === 0 ? `/api/listTraces?input=${enc({ limit: 20 })}` : '/api/traces?limit=20');
      if (res.status !== 200) throw new Error(`list: HTTP ${res.status}: ${res.text.slice(0, 200)}`);
      const body = JSON.parse(res.text);
      const traces = body.result?.data?.traces ?? body.traces ?? [];
      recent.splice(0, recent.length, ...traces.map((t) => t.traceId).filter(Boolean));
      return `list-${traces.length ? 'ok' : 'empty'}`;
    }
    const id = pick();
    const res = await get(ctx, r % 2 ? `/api/getTrace?input=${enc({ traceId: id })}` : `/api/traces/${id}`);
    if (res.status === 404) return 'get-404'; // dropped by the store's size cap meanwhile
    if (res.status !== 200) throw new Error(`get: HTTP ${res.status}: ${res.text.slice(0, 200)}`);
    return 'get-ok';
  });
}

/** Every ~5 s in turn: a cross-site GET, a tRPC batch of 32 listTraces(1000), a 4 MiB displayName. */
export async function traceAttacks(ctx, d) {
  const names = Array(32).fill('listTraces').join(',');
  const input = encodeURIComponent(JSON.stringify(Object.fromEntries(Array.from({ length: 32 }, (_, i) => [i, { limit: 1000 }]))));
  const bigName = 'n'.repeat(4 << 20);
  d.notes.batchMaxBytes = 0;
  await loop(ctx, 'traces.attack', { everyMs: 5000, concurrency: 1, roundMs: 30000 }, async (r) => {
    switch (r % 3) {
      case 0: {
        const res = await get(ctx, r % 2 ? '/api/traces?limit=5' : `/api/getTrace?input=${encodeURIComponent('{"traceId":"x"}')}`,
          { headers: { 'sec-fetch-site': 'cross-site' } });
        return res.status === 403 ? 'cross-site-refused' : `cross-site-${res.status}`;
      }
      case 1: {
        const res = await get(ctx, `/api/${names}?batch=1&input=${input}`, { timeoutMs: 25000, keep: 65536 });
        d.notes.batchMaxBytes = Math.max(d.notes.batchMaxBytes, res.bytes);
        return `batch-${res.status}${res.bytes > 16 << 20 ? '-huge' : ''}`;
      }
      default: {
        const traceId = crypto.randomBytes(16).toString('hex');
        const res = await post(ctx, '/api/traces', { traceId, displayName: bigName, spans: {} }, { timeoutMs: 20000 });
        if (res.status === 400 && /displayName must be at most/.test(res.text)) return 'telemetry-refused-400';
        d.notes.telemetryAnswer = `${res.status} ${res.text.slice(0, 200)}`;
        return `telemetry-${res.status}`;
      }
    }
  });
}
