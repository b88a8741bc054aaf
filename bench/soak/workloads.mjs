// The traffic of the soak (see soak.mjs and README.md): each workload is a
// loop that ends when the soak stops it or after a bounded number of rounds;
// every round has its own deadline and only ever talks to 127.0.0.1. Errors
// are counted, never thrown: most rounds are meant to fail on the far side.
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import {
  FakeRuntime,
  IiiClient,
  RpcSocket,
  WebSocket,
  startCppRuntime,
  startGenkitRuntime,
  startIiiWorker,
  withTimeout,
} from '../../tests/interop/lib/harness.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What the soak counts: `${workload}.${outcome}` -> n, and the last error per workload. */
export class Tally {
  counts = {};
  lastError = {};
  add(key, n = 1) {
    this.counts[key] = (this.counts[key] ?? 0) + n;
  }
}

/**
 * Shared by the workloads: the manager, the tally, the stop flag and every
 * raw socket opened here (destroyed when the soak ends, whatever state it is in).
 */
export class Ctx {
  constructor(manager, tally, { intensity, activeMs }) {
    this.manager = manager;
    this.tally = tally;
    this.intensity = intensity;
    this.activeMs = activeMs;
    this.stopping = false;
    this.sockets = new Set();
    this.children = new Set();
    this.#wakers = new Set();
  }

  #wakers;

  stop() {
    this.stopping = true;
    for (const w of this.#wakers) w();
  }

  /** Sleeps `ms`, or less if the soak stops meanwhile. */
  pause(ms) {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => (clearTimeout(t), this.#wakers.delete(done), resolve());
      const t = setTimeout(done, ms);
      this.#wakers.add(done);
    });
  }

  track(sock) {
    this.sockets.add(sock);
    sock.once('close', () => this.sockets.delete(sock));
    return sock;
  }

