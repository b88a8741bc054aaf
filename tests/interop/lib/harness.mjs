// Test harness for the actor-host interop tests: starts the manager binary,
// runtimes of two kinds (the real Genkit JS runtime, 'genkit', and our own
// `actor-host --role runtime`, 'cpp') and the real Genkit manager, and gives
// the tests HTTP, NDJSON and JSON-RPC WebSocket clients. Everything started
// here is tracked and torn down by cleanup(), which each test file runs from
// afterEach/after hooks.
//
// Environment:
//   ACTOR_HOST_BIN    manager binary (default <repo>/build/actor-host)
//   INTEROP_NODE_DIR  directory prepared by setup.sh (default <repo>/build/interop-node)
//   INTEROP_LOG_DIR   where child process output goes (default $TMPDIR/actor-host-interop-logs)
//   INTEROP_MANAGER_LOG_LEVEL  passed to the manager as --log-level when set
//   INTEROP_RUNTIME_LOG_LEVEL  passed to cpp runtimes as --log-level when set
//   INTEROP_RUNTIMES  comma-separated runtime kinds the per-kind tests run
//                     against (default genkit,cpp)
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..', '..');

export const ACTOR_HOST_BIN =
  process.env.ACTOR_HOST_BIN || path.join(repoRoot, 'build', 'actor-host');
export const INTEROP_NODE_DIR =
  process.env.INTEROP_NODE_DIR || path.join(repoRoot, 'build', 'interop-node');
export const RUNTIME_SCRIPT = path.join(INTEROP_NODE_DIR, 'genkit-runtime.mjs');
const GENKIT_MANAGER_SCRIPT = path.join(INTEROP_NODE_DIR, 'genkit-manager.mjs');

/**
 * Runtime kinds the manager tests run against: 'genkit' is the real Genkit JS
 * runtime (genkit-runtime.mjs), 'cpp' is `actor-host --role runtime --demo`,
 * which hosts the same actions.
 */
export const RUNTIME_KINDS = ['genkit', 'cpp'];
export const RUNTIMES = (process.env.INTEROP_RUNTIMES || RUNTIME_KINDS.join(','))
  .split(',')
  .map((k) => k.trim())
  .filter(Boolean);
for (const k of RUNTIMES) {
  if (!RUNTIME_KINDS.includes(k)) throw new Error(`INTEROP_RUNTIMES: unknown runtime kind ${k}`);
}
const LOG_DIR =
  process.env.INTEROP_LOG_DIR || path.join(os.tmpdir(), 'actor-host-interop-logs');

// ESM ignores NODE_PATH, so load the pinned packages from the setup.sh
// directory explicitly.
const requireFromNodeDir = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'));
let WebSocketImpl;
try {
  WebSocketImpl = requireFromNodeDir('ws');
} catch (e) {
  throw new Error(
    `cannot load 'ws' from ${INTEROP_NODE_DIR}/node_modules; ` +
      `run tests/interop/setup.sh <build dir> first (${e.message})`
  );
}
export const WebSocket = WebSocketImpl;

export const TRACE_ID_RE = /^[0-9a-f]{32}$/;

// ---------------------------------------------------------------------------
// Small async utilities

/** Rejects with a descriptive error if `promise` does not settle in time. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const delay = (ms) => new Promise((r) => setTimeout(r, ms));
// For races against an event: must not keep the test process alive.
const grace = (ms) => new Promise((r) => setTimeout(r, ms).unref());

/**
 * Calls `probe` until `done(value)` holds or the deadline passes; returns the
 * last value. A bounded poll loop, for state that has no event to wait on.
 * Errors from `probe` are retried unless they are marked `fatal`.
 */
export async function pollUntil(probe, done, { timeoutMs = 5000, intervalMs = 25, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  let lastError;
  for (;;) {
    try {
      last = await probe();
      lastError = undefined;
      if (done(last)) return last;
    } catch (e) {
      if (e.fatal) throw e;
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const seen = lastError ? `error: ${lastError.message}` : `last value: ${JSON.stringify(last)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${seen})`);
    }
    await delay(intervalMs);
  }
}

/** A queue consumed with deadlines: next() resolves {value, done} or rejects on timeout/failure. */
export class AsyncQueue {
  #items = [];
  #waiters = [];
  #ended = false;
  #error = null;

  push(value) {
    const w = this.#waiters.shift();
    if (w) w.resolve({ value, done: false });
    else this.#items.push(value);
  }

  end(error = null) {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    for (const w of this.#waiters.splice(0)) {
      if (error) w.reject(error);
      else w.resolve({ value: undefined, done: true });
    }
  }

  get ended() {
    return this.#ended;
  }

