// The manager (`actor-host --role manager`) and what runs against it: the
// real Genkit JS runtime, our cpp runtime, the real Genkit manager scenario
// and the CLI. Everything started here is tracked (processes.mjs).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { ACTOR_HOST_BIN, GENKIT_MANAGER_SCRIPT, INTEROP_NODE_DIR, RUNTIME_SCRIPT } from './env.mjs';
import { httpRequest, ndjsonStream } from './http.mjs';
import { Child, nodeChildEnv, tracked } from './processes.mjs';
import { FakeRuntime, RpcSocket } from './rpc.mjs';
import { pollUntil } from './wait.mjs';

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
