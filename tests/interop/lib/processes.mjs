// Child processes of the interop tests and the tracking of everything a
// test starts (children, client sockets, HTTP requests), torn down by
// cleanup(), which each test file runs from afterEach/after hooks, and when
// the test process exits or is ended by SIGTERM, SIGINT or SIGHUP; temp
// dirs, free ports and pgrep.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { LOG_DIR } from './env.mjs';
import { grace } from './wait.mjs';

// ---------------------------------------------------------------------------
// Tracking of everything a test starts

export const tracked = {
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

// Node runs no 'exit' listeners when a signal's default action ends it, so a
// test process killed by SIGTERM (a CI job's timeout, a kill by hand, `node
// --test` cancelling the file when it is terminated itself), SIGINT or SIGHUP
// would leave its managers and runtimes running. On those signals every child still running gets SIGTERM,
// so that a manager stops its own children (SIGKILL would orphan them), and
// whatever has not exited after a short grace is left to the 'exit' listeners
// (SIGKILL, temp dirs), which process.exit() runs; the status is the one a
// shell reports for the signal, 128 + its number. A second signal cuts the
// grace short.
const SIGNAL_GRACE_MS = 1500;
let signalled = false;
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  process.on(signal, async () => {
    const status = 128 + os.constants.signals[signal];
    if (signalled) process.exit(status);
    signalled = true;
    const running = [...everyChild].filter((c) => c.running);
    for (const c of running) c.kill('SIGTERM');
    // A timer that keeps the process alive: the grace must not end in a
    // natural exit with status 0.
    let timer;
    await Promise.race([
      Promise.all(running.map((c) => c.exited)),
      new Promise((resolve) => (timer = setTimeout(resolve, SIGNAL_GRACE_MS))),
    ]);
    clearTimeout(timer);
    process.exit(status);
  });
}

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

/** The environment for a node child: without what the test runner set for itself. */
export function nodeChildEnv(extra) {
  const childEnv = { ...process.env };
  // Not ours to pass on: the test runner's own marker, and a telemetry
  // server that would make genkit export (and wedge when it is gone).
  delete childEnv.NODE_TEST_CONTEXT;
  delete childEnv.NODE_OPTIONS;
  delete childEnv.GENKIT_TELEMETRY_SERVER;
  return Object.assign(childEnv, extra);
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