  next(timeoutMs = 5000, what = 'next item') {
    if (this.#items.length) return Promise.resolve({ value: this.#items.shift(), done: false });
    if (this.#ended) {
      return this.#error ? Promise.reject(this.#error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Everything up to the end of the queue; each item must arrive within `timeoutMs`. */
  async drain(timeoutMs = 5000, what = 'end of stream') {
    const out = [];
    for (;;) {
      const { value, done } = await this.next(timeoutMs, what);
      if (done) return out;
      out.push(value);
    }
  }
}

// ---------------------------------------------------------------------------
// Tracking of everything a test starts

const tracked = {
  runtimes: new Set(), // Child (genkit and cpp runtimes, genkit managers): stopped first
  sockets: new Set(), // RpcSocket
  requests: new Set(), // http.ClientRequest
  managers: new Set(), // Child (actor-host)
};
const everyChild = new Set();

// Last resort if the test process dies without running its hooks.
process.on('exit', () => {
  for (const c of everyChild) if (c.running) c.proc.kill('SIGKILL');
});

/**
 * Stops everything the current test started: runtimes first (the genkit
 * runtime must not outlive its manager), then client sockets and requests,
 * then managers. Throws if a child could not be stopped.
 */
export async function cleanup() {
  const problems = [];
  const stopAll = async (set) => {
    for (const c of set) {
      if (!c.running && !c.killRequested && !c.mayExit) problems.push(`${c.name} died on its own: ${c.describe()}`);
    }
    // Children still running now get SIGTERM from stop(); those that promise
    // a clean exit (cpp runtimes, managers) must then exit 0 by themselves.
    // A child the test killed itself may not be reaped yet; its exit status
    // is the test's business.
    const terminated = [...set].filter((c) => c.running && c.cleanExitOnTerm && !c.killRequested);
    await Promise.all([...set].map((c) => c.stop()));
    for (const c of set) if (c.running) problems.push(`${c.name} (pid ${c.pid}) is still running`);
    for (const c of terminated) {
      if (c.sigkilled) problems.push(`${c.name} did not exit within ${c.graceMs} ms of SIGTERM: ${c.describe()}`);
      else if (c.exit && (c.exit.code !== 0 || c.exit.signal)) {
        problems.push(`${c.name} exited ${JSON.stringify(c.exit)} after SIGTERM, not 0: ${c.describe()}`);
      }
    }
    set.clear();
  };
  await stopAll(tracked.runtimes);
  for (const r of tracked.requests) r.destroy();
  tracked.requests.clear();
  await Promise.all([...tracked.sockets].map((s) => s.terminate()));
  tracked.sockets.clear();
  await stopAll(tracked.managers);
  for (const c of everyChild) if (!c.running) everyChild.delete(c);
  assert.deepEqual(problems, [], 'child processes of the test: none crashed, all stopped');
}

// ---------------------------------------------------------------------------
// Child processes

let childSeq = 0;
const MAX_KEPT_LINES = 5000;
const testFileName = path.basename(process.argv[1] || 'interop', '.mjs');

// Child logs of this test file's previous runs would only pile up.
fs.mkdirSync(LOG_DIR, { recursive: true });
for (const f of fs.readdirSync(LOG_DIR)) {
  if (f.startsWith(`${testFileName}.`) && !f.startsWith(`${testFileName}.${process.pid}.`)) {
    fs.rmSync(path.join(LOG_DIR, f), { force: true });
  }
}

/** A child process whose stdout+stderr lines are kept (bounded) and logged to a file. */
export class Child {
  constructor(name, command, args, options = {}) {
    this.name = name;
    this.lines = [];
    this.exit = null; // {code, signal} once exited
    this.#lineWaiters = new Set();
    this.logPath = path.join(LOG_DIR, `${testFileName}.${process.pid}.${++childSeq}.${name}.log`);
    this.#log = fs.createWriteStream(this.logPath);
    this.#log.write(`$ ${command} ${args.join(' ')}\n`);

    this.proc = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    this.pid = this.proc.pid;
    everyChild.add(this);
    this.exited = new Promise((resolve) => {
      const done = (exit) => {
        if (this.exit) return;
        this.exit = exit;
        this.#log.write(`[exit ${JSON.stringify(exit)}]\n`);
        this.#wake();
        resolve(exit);
      };
      this.proc.once('exit', (code, signal) => done({ code, signal }));
      this.proc.once('error', (error) => done({ code: null, signal: null, error: error.message }));
    });
    for (const stream of [this.proc.stdout, this.proc.stderr]) {
      let partial = '';
      stream.setEncoding('utf8');
      stream.on('data', (text) => {
        this.#log.write(text);
        const parts = (partial + text).split('\n');
        partial = parts.pop();
        if (parts.length) this.#addLines(parts);
      });
      stream.on('end', () => partial && this.#addLines([partial]));
    }
  }

  #log;
  #lineWaiters;

  get running() {
    return this.exit === null && this.pid !== undefined;
  }

  #addLines(lines) {
    this.lines.push(...lines);
    if (this.lines.length > MAX_KEPT_LINES) this.lines.splice(0, this.lines.length - MAX_KEPT_LINES);
    this.#wake();
  }

  #wake() {
    for (const w of this.#lineWaiters) w();
  }

  tail(n = 30) {
    return this.lines.slice(-n).join('\n');
  }

  describe() {
    return `${this.name} (pid ${this.pid}, log ${this.logPath}), last output:\n${this.tail()}`;
  }

  /** Waits for an output line matching `re` (lines seen earlier count too); returns the match. */
  waitForLine(re, timeoutMs = 10000) {
    return new Promise((resolve, reject) => {
      const check = () => {
        for (const line of this.lines) {
          const m = line.match(re);
          if (m) return finish(null, m);
        }
        if (this.exit) finish(new Error(`${this.name} exited ${JSON.stringify(this.exit)} before printing ${re}; ${this.describe()}`));
      };
      const timer = setTimeout(
        () => finish(new Error(`no line matching ${re} within ${timeoutMs} ms from ${this.describe()}`)),
        timeoutMs
      );
      const finish = (err, m) => {
        clearTimeout(timer);
        this.#lineWaiters.delete(check);
        if (err) reject(err);
        else resolve(m);
      };
      this.#lineWaiters.add(check);
      check();
    });
  }

  kill(signal = 'SIGTERM') {
    this.killRequested = true;
    if (this.running) this.proc.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it is still running after `graceMs`. */
  async stop({ graceMs = this.graceMs ?? 3000 } = {}) {
    this.killRequested = true;
    if (this.running) {
      this.proc.kill('SIGTERM');
      await Promise.race([this.exited, grace(graceMs)]);
    }
    if (this.running) {
      this.sigkilled = true;
      this.proc.kill('SIGKILL');
      await Promise.race([this.exited, grace(2000)]);
    }
    return this.exit;
  }
}

// ---------------------------------------------------------------------------
// HTTP

export class HttpResponse {
  constructor(status, headers, text) {
    this.status = status;
    this.headers = headers;
    this.text = text;
  }
  get json() {
    try {
      return JSON.parse(this.text);
    } catch {
      throw new Error(`HTTP ${this.status} body is not JSON: ${JSON.stringify(this.text.slice(0, 500))}`);
    }
  }
  get traceIdHeader() {
    return this.headers['x-genkit-trace-id'];
  }
}

function encodeBody(body) {
  if (body === undefined) return undefined;
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  return JSON.stringify(body);
}

// One connection per request (agent: false): no keep-alive sockets survive a test.
function startRequest(url, { method = 'GET', body, headers = {} }) {
  const data = encodeBody(body);
  const req = http.request(url, {
    method,
    agent: false,
    headers: {
      ...(data !== undefined
        ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }
        : {}),
      ...headers,
    },
  });
  tracked.requests.add(req);
  req.once('close', () => tracked.requests.delete(req));
  // Errors after a response arrived (e.g. EPIPE when the server answers 413
  // before reading the whole body) do not matter; earlier ones reject below.
  req.on('error', () => {});
  req.end(data);
  return req;
}

/** A plain request; resolves with the whole response. */
export function httpRequest(url, { method = 'GET', body, headers, timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = startRequest(url, { method, body, headers });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`${method} ${url}: no complete response within ${timeoutMs} ms`));
    }, timeoutMs);
    req.once('error', (e) => (clearTimeout(timer), reject(new Error(`${method} ${url}: ${e.message}`))));
    req.once('response', (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.once('end', () => {
        clearTimeout(timer);
        resolve(new HttpResponse(res.statusCode, res.headers, Buffer.concat(chunks).toString('utf8')));
      });
      res.once('error', (e) => (clearTimeout(timer), reject(new Error(`${method} ${url}: response: ${e.message}`))));
      res.once('close', () => {
        if (res.complete) return;
        clearTimeout(timer);
        reject(new Error(`${method} ${url}: connection closed before the end of the response`));
      });
    });
  });
}