  destroyAll() {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
}

/**
 * Runs `body(round)` every `everyMs` (scaled down by the intensity, jittered)
 * on `concurrency` lanes until the soak stops or `maxRounds` rounds ran; each
 * round gets `roundMs` before it counts as timed out and the lane moves on.
 */
export async function loop(ctx, name, { everyMs = 0, concurrency = 1, roundMs = 30000, maxRounds }, body) {
  const gap = everyMs / ctx.intensity;
  const lanes = Math.max(1, Math.round(concurrency * ctx.intensity));
  const cap = maxRounds ?? Math.ceil((ctx.activeMs / Math.max(gap, 20)) * lanes) + lanes;
  let round = 0;
  const lane = async () => {
    while (!ctx.stopping && round < cap) {
      const r = round++;
      try {
        const outcome = await withTimeout(body(r), roundMs, `${name} round ${r}`);
        ctx.tally.add(`${name}.${outcome ?? 'ok'}`);
      } catch (e) {
        ctx.tally.add(`${name}.error`);
        ctx.tally.lastError[name] = String(e?.message ?? e).slice(0, 300);
      }
      if (gap > 0) await ctx.pause(gap * (0.5 + Math.random()));
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

// ---------------------------------------------------------------------------
// HTTP helpers (one connection per request, no keep-alive)

/** POSTs JSON; resolves {status, text}; destroys the request after `timeoutMs`. */
export function post(ctx, p, body, { timeoutMs = 15000, headers = {} } = {}) {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(ctx.manager.apiUrl + p, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data), ...headers },
    });
    const timer = setTimeout(() => req.destroy(new Error(`POST ${p}: no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('socket', (s) => ctx.track(s));
    req.once('error', (e) => (clearTimeout(timer), reject(e)));
    req.once('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.once('end', () => (clearTimeout(timer), resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString() })));
      res.once('error', (e) => (clearTimeout(timer), reject(e)));
    });
    req.end(data);
  });
}

/** Starts a POST and gives the caller the request and (once there) the response to play with. */
function startPost(ctx, p, body) {
  const data = JSON.stringify(body);
  const req = http.request(ctx.manager.apiUrl + p, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
  });
  req.on('socket', (s) => ctx.track(s));
  req.on('error', () => {});
  req.end(data);
  return req;
}

const expectStatus = (res, want) => {
  if (res.status !== want) throw new Error(`HTTP ${res.status}: ${res.text.slice(0, 200)}`);
};

// ---------------------------------------------------------------------------
// Callers

/** Steady runAction traffic to the stable runtimes, payloads up to 4 KiB. */
export async function httpCallers(ctx, runtimeIds) {
  await loop(ctx, 'http.echo', { everyMs: 20, concurrency: 4, roundMs: 20000 }, async (r) => {
    const input = { r, pad: 'x'.repeat(Math.floor(Math.random() * 4096)) };
    const res = await post(ctx, '/api/runAction', { key: '/flow/echo', input, runtimeId: runtimeIds[r % runtimeIds.length] });
    expectStatus(res, 200);
  });
}

/** Callers that leave: a slow run abandoned, an NDJSON stream read a little and dropped. */
export async function vanishingCallers(ctx, runtimeIds) {
  await loop(ctx, 'http.vanish', { everyMs: 150, concurrency: 2, roundMs: 10000 }, async (r) => {
    const runtimeId = runtimeIds[r % runtimeIds.length];
    if (r % 2 === 0) {
      const req = startPost(ctx, '/api/runAction', { key: '/flow/slow', input: { ms: 2000 }, runtimeId });
      await sleep(50 + Math.random() * 250);
      req.destroy();
      return 'slow-dropped';
    }
    const req = startPost(ctx, '/api/streamAction', { key: '/flow/streamCount', input: { n: 200, delayMs: 10 }, runtimeId });
    await new Promise((resolve, reject) => {
      req.once('response', (res) => {
        let lines = 0;
        res.on('data', (c) => {
          lines += c.toString().split('\n').length - 1;
          if (lines >= 3) resolve();
        });
        res.once('end', resolve);
      });
      req.once('error', reject);
    });
    req.destroy();
    return 'stream-dropped';
  });
}

/** A stream caller that stops reading (paused socket) for a while, then leaves. */
export async function slowReaders(ctx, runtimeIds) {
  await loop(ctx, 'http.slow-reader', { everyMs: 4000, concurrency: 1, roundMs: 15000 }, async (r) => {
    const req = startPost(ctx, '/api/streamAction', {
      key: '/flow/streamCount',
      input: { n: 100000, yieldEvery: 100 }, // the Genkit runtime's event loop keeps serving others
      runtimeId: runtimeIds[r % runtimeIds.length],
    });
    await new Promise((resolve, reject) => {
      req.once('response', (res) => (res.pause(), resolve()));
      req.once('error', reject);
    });
    await ctx.pause(3000);
    req.destroy();
  });
}

/** /api/ws programs: calls, streams cut off, cancels, bad frames. */
export async function wsCallers(ctx, runtimeIds) {
  await loop(ctx, 'ws.caller', { everyMs: 300, concurrency: 2, roundMs: 15000 }, async (r) => {
    const sock = await RpcSocket.connect(ctx.manager.apiWsUrl, `soak-ws-${r}`);
    try {
      const runtimeId = runtimeIds[r % runtimeIds.length];
      const echo = await sock.request('runAction', { key: '/flow/echo', input: r, runtimeId });
      if (echo.error) throw new Error(`runAction: ${JSON.stringify(echo.error)}`);
      switch (r % 5) {
        case 0: // a stream cut off by the caller going away
          sock.request('runAction', { key: '/flow/streamCount', input: { n: 500, delayMs: 5 }, runtimeId, stream: true }).catch(() => {});
          await sock.waitFor((m) => m.method === 'streamChunk', 5000, 'a chunk').catch(() => {});
          return 'stream-cut';
        case 1: { // cancel a slow run by its trace id
          const run = sock.request('runAction', { key: '/flow/slow', input: { ms: 3000 }, runtimeId }).catch(() => {});
          const started = await sock
            .waitFor((m) => m.method === 'runActionState' && m.params?.state?.traceId, 3000, 'runActionState')
            .catch(() => null);
          const traceId = started?.params?.state?.traceId;
          if (traceId) await sock.request('cancelAction', { traceId, runtimeId }, { timeoutMs: 5000 }).catch(() => {});
          await run;
          return traceId ? 'cancelled' : 'no-trace-id';
        }
        case 2: // bad frames, then a good call still works
          for (const f of ['garbage', '{"jsonrpc":"2.0","id":-abc}', '[]', '{"jsonrpc":"2.0","method":"nope","id":1}',
            '{"jsonrpc":"2.0","method":"runAction","params":{"key":7},"id":"x"}', `{"id":"${'9'.repeat(5000)}"`]) {
            sock.sendRaw(f);
          }
          if ((await sock.request('runAction', { key: '/flow/echo', input: 'after', runtimeId })).error) throw new Error('echo after bad frames failed');
          sock.ws.send(crypto.randomBytes(512)); // binary: the socket is closed (1007)
          await Promise.race([sock.closed, sleep(2000)]);
          return 'bad-frames';
        case 3: { // bidi input held for a run, then the caller leaves (our runtime has bidiSum)
          const id = `bidi-${r}`;
          sock.request('runAction', { key: '/flow/bidiSum', runtimeId: 'stable-cpp', stream: true, streamInput: true }, { id }).catch(() => {});
          for (let i = 0; i < 200; i++) sock.notify('sendInputStreamChunk', { requestId: id, chunk: i });
          await sleep(50);
          return 'bidi-abandoned';
        }
        default: // slow run in flight when the socket dies
          sock.request('runAction', { key: '/flow/slow', input: { ms: 2000 }, runtimeId }).catch(() => {});
          await sleep(100);
          return 'vanished';
      }
    } finally {
      await sock.terminate();
    }
  });
}

/** Bursts: many concurrent HTTP calls, and a WebSocket that fires frames and leaves unread. */
export async function floods(ctx, runtimeIds) {
  await loop(ctx, 'flood', { everyMs: 15000, concurrency: 1, roundMs: 30000 }, async (r) => {
    const n = Math.round(100 * ctx.intensity);
    const calls = Array.from({ length: n }, (_, i) =>
      post(ctx, '/api/runAction', { key: '/flow/echo', input: i, runtimeId: runtimeIds[i % runtimeIds.length] }, { timeoutMs: 20000 }).then(
        (res) => res.status,
        () => 'error'
      )
    );
    const ws = new WebSocket(ctx.manager.apiWsUrl, { perMessageDeflate: false });
    ws.on('error', () => {});
    await new Promise((resolve) => (ws.once('open', resolve), ws.once('error', resolve)));
    if (ws.readyState === WebSocket.OPEN) {
      for (let i = 0; i < 1000; i++) {
        ws.send(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'runAction', params: { key: '/flow/echo', input: i, runtimeId: runtimeIds[0] } }));
      }
    }
    ws.terminate();
    const statuses = await Promise.all(calls);
    const ok = statuses.filter((s) => s === 200).length;
    ctx.tally.add('flood.calls-ok', ok);
    ctx.tally.add('flood.calls-failed', n - ok);
  });
}

/** Bad HTTP on the API port: oversized heads, garbage, truncated bodies, slowloris, bad upgrades. */
export async function badHttp(ctx) {
  const { hostname, port } = new URL(ctx.manager.apiUrl);
  const variants = [
    () => `GET /api/runtimes HTTP/1.1\r\nHost: ${hostname}\r\nX-Big: ${'a'.repeat(100000)}\r\n\r\n`,
    () => crypto.randomBytes(2048),
    () => `POST /api/runAction HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"key":"/flow/echo","input":"`,
    () => `POST /api/runAction HTTP/1.1\r\nHost: ${hostname}\r\nContent-Length: 999999999999\r\n\r\n`,
    () => `POST /api/runAction HTTP/1.1\r\nHost: ${hostname}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nnope\r\n`,
    () => `GET /api/ws HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: bad\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    () => `GET /${'%'.repeat(8000)} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`,
    'slowloris',
  ];
  await loop(ctx, 'bad-http', { everyMs: 100, concurrency: 2, roundMs: 10000 }, async (r) => {
    const v = variants[r % variants.length];
    const sock = ctx.track(net.connect(Number(port), '127.0.0.1'));
    sock.on('error', () => {});
    sock.on('data', () => {});
    await new Promise((resolve, reject) => (sock.once('connect', resolve), sock.once('error', reject)));
    if (v === 'slowloris') {
      for (const part of ['GET /api/', 'runtimes HTTP/1.1\r\n', `Host: ${hostname}\r\n`, 'X-Slow: 1\r\n']) {
        if (sock.destroyed) break;
        sock.write(part);
        await ctx.pause(700);
      }
    } else {
      sock.write(v());
      await Promise.race([new Promise((r2) => sock.once('close', r2)), sleep(1000)]);
    }
    sock.destroy();
    return v === 'slowloris' ? 'slowloris' : `variant-${r % variants.length}`;
  });
}

// ---------------------------------------------------------------------------
// Runtimes

/** Our runtime and the real Genkit runtime start, take calls and die (SIGKILL or SIGTERM) mid-call. */
export async function runtimeChurn(ctx, { genkit }) {
  await loop(ctx, 'runtime.churn', { everyMs: 6000, concurrency: 1, roundMs: 45000 }, async (r) => {
    const kind = genkit && r % 2 === 1 ? 'genkit' : 'cpp';
    const id = `churn-${kind}-${r}`;
    const child = kind === 'genkit'
      ? startGenkitRuntime(ctx.manager.reflectionUrl, { id })
      : startCppRuntime(ctx.manager.reflectionUrl, { id });
    ctx.children.add(child);
    try {
      await ctx.manager.waitForRuntime(id, { timeoutMs: 30000, child });
      expectStatus(await post(ctx, '/api/runAction', { key: '/flow/echo', input: id, runtimeId: id }), 200);
      const inFlight = post(ctx, '/api/runAction', { key: '/flow/slow', input: { ms: 5000 }, runtimeId: id }, { timeoutMs: 15000 }).catch((e) => ({ status: 0, text: e.message }));
      await sleep(200);
      child.kill(r % 4 < 2 ? 'SIGKILL' : 'SIGTERM');
      const res = await inFlight;
      if (res.status === 200) return `${kind}-call-finished`;
      return `${kind}-killed-mid-call`;
    } finally {
      child.kill('SIGKILL');
      await Promise.race([child.exited, sleep(5000)]);
      ctx.children.delete(child);
    }
  });
}

/**
 * A runtime that stays connected for the whole soak and never finishes a run
 * (it answers listings and cancelAction, as a runtime busy with a long action
 * does). Callers that give up on it must not leave anything behind while it
 * is still there: the "callers gone" checkpoint sees that.
 */
export async function startMuteRuntime(ctx) {
  const rt = await FakeRuntime.connect(ctx.manager.reflectionUrl, 'stable-mute');
  rt.handlers.listActions = async () => ({ result: { actions: {} } });
  rt.handlers.listValues = async () => ({ result: { values: {} } });
  rt.handlers.cancelAction = async () => ({ result: { message: 'Action cancelled' } });
  rt.handlers.runAction = async () => undefined; // never answered
  const reg = await rt.register('stable-mute');
  if (reg.error) throw new Error(`stable-mute register: ${JSON.stringify(reg.error)}`);
  // Its message log would grow for the whole soak.
  const keep = setInterval(() => rt.messages.splice(0, rt.messages.length), 5000);
  rt.closed.then(() => clearInterval(keep));
  return rt;
}

/** Callers of the mute runtime that give up: HTTP with a short client timeout, /api/ws closed. */
export async function callersOfMute(ctx) {
  await loop(ctx, 'mute.caller', { everyMs: 250, concurrency: 1, roundMs: 10000 }, async (r) => {
    if (r % 2 === 0) {
      const res = await post(ctx, '/api/runAction', { key: '/flow/echo', input: r, runtimeId: 'stable-mute' }, { timeoutMs: 300 }).catch(() => null);
      return res ? 'answered?' : 'http-gave-up';
    }
    const sock = await RpcSocket.connect(ctx.manager.apiWsUrl, `soak-mute-${r}`);
    sock.request('runAction', { key: '/flow/echo', input: r, runtimeId: 'stable-mute' }).catch(() => {});
    await sleep(100);
    await sock.terminate();
    return 'ws-gave-up';
  });
}

/** Raw runtimes on the reflection port: take a call and never answer, send bad frames, vanish. */
export async function fakeRuntimes(ctx) {
  await loop(ctx, 'runtime.fake', { everyMs: 1500, concurrency: 1, roundMs: 20000 }, async (r) => {
    const id = `soak-fake-${r}`;
    const rt = await FakeRuntime.connect(ctx.manager.reflectionUrl, id);
    try {
      const reg = await rt.register(id);
      if (reg.error) throw new Error(`register: ${JSON.stringify(reg.error)}`);
      const call = post(ctx, '/api/runAction', { key: '/flow/echo', input: r, runtimeId: id }, { timeoutMs: 10000 }).catch(() => null);
      await rt.waitFor((m) => m.method === 'runAction', 5000, 'runAction').catch(() => {});
      for (const f of ['{oops', '{"jsonrpc":"2.0","id":"nobody-asked","result":1}', '{"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"x"}}',
        '{"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"x","state":{"traceId":"\\r\\nSet-Cookie: a=b"}}}', 'x'.repeat(1 << 20)]) {
        rt.sendRaw(f);
      }
      await sleep(100);
      await rt.terminate();
      const res = await call;
      return res && res.status === 200 ? 'answered?' : 'call-failed-as-expected';
    } finally {
      await rt.terminate();
    }
  });
}

// ---------------------------------------------------------------------------
// iii workers

/** The real iii-sdk worker starts, serves, and is SIGKILLed with a call in flight. */
export async function sdkWorkerChurn(ctx) {
  await loop(ctx, 'iii.sdk-churn', { everyMs: 8000, concurrency: 1, roundMs: 45000 }, async (r) => {
    const child = startIiiWorker(ctx.manager.workerUrl, { name: `soak-sdk-${r}` });
    ctx.children.add(child);
    try {
      await ctx.manager.poll(
        () => post(ctx, '/api/runAction', { key: '/iii/greet', input: { name: 'soak' } }),
        (res) => res.status === 200,
        { timeoutMs: 20000, intervalMs: 200, what: '/iii/greet answered' }
      );
      const inFlight = post(ctx, '/api/runAction', { key: '/iii/slow', input: { ms: 5000 } }, { timeoutMs: 15000 }).catch(() => null);
      await sleep(300);
      child.kill('SIGKILL');
      const res = await inFlight;
      return res?.status === 200 ? 'call-finished' : 'killed-mid-call';
    } finally {
      child.kill('SIGKILL');
      await Promise.race([child.exited, sleep(5000)]);
      ctx.children.delete(child);
    }
  });
}

/** Raw workers: a function that never answers, channels left half-open, bad frames; then gone. */
export async function rawWorkers(ctx) {
  await loop(ctx, 'iii.raw', { everyMs: 700, concurrency: 1, roundMs: 20000 }, async (r) => {
    const w = await IiiClient.connect(ctx.manager.workerUrl);
    try {
      await w.registered();
      const fn = `soak::hang-${r}`;
      w.register(fn, () => new Promise(() => {})); // never answers
      await sleep(50);
      const call = post(ctx, '/api/runAction', { key: `/iii/${fn}`, input: { r } }, { timeoutMs: 10000 }).catch(() => null);
      const ch = await w.call('engine::channels::create', { buffer_size: 4 });
      const refs = ch.result;
      const ends = [];
      if (refs?.writer && r % 3 !== 2) {
        const url = (ref) => `${ctx.manager.workerUrl}/ws/channels/${ref.channel_id}?key=${ref.access_key}&dir=${ref.direction}`;
        const writer = new WebSocket(url(refs.writer), { perMessageDeflate: false });
        writer.on('error', () => {});
        ends.push(writer);
        await new Promise((resolve) => (writer.once('open', resolve), writer.once('error', resolve)));
        if (r % 3 === 0) {
          const reader = new WebSocket(url(refs.reader), { perMessageDeflate: false });
          reader.on('error', () => {});
          ends.push(reader);
        }
        for (let i = 0; i < 16 && writer.readyState === WebSocket.OPEN; i++) writer.send(crypto.randomBytes(1024));
      }
      for (const f of ['garbage', '{"type":"nope"}', '{"type":"registerfunction"}', '{"type":"invocationresult","invocation_id":"nobody"}',
        JSON.stringify({ type: 'invokefunction', invocation_id: crypto.randomUUID(), function_id: 'soak::missing', data: 1 })]) {
        w.ws.send(f);
      }
      await sleep(100);
      await w.terminate(); // the hanging call and the half-open channels lose their owner
      for (const e of ends) e.terminate();
      const res = await call;
      return res?.status === 200 ? 'answered?' : 'call-failed-as-expected';
    } finally {
      await w.terminate();
    }
  });
}
