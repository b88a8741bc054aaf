// iii workers (the real iii-sdk peers of tests/interop/iii), a raw client,
// and checks the iii tests share.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { INTEROP_NODE_DIR, WebSocket } from './env.mjs';
import { Child, nodeChildEnv, tracked } from './processes.mjs';
import { opened } from './rpc.mjs';
import { pollUntil, withTimeout } from './wait.mjs';

const III_WORKER_SCRIPT = path.join(INTEROP_NODE_DIR, 'iii-worker.mjs');
const III_CALLER_SCRIPT = path.join(INTEROP_NODE_DIR, 'iii-caller.mjs');

/** Starts tests/interop/iii/worker.mjs (iii-sdk) against `url`; does not wait. */
export function startIiiWorker(url, { name = 'harness-worker', env = {} } = {}) {
  assert.ok(fs.existsSync(III_WORKER_SCRIPT), `${III_WORKER_SCRIPT} is missing; run tests/interop/setup.sh <build dir>`);
  const child = new Child(`iii-${name}`, process.execPath, ['--preserve-symlinks-main', III_WORKER_SCRIPT, url], {
    cwd: INTEROP_NODE_DIR,
    env: nodeChildEnv({ HARNESS_WORKER_NAME: name, ...env }),
  });
  tracked.runtimes.add(child);
  return child;
}

/**
 * Starts another iii-sdk peer of tests/interop/iii (`script` = its base name,
 * e.g. 'watcher') with `args` after the url; does not wait.
 */
export function startIiiPeer(script, url, args = [], { name = script, env = {} } = {}) {
  const file = path.join(INTEROP_NODE_DIR, `iii-${script}.mjs`);
  assert.ok(fs.existsSync(file), `${file} is missing; run tests/interop/setup.sh <build dir>`);
  const child = new Child(`iii-${name}`, process.execPath, ['--preserve-symlinks-main', file, url, ...args], {
    cwd: INTEROP_NODE_DIR,
    env: nodeChildEnv({ HARNESS_WORKER_NAME: name, ...env }),
  });
  tracked.runtimes.add(child);
  return child;
}

/** Runs tests/interop/iii/call.mjs: one SDK call; {line, result?, error?, child}. */
export async function sdkCall(url, functionId, payload = null, { void: isVoid = false, name = 'sdk-call', timeoutMs = 30000 } = {}) {
  const child = startIiiPeer('call', url, [functionId, JSON.stringify(payload), ...(isVoid ? ['--void'] : [])], { name });
  child.mayExit = true;
  await withTimeout(child.exited, timeoutMs, `sdk call of ${functionId}`);
  const line = child.lines.find((l) => /^(RESULT|ERROR|SENT)\b/.test(l));
  assert.ok(line, `no RESULT/ERROR line from the SDK call of ${functionId}: ${child.describe()}`);
  const [, kind, rest] = line.match(/^(RESULT|ERROR|SENT) ?(.*)$/);
  return { line, child, result: kind === 'RESULT' ? JSON.parse(rest) : undefined, error: kind === 'ERROR' ? JSON.parse(rest) : undefined };
}

/**
 * Runs tests/interop/iii/caller.mjs (iii-sdk) against `url` to its end:
 * {exit, results: {testName: 'PASS'|'FAIL'|'SKIP'}, summary: {passed, failed,
 * skipped}, child}.
 */
export async function runIiiCaller(url, args = [], { timeoutMs = 180000, env = {} } = {}) {
  assert.ok(fs.existsSync(III_CALLER_SCRIPT), `${III_CALLER_SCRIPT} is missing; run tests/interop/setup.sh <build dir>`);
  const child = new Child('iii-caller', process.execPath, ['--preserve-symlinks-main', III_CALLER_SCRIPT, url, ...args], {
    cwd: INTEROP_NODE_DIR,
    env: nodeChildEnv(env),
  });
  child.mayExit = true;
  tracked.runtimes.add(child);
  const exit = await withTimeout(child.exited, timeoutMs, `iii caller ${args.join(' ')}`);
  const results = {};
  for (const line of child.lines) {
    const m = line.match(/^(PASS|FAIL|SKIP) (\S+)/);
    if (m) results[m[2]] = m[1];
  }
  const s = child.lines.map((l) => l.match(/^(\d+) passed, (\d+) failed, (\d+) skipped$/)).find(Boolean);
  const summary = s ? { passed: Number(s[1]), failed: Number(s[2]), skipped: Number(s[3]) } : null;
  return { exit, results, summary, child };
}

/** A raw iii worker socket driven by the test: frames in, frames out. */
export class IiiClient {
  static async connect(url, { headers } = {}) {
    const ws = new WebSocket(url, { perMessageDeflate: false, headers });
    const c = new IiiClient(ws);
    await opened(ws, url);
    return c;
  }