/**
 * A streaming POST whose response body is NDJSON. Resolves once the response
 * head is in: {status, headers, traceId, lines: AsyncQueue of parsed lines,
 * abort()}. A response that is not NDJSON (an error) is read whole into `text`.
 */
export function ndjsonStream(url, body, { timeoutMs = 15000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = startRequest(url, { method: 'POST', body });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`POST ${url}: no response head within ${timeoutMs} ms`));
    }, timeoutMs);
    req.once('error', (e) => (clearTimeout(timer), reject(new Error(`POST ${url}: ${e.message}`))));
    req.once('response', (res) => {
      clearTimeout(timer);
      const lines = new AsyncQueue();
      let partial = '';
      const emit = (line) => {
        if (!line.trim()) return;
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.end(new Error(`stream line is not JSON: ${JSON.stringify(line.slice(0, 300))}`));
        }
      };
      res.setEncoding('utf8');
      res.on('data', (text) => {
        const parts = (partial + text).split('\n');
        partial = parts.pop();
        parts.forEach(emit);
      });
      res.once('end', () => {
        emit(partial);
        lines.end();
      });
      res.once('error', (e) => lines.end(new Error(`stream broke: ${e.message}`)));
      res.once('close', () => res.complete || lines.end(new Error('stream closed before its end')));
      resolve({
        status: res.statusCode,
        headers: res.headers,
        traceId: res.headers['x-genkit-trace-id'],
        lines,
        abort: () => req.destroy(),
      });
    });
  });
}

