// JSON-RPC over WebSocket (callers on /api/ws and fake runtimes alike).
import assert from 'node:assert/strict';
import { WebSocket } from './env.mjs';
import { tracked } from './processes.mjs';
import { grace, withTimeout } from './wait.mjs';

/**
 * Resolves once `ws` (just made for `url`) is open; rejects on an error or a
 * refused upgrade (the error's `status` is the HTTP status), or after 10 s.
 */
export function opened(ws, url) {
  return withTimeout(
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
}

export class RpcSocket {
  /** Opens a socket (of the class it is called on); `name` only labels errors; `wsOptions` go to `ws` (e.g. TLS `ca`, `cert`, `key`). */
  static async connect(url, name = url, wsOptions = {}) {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...wsOptions });
    const sock = new this(ws, name);
    await opened(ws, url);
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