  constructor(ws) {
    this.ws = ws;
    this.frames = [];
    // function_id -> async (data, frame) => result (throw to answer an error):
    // answers the invokefunction frames the manager sends this client.
    this.handlers = {};
    this.#waiters = new Set();
    tracked.sockets.add(this);
    this.closed = new Promise((resolve) => ws.once('close', (code) => { this.#wake(); resolve(code); }));
    ws.on('error', (e) => (this.lastError = e));
    ws.on('message', (data) => {
      let f;
      try {
        f = JSON.parse(data.toString('utf8'));
      } catch {
        f = { unparsable: data.toString('utf8') };
      }
      this.frames.push(f);
      this.#wake();
      if (f.type === 'invokefunction' && this.handlers[f.function_id]) this.#run(f);
    });
  }

  #waiters;

  async #run(f) {
    let reply;
    try {
      const result = await this.handlers[f.function_id](f.data, f);
      reply = { type: 'invocationresult', invocation_id: f.invocation_id, function_id: f.function_id, result };
    } catch (e) {
      reply = { type: 'invocationresult', invocation_id: f.invocation_id, function_id: f.function_id, error: { code: 'invocation_failed', message: String(e?.message ?? e) } };
    }
    if (f.invocation_id && this.ws.readyState === WebSocket.OPEN) this.send(reply);
  }

  /** registerfunction for `id`, answered by `fn`. */
  register(id, fn, extra = {}) {
    this.handlers[id] = fn;
    this.send({ type: 'registerfunction', id, ...extra });
  }

  #wake() {
    for (const w of this.#waiters) w();
  }

  send(obj) {
    this.ws.send(JSON.stringify(obj));
  }

  /** The first frame (seen so far or later) for which `pred` holds. */
  waitFor(pred, timeoutMs = 10000, what = 'frame') {
    return new Promise((resolve, reject) => {
      const check = () => {
        const f = this.frames.find(pred);
        if (f) return finish(null, f);
        if (this.ws.readyState === WebSocket.CLOSED) finish(new Error(`socket closed while waiting for ${what}; frames: ${JSON.stringify(this.frames).slice(0, 2000)}`));
      };
      const timer = setTimeout(() => finish(new Error(`no ${what} within ${timeoutMs} ms; frames: ${JSON.stringify(this.frames).slice(0, 2000)}`)), timeoutMs);
      const finish = (err, f) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        if (err) reject(err);
        else resolve(f);
      };
      this.#waiters.add(check);
      check();
    });
  }

  async registered() {
    return (await this.waitFor((f) => f.type === 'workerregistered', 10000, 'workerregistered')).worker_id;
  }

  /** invokefunction with a fresh id; resolves with the whole invocationresult frame. */
  call(function_id, data, { timeoutMs = 10000, metadata } = {}) {
    const invocation_id = crypto.randomUUID();
    this.send({ type: 'invokefunction', invocation_id, function_id, data, ...(metadata ? { metadata } : {}) });
    return this.waitFor((f) => f.type === 'invocationresult' && f.invocation_id === invocation_id, timeoutMs, `invocationresult of ${function_id}`);
  }

  async terminate() {
    if (this.ws.readyState !== WebSocket.CLOSED) {
      this.ws.terminate();
      await this.closed;
    }
  }
}

/**
 * Opens a raw iii channel socket; resolves {ws, got, closed} or {status} when the upgrade was
 * refused. `got` collects what it receives from the first frame on (buffered frames can arrive
 * together with the upgrade response): text as strings, binary as byte arrays, or as their
 * lengths with `binaryLength`. `maxPayload`: the ws client's cap on one frame.
 */
export function openChannelSocket(url, { binaryLength = false, maxPayload } = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...(maxPayload ? { maxPayload } : {}) });
    const got = [];
    ws.on('message', (data, isBinary) =>
      got.push(isBinary ? (binaryLength ? data.length : [...data]) : data.toString('utf8'))
    );
    const closed = new Promise((res) => ws.once('close', (code, reason) => res({ code, reason: reason.toString() })));
    ws.once('open', () => resolve({ ws, got, closed }));
    ws.once('unexpected-response', (_, res) => {
      res.resume();
      resolve({ status: res.statusCode });
    });
    ws.once('error', reject);
  });
}

// ---------------------------------------------------------------------------
// Checks the iii tests share

/** Waits until the worker named `name` has registered `fn` (seen through a raw client). */
export async function waitForFunction(client, fn, timeoutMs = 15000) {
  return pollUntil(
    async () => (await client.call('engine::functions::list', {})).result?.functions ?? [],
    (fns) => fns.some((f) => f.function_id === fn),
    { timeoutMs, intervalMs: 100, what: `function ${fn} registered` }
  );
}

/** No actor or socket of the iii side left but the ones still connected. */
export async function assertNoLeaks(manager, { workers = 0 } = {}) {
  await manager.waitForStats({
    'actors.worker_connection': workers,
    'actors.invocation': 0,
    'actors.trigger_binding': 0,
    'actors.channel': 0,
    'sockets.worker': (n) => n === workers,
  }, 10000);
}