// ---------------------------------------------------------------------------
// JSON-RPC over WebSocket (callers on /api/ws and fake runtimes alike)

export class RpcSocket {
  /** Opens a socket (of the class it is called on); `name` only labels errors; `wsOptions` go to `ws` (e.g. TLS `ca`, `cert`, `key`). */
  static async connect(url, name = url, wsOptions = {}) {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...wsOptions });
    const sock = new this(ws, name);
    await withTimeout(
      new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
        ws.once('unexpected-response', (_, res) => {
          const err = new Error(`upgrade refused: HTTP ${res.statusCode}`);
          err.status = res.statusCode;
          res.resume();
          reject(err);
        });
      }),
      10000,
      `WebSocket connect to ${url}`
    );
    return sock;
  }

  constructor(ws, name) {
    this.ws = ws;
    this.name = name;
    this.messages = []; // every parsed incoming message, in arrival order
    this.unparsable = [];
    this.handlers = {}; // method -> async (params, msg) => {result} | {error} | undefined (no reply)
    this.closeInfo = null;
    this.#nextId = 0;
    this.#pending = new Map();
    this.#waiters = new Set();
    tracked.sockets.add(this);
    this.closed = new Promise((resolve) => {
      ws.once('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        for (const [, p] of this.#pending) p.reject(new Error(`${this.name}: socket closed (${code}) before the reply to ${p.what}`));
        this.#pending.clear();
        this.#wake();
        resolve(this.closeInfo);
      });
    });
    ws.on('error', (e) => (this.lastError = e));
    ws.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
  }

  #nextId;
  #pending;
  #waiters;

  #wake() {
    for (const w of this.#waiters) w();
  }

  #onMessage(data, isBinary) {
    let msg;
    try {
      msg = JSON.parse(data.toString('utf8'));
    } catch {
      this.unparsable.push({ data: data.toString('utf8'), isBinary });
      this.#wake();
      return;
    }
    this.messages.push(msg);
    this.#wake();
    if (msg && typeof msg === 'object' && 'method' in msg) {
      const handler = this.handlers[msg.method];
      if (handler && msg.id !== undefined) this.#answer(handler, msg);
    } else if (msg && typeof msg === 'object' && this.#pending.has(msg.id)) {
      const p = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      p.resolve(msg);
    }
  }

  async #answer(handler, msg) {
    const reply = await handler(msg.params, msg);
    if (reply !== undefined && this.ws.readyState === WebSocket.OPEN) {
      this.send({ jsonrpc: '2.0', ...reply, id: msg.id });
    }
  }

  get isOpen() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(obj) {
    this.ws.send(JSON.stringify(obj));
  }

  sendRaw(text) {
    this.ws.send(text);
  }

  notify(method, params) {
    this.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /**
   * Sends a request and resolves with the whole response message ({result}
   * or {error}), matched by id with its JSON type (1 and "1" differ).
   */
  request(method, params, { id, timeoutMs = 15000 } = {}) {
    const reqId = id ?? ++this.#nextId;
    const what = `${method} (id ${JSON.stringify(reqId)})`;
    const p = new Promise((resolve, reject) => {
      this.#pending.set(reqId, { resolve, reject, what });
    });
    const msg = { jsonrpc: '2.0', id: reqId, method };
    if (params !== undefined) msg.params = params;
    this.send(msg);
    return withTimeout(p, timeoutMs, `${this.name}: reply to ${what}`).finally(() => this.#pending.delete(reqId));
  }

  /** Like request(), but returns `result` and fails the test on an error reply. */
  async call(method, params, opts) {
    const reply = await this.request(method, params, opts);
    assert.equal(reply.error, undefined, `${method} failed: ${JSON.stringify(reply.error)}`);
    return reply.result;
  }

  /** First message (seen so far or arriving later) that satisfies `pred`. */
  waitFor(pred, timeoutMs = 5000, what = 'matching message') {
    return new Promise((resolve, reject) => {
      let i = 0;
      const check = () => {
        for (; i < this.messages.length; i++) {
          if (pred(this.messages[i])) return finish(null, this.messages[i]);
        }
        if (this.closeInfo) finish(new Error(`${this.name}: socket closed (${this.closeInfo.code}) while waiting for ${what}`));
      };
      const timer = setTimeout(
        () => finish(new Error(`${this.name}: no ${what} within ${timeoutMs} ms; got ${JSON.stringify(this.messages.slice(-5)).slice(0, 1500)}`)),
        timeoutMs
      );
      const finish = (err, msg) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        if (err) reject(err);
        else resolve(msg);
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** Waits until `n` messages satisfy `pred`; returns them in order. */
  async waitForCount(pred, n, timeoutMs = 5000, what = 'messages') {
    let found = [];
    await this.waitFor(
      () => (found = this.messages.filter(pred)).length >= n,
      timeoutMs,
      `${n} ${what}`
    ).catch((e) => {
      throw new Error(`${e.message} (had ${found.length})`);
    });
    return found.slice(0, n);
  }

  /** Notifications of `method` whose params.requestId is `requestId`. */
  notificationsFor(method, requestId) {
    return this.messages.filter((m) => m.method === method && m.params?.requestId === requestId);
  }

  waitForClose(timeoutMs = 5000) {
    return withTimeout(this.closed, timeoutMs, `${this.name}: close`);
  }

  async close() {
    if (this.closeInfo) return this.closeInfo;
    this.ws.close();
    return this.waitForClose();
  }

  async terminate() {
    if (!this.closeInfo) {
      this.ws.terminate();
      await Promise.race([this.closed, grace(1000)]);
    }
    tracked.sockets.delete(this);
  }
}

/** A raw WebSocket "runtime" on the reflection port, driven by the test. */
export class FakeRuntime extends RpcSocket {
  /** Sends `register` and resolves with the reply message. */
  register(id, extra = {}, reqId = 'reg-1') {
    return this.request(
      'register',
      { id, pid: process.pid, name: id, genkitVersion: 'interop/0', reflectionApiSpecVersion: 1, envs: ['dev'], ...extra },
      { id: reqId }
    );
  }

  /**
   * Answers a cancelAction as the Genkit runtimes do: the first runAction
   * ends with "Action was cancelled", after `onCancel` (which stops whatever
   * the test's run was sending).
   */
  cancelRunsOnRequest(onCancel = () => {}) {
    this.handlers.cancelAction = () => {
      onCancel();
      const run = this.messages.find((m) => m.method === 'runAction');
      this.send({ jsonrpc: '2.0', id: run.id, error: { code: -32000, message: 'Action was cancelled', data: { code: 1, message: 'Action was cancelled' } } });
      return { result: { message: 'Action cancelled' } };
    };
  }
}

// ---------------------------------------------------------------------------
// The manager

class ManagerDied extends Error {
  constructor(child) {
    super(`the manager is not running (exit ${JSON.stringify(child.exit)}): ${child.describe()}`);
    this.fatal = true;
  }
}

export class Manager {
  constructor(child, reflectionPort, apiPort, host = '127.0.0.1') {
    this.child = child;
    this.reflectionPort = reflectionPort;
    this.apiPort = apiPort;
    this.reflectionUrl = `ws://${host}:${reflectionPort}`;
    this.apiUrl = `http://${host}:${apiPort}`;
    this.apiWsUrl = `ws://${host}:${apiPort}/api/ws`;
  }

  get(p, opts) {
    return httpRequest(this.apiUrl + p, { ...opts, method: 'GET' });
  }

  post(p, body, opts) {
    return httpRequest(this.apiUrl + p, { ...opts, method: 'POST', body });
  }

  stream(p, body, opts) {
    return ndjsonStream(this.apiUrl + p, body, opts);
  }

  /** pollUntil that gives up at once, with the manager's output, if the manager died. */
  poll(probe, done, opts) {
    return pollUntil(
      async () => {
        if (!this.child.running) throw new ManagerDied(this.child);
        return probe();
      },
      done,
      opts
    ).catch((e) => {
      throw this.child.running ? e : new ManagerDied(this.child);
    });
  }

  async json(p) {
    const res = await this.get(p);
    assert.equal(res.status, 200, `GET ${p}: ${res.text}`);
    return res.json;
  }

  runtimes() {
    return this.json('/api/runtimes');
  }

  stats() {
    return this.json('/api/__stats');
  }

  /** Polls GET /api/runtimes until `id` is listed; fails early if `child` dies. */
  async waitForRuntime(id, { timeoutMs = 20000, child } = {}) {
    const list = await this.poll(
      async () => {
        if (child && !child.running) throw Object.assign(new Error(`runtime exited: ${child.describe()}`), { fatal: true });
        return this.runtimes();
      },
      (rts) => rts.some((r) => r.id === id),
      { timeoutMs, intervalMs: 50, what: `runtime ${id} in /api/runtimes` }
    ).catch((e) => {
      throw new Error(`${e.message}${child ? `\n${child.describe()}` : ''}`);
    });
    return list.find((r) => r.id === id);
  }

  /** Polls until no runtime is listed with `id`. */
  waitForRuntimeGone(id, timeoutMs = 5000) {
    return this.poll(() => this.runtimes(), (rts) => !rts.some((r) => r.id === id), {
      timeoutMs,
      what: `runtime ${id} to leave /api/runtimes`,
    });
  }

  /**
   * Polls /api/__stats until every given path has the given value (or
   * satisfies the given predicate), e.g. {'actors.pending_request': 0,
   * runtimes: (n) => n > 0}; returns the stats.
   */
  waitForStats(expected, timeoutMs = 5000) {
    const get = (obj, p) => p.split('.').reduce((o, k) => o?.[k], obj);
    const ok = (v, want) => (typeof want === 'function' ? want(v) : v === want);
    const shown = Object.fromEntries(Object.entries(expected).map(([p, v]) => [p, typeof v === 'function' ? v.toString() : v]));
    return this.poll(
      () => this.stats(),
      (s) => Object.entries(expected).every(([p, want]) => ok(get(s, p), want)),
      { timeoutMs, what: `/api/__stats to show ${JSON.stringify(shown)}` }
    );
  }

  /** The manager still serves: health check, and nothing left pending. */
  async assertHealthy() {
    assert.equal(this.child.running, true, `manager died: ${this.child.describe()}`);
    const health = await this.get('/api/__health');
    assert.equal(health.status, 200);
    assert.equal(health.text.trim(), 'OK');
    await this.waitForStats({ 'actors.pending_request': 0 });
  }

  api(name = 'api-client') {
    return RpcSocket.connect(this.apiWsUrl, name);
  }

  fakeRuntime(name = 'fake-runtime') {
    return FakeRuntime.connect(this.reflectionUrl, name);
  }

  /**
   * Starts a runtime of `kind` ('genkit': the real Genkit runtime,
   * genkit-runtime.mjs; 'cpp': `actor-host --role runtime --demo`) against
   * this manager and waits until it is listed under `id`. `name` is the
   * display name it registers with; `args` are extra actor-host flags (cpp).
   */
  async startRuntime(id, { kind = 'genkit', name, env = {}, args = [], demo = true, config, timeoutMs = 20000 } = {}) {
    const child =
      kind === 'genkit'
        ? startGenkitRuntime(this.reflectionUrl, { id, name, env })
        : startCppRuntime(this.reflectionUrl, { id, name, env, args, demo, config });
    child.info = await this.waitForRuntime(id, { timeoutMs, child });
    return child;
  }
}

/** The environment for a node child: without what the test runner set for itself. */
function nodeChildEnv(extra) {
  const childEnv = { ...process.env };
  // Not ours to pass on: the test runner's own marker, and a telemetry
  // server that would make genkit export (and wedge when it is gone).
  delete childEnv.NODE_TEST_CONTEXT;
  delete childEnv.NODE_OPTIONS;
  delete childEnv.GENKIT_TELEMETRY_SERVER;
  return Object.assign(childEnv, extra);
}

/** Runs `actor-host ARGS` (the CLI) to completion: {code, stdout, stderr}. */
export function runCli(args, { timeoutMs = 15000, env } = {}) {
  return new Promise((resolve) => {
    execFile(ACTOR_HOST_BIN, args, { timeout: timeoutMs, ...(env ? { env: { ...process.env, ...env } } : {}) }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/** Starts the real Genkit JS runtime (genkit-runtime.mjs) dialling `managerUrl`; does not wait. */
export function startGenkitRuntime(managerUrl, { id, name, env = {} } = {}) {
  assert.ok(fs.existsSync(RUNTIME_SCRIPT), `${RUNTIME_SCRIPT} is missing; run tests/interop/setup.sh <build dir>`);
  const childEnv = nodeChildEnv({
    GENKIT_ENV: 'dev',
    GENKIT_REFLECTION_V2_SERVER: managerUrl,
    ...(id ? { GENKIT_RUNTIME_ID: id } : {}),
    ...(name ? { HARNESS_NAME: name } : {}),
    ...env,
  });
  // The script is a symlink into INTEROP_NODE_DIR; keeping the link's path
  // as the module URL makes `import('genkit')` resolve from there.
  const child = new Child(`runtime-genkit-${id}`, process.execPath, ['--preserve-symlinks-main', RUNTIME_SCRIPT], {
    cwd: INTEROP_NODE_DIR,
    env: childEnv,
  });
  child.kind = 'genkit';
  tracked.runtimes.add(child);
  return child;
}

/**
 * Starts `actor-host --role runtime [--demo] [--config FILE] [--manager URL]
 * [--id ID] [--name NAME] ...args`; does not wait for it to register (see
 * waitForRegistered). Pass `managerUrl` null (and `env`) to leave --manager out.
 * SIGTERM must stop it with exit 0 (cleanup checks).
 */
export function startCppRuntime(managerUrl, { id, name, env = {}, args = [], demo = true, config, cwd } = {}) {
  assert.ok(fs.existsSync(ACTOR_HOST_BIN), `actor-host binary not found: ${ACTOR_HOST_BIN} (set ACTOR_HOST_BIN)`);
  const argv = ['--role', 'runtime'];
  if (demo) argv.push('--demo');
  if (config) argv.push('--config', config);
  if (managerUrl) argv.push('--manager', managerUrl);
  if (id) argv.push('--id', id);
  if (name) argv.push('--name', name);
  const logLevel = process.env.INTEROP_RUNTIME_LOG_LEVEL;
  if (logLevel) argv.push('--log-level', logLevel);
  const childEnv = { ...process.env };
  delete childEnv.GENKIT_REFLECTION_V2_SERVER;
  delete childEnv.GENKIT_RUNTIME_ID;
  Object.assign(childEnv, env);
  const child = new Child(`runtime-cpp-${id ?? 'noid'}`, ACTOR_HOST_BIN, [...argv, ...args], { env: childEnv, cwd });
  child.kind = 'cpp';
  child.cleanExitOnTerm = true;
  // Runs in flight are cancelled on SIGTERM; a program action gets its
  // killGrace (default 2 s) before SIGKILL.
  child.graceMs = 6000;
  tracked.runtimes.add(child);
  return child;
}

/** Waits for a cpp runtime's n-th "Registered with manager <url> as <id>" line; returns the match. */
export async function waitForRegistered(child, { count = 1, timeoutMs = 10000 } = {}) {
  const re = /Registered with manager (\S+) as (\S+)/;
  await pollUntil(
    () => {
      if (!child.running) throw Object.assign(new Error(`runtime exited: ${child.describe()}`), { fatal: true });
      return child.lines.filter((l) => re.test(l)).length;
    },
    (n) => n >= count,
    { timeoutMs, intervalMs: 20, what: `registration #${count} of ${child.name}` }
  ).catch((e) => {
    throw e.fatal ? e : new Error(`${e.message}\n${child.describe()}`);
  });
  return child.lines.filter((l) => re.test(l))[count - 1].match(re);
}

/**
 * Starts the real Genkit manager scenario (genkit-manager.mjs <port>
 * [runtimeId] ...args) and resolves once it listens: {child, port, url,
 * steps()} where steps() parses its JSON stdout lines. It exits by itself
 * when the scenario is done (exit 0 iff every step passed).
 */
export async function startGenkitManager(runtimeId, { port = 0, args = [], timeoutMs = 30000 } = {}) {
  assert.ok(fs.existsSync(GENKIT_MANAGER_SCRIPT), `${GENKIT_MANAGER_SCRIPT} is missing; run tests/interop/setup.sh <build dir>`);
  const argv = ['--preserve-symlinks-main', GENKIT_MANAGER_SCRIPT, String(port)];
  if (runtimeId) argv.push(runtimeId);
  const child = new Child('genkit-manager', process.execPath, [...argv, ...args], {
    cwd: INTEROP_NODE_DIR,
    env: nodeChildEnv({}),
  });
  child.mayExit = true;
  tracked.runtimes.add(child);
  const m = await child.waitForLine(/^\{"step":"start".*"port":(\d+)/, timeoutMs);
  const steps = () =>
    child.lines
      .filter((l) => l.startsWith('{"step":'))
      .map((l) => {
        try {
          return JSON.parse(l);
        } catch {
          return { step: '?', ok: false, failures: [`unparsable line: ${l.slice(0, 300)}`] };
        }
      });
  return { child, port: Number(m[1]), url: `ws://127.0.0.1:${m[1]}`, steps };
}

/**
 * A new directory under the system's temp folder, removed when the test
 * process exits (whatever the outcome): a test leaves no files behind.
 */
export function tempDir(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}
const tempDirs = new Set();
process.on('exit', () => {
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A free TCP port on 127.0.0.1 (bound, then released). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts `actor-host --role manager --port <port> --http-port 0 --worker-port 0
 * ...extraArgs` (port 0 = the first free one in 3200-3400; --worker-port is
 * left out when extraArgs or env set it) and learns the ports from its
 * "Starting ..." log lines (manager.workerPort: the iii worker endpoint). `env` is added to the (cleaned) test
 * environment; extraArgs may end in `--`, command.
 */
export async function startManager(extraArgs = [], { port = 0, timeoutMs = 10000, env = {}, cwd, launcher = [], host = '127.0.0.1' } = {}) {
  assert.ok(fs.existsSync(ACTOR_HOST_BIN), `manager binary not found: ${ACTOR_HOST_BIN} (set ACTOR_HOST_BIN)`);
  const logLevel = process.env.INTEROP_MANAGER_LOG_LEVEL;
  const args = ['--role', 'manager', '--port', String(port), '--http-port', '0'];
  if (logLevel) args.push('--log-level', logLevel);
  // Tests run managers side by side: never the fixed iii default port 49134.
  if (!extraArgs.includes('--worker-port') && !('ACTOR_HOST_WORKER_PORT' in env)) args.push('--worker-port', '0');
  // Managers side by side would share the default trace store of the
  // project they run in: a test that wants traces names its store (or
  // passes `--project-root` and `--trace-store ''` for the default).
  if (!extraArgs.includes('--trace-store') && !('ACTOR_HOST_TRACE_STORE' in env)) args.push('--trace-store', 'none');
  // Its child runtimes (-- <command>, services) inherit this environment.
  // `launcher`: argv that execs the binary (e.g. sh -c 'ulimit -n 128; exec "$@"' sh).
  const [command, ...argv] = [...launcher, ACTOR_HOST_BIN, ...args, ...extraArgs];
  const child = new Child('manager', command, argv, { env: nodeChildEnv(env), cwd });
  child.cleanExitOnTerm = true;
  tracked.managers.add(child);
  const [refl, api, worker] = await Promise.all([
    child.waitForLine(/Starting reflection server: wss?:\/\/[^\s/]+:(\d+)/, timeoutMs),
    child.waitForLine(/Starting API server: https?:\/\/[^\s/]+:(\d+)/, timeoutMs),
    child.waitForLine(/Starting worker endpoint: wss?:\/\/[^\s/]+:(\d+)/, timeoutMs),
  ]);
  // `host`: where the test reaches it (its --bind; a network namespace's address).
  const manager = new Manager(child, Number(refl[1]), Number(api[1]), host);
  manager.workerPort = Number(worker[1]);
  manager.workerUrl = `ws://${host}:${worker[1]}`;
  if (extraArgs.includes('--worker-rbac-port')) {
    const rbac = await child.waitForLine(/Starting worker endpoint \(RBAC\): wss?:\/\/[^\s/]+:(\d+)/, timeoutMs);
    manager.workerRbacUrl = `ws://127.0.0.1:${rbac[1]}`;
  }
  return manager;
}

/** Manager + one runtime (of `runtime.kind`, default genkit), the common starting point. */
export async function startManagerWithRuntime(id = 'rt', { managerArgs = [], runtime = {} } = {}) {
  const manager = await startManager(managerArgs);
  const runtimeChild = await manager.startRuntime(id, runtime);
  return { manager, runtime: runtimeChild };
}

/** Pids of the processes whose command line matches `pattern` (pgrep -f). */
export function pgrep(pattern) {
  const r = spawnSync('pgrep', ['-f', pattern], { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status > 1) throw new Error(`pgrep -f ${pattern}: exit ${r.status}: ${r.stderr}`);
  return r.stdout.split('\n').filter(Boolean).map(Number).filter((pid) => pid !== process.pid);
}

/** Pids of the live children of `pid` (pgrep -P). */
export function childPids(pid) {
  const r = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' });
  if (r.error) throw r.error;
  return r.stdout.split('\n').filter(Boolean).map(Number);
}

// ---------------------------------------------------------------------------
// iii workers (the real iii-sdk peers of tests/interop/iii) and a raw client

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
    await withTimeout(
      new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
        ws.once('unexpected-response', (_, res) => {
          const err = new Error(`upgrade refused: HTTP ${res.statusCode}`);
          err.status = res.statusCode;
          res.resume();
          reject(err);
        });
      }),
      10000,
      `WebSocket connect to ${url}`
    );
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
