// The operator surface of the manager: `-- <command>` attached runtimes (ours
// and the real Genkit JS runtime), a host config with services and restart
// policies, drain on SIGTERM, /metrics, /healthz, /readyz, JSON logs, and bad
// configs refused at start.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, test } from 'node:test';
import {
  ACTOR_HOST_BIN,
  cleanup,
  Child,
  pollUntil,
  RUNTIME_SCRIPT,
  startManager,
  TRACE_ID_RE,
} from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-operator-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function writeFile(name, text) {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, text);
  return p;
}

/** Whether a process with this pid exists (and is not a zombie of ours). */
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return false;
  }
}

/** The command that starts the real Genkit JS runtime (genkit-runtime.mjs). */
const genkitCommand = [process.execPath, '--preserve-symlinks-main', RUNTIME_SCRIPT];

/** Parses the Prometheus text of /metrics into {'name{labels}': value}. */
async function metrics(manager) {
  const res = await manager.get('/metrics');
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const out = {};
  for (const line of res.text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = line.match(/^(\S+) (\S+)$/);
    assert.ok(m, `not a sample line: ${line}`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

async function waitForMetric(manager, name, want, timeoutMs = 10000) {
  return manager.poll(() => metrics(manager), (m) => m[name] === want, {
    timeoutMs,
    intervalMs: 50,
    what: `${name} == ${want}`,
  });
}

/** SIGTERM to the manager; resolves with its exit once it is gone. */
async function terminate(manager, timeoutMs = 15000) {
  manager.child.kill('SIGTERM');
  const exit = await Promise.race([
    manager.child.exited,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`manager still running ${timeoutMs} ms after SIGTERM: ${manager.child.describe()}`)), timeoutMs)),
  ]);
  return exit;
}

function run(manager, key, input) {
  return manager.post('/api/rpc/runAction', { key, input });
}

test('-- <command>: our runtime is started with the Genkit variables, --write-env-file, stopped on SIGTERM', async () => {
  const envFile = path.join(tmp, 'runtime.env');
  const manager = await startManager(['--write-env-file', envFile, '--id', 'attached', '--', ACTOR_HOST_BIN, '--role', 'runtime', '--demo']);
  const info = await manager.waitForRuntime('attached');
  const env = Object.fromEntries(fs.readFileSync(envFile, 'utf8').trim().split('\n').map((l) => l.split(/=(.*)/s).slice(0, 2)));
  assert.deepEqual(env, {
    GENKIT_ENV: 'dev',
    GENKIT_REFLECTION_V2_SERVER: `ws://localhost:${manager.reflectionPort}`,
    GENKIT_RUNTIME_ID: 'attached',
  });
  const res = await run(manager, '/flow/echo', 'hi');
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.result, 'hi');
  assert.equal((await manager.get('/readyz')).status, 200);
  const exit = await terminate(manager);
  assert.deepEqual(exit, { code: 0, signal: null });
  assert.equal(alive(info.pid), false, `runtime pid ${info.pid} outlived the manager`);
  await manager.child.waitForLine(/service actor-host: stopped \(exited with status 0\)/, 1000);
});

test('-- <command>: the real Genkit JS runtime; the manager ends when it dies', async () => {
  const manager = await startManager(['--id', 'genkit-app', '--', ...genkitCommand]);
  const info = await manager.waitForRuntime('genkit-app');
  const res = await run(manager, '/flow/echo', { a: 1 });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(res.json.result, { a: 1 });
  assert.match(res.json.telemetry.traceId, TRACE_ID_RE);
  manager.child.mayExit = true;
  process.kill(info.pid, 'SIGKILL');
  const exit = await manager.child.exited;
  assert.deepEqual(exit, { code: 137, signal: null }, manager.child.describe());
  await manager.child.waitForLine(/killed by signal 9 \(SIGKILL\)/, 1000);
});

test('-- <command>: a command that dies before registering ends the manager with its exit code', async () => {
  const manager = await startManager(['--', 'sh', '-c', 'echo starting up; exit 3']);
  manager.child.mayExit = true;
  const exit = await manager.child.exited;
  assert.deepEqual(exit, { code: 3, signal: null }, manager.child.describe());
  await manager.child.waitForLine(/\[sh\] starting up/, 1000);
  await manager.child.waitForLine(/service sh: Process exited before runtime was ready \(exited with status 3\)/, 1000);
});

test('host config: three kinds of services, a crashing one restarted per its policy, readiness, clean stop', async () => {
  const config = writeFile(
    'host.yaml',
    `manager:
  drain_timeout: 2s
services:
  - name: demo
    command: [actor-host, --role, runtime, --demo]
  - name: app
    command: [${genkitCommand.map((a) => JSON.stringify(a)).join(', ')}]
    runtime_id: genkit-app
    cwd: ${JSON.stringify(path.dirname(RUNTIME_SCRIPT))}
    env: {HARNESS_NAME: "Genkit app"}
  - name: crasher
    command: [sh, -c, "echo crashing now; exit 1"]
    register: false
    restart: on-failure
    backoff: 50ms
    max_backoff: 200ms
    max_restarts: 2
`
  );
  const manager = await startManager(['--config', config]);
  const demo = await manager.waitForRuntime('demo');
  const app = await manager.waitForRuntime('genkit-app');
  assert.equal(app.name, 'Genkit app');
  await manager.poll(() => manager.get('/readyz'), (r) => r.status === 200, { what: '/readyz 200' });
  await manager.child.waitForLine(/service crasher: giving up after 2 restarts in a row/, 10000);
  const m = await metrics(manager);
  assert.equal(m['actor_host_child_restarts_total'], 2);
  assert.equal(m['actor_host_child_starts_total'], 5); // demo, app, crasher x3
  assert.equal(m['actor_host_services_expected'], 2);
  assert.equal(m['actor_host_services_ready'], 2);
  assert.equal(m['actor_host_runtimes_connected'], 2);
  assert.equal(manager.child.lines.filter((l) => /\[crasher\] crashing now/.test(l)).length, 3);
  // Backoff doubles: restart 1 after 50 ms, restart 2 after 100 ms.
  assert.ok(manager.child.lines.some((l) => /service crasher: restarting in 50 ms \(restart 1 of 2\)/.test(l)));
  assert.ok(manager.child.lines.some((l) => /service crasher: restarting in 100 ms \(restart 2 of 2\)/.test(l)));
  for (const key of ['demo', 'genkit-app']) {
    const res = await manager.post('/api/rpc/runAction', { key: '/flow/echo', input: key, runtimeId: key });
    assert.equal(res.json.result, key);
  }
  assert.deepEqual(await terminate(manager), { code: 0, signal: null });
  assert.equal(alive(demo.pid), false, 'demo runtime outlived the manager');
  assert.equal(alive(app.pid), false, 'Genkit app outlived the manager');
});

test('a service that crashes after registering is restarted and registers again; /readyz follows it', async () => {
  const config = writeFile(
    'restart.yaml',
    `services:
  - name: demo
    command: [actor-host, --role, runtime, --demo]
    restart: always
    backoff: 100ms
`
  );
  const manager = await startManager(['--config', config]);
  const first = await manager.waitForRuntime('demo');
  await manager.poll(() => manager.get('/readyz'), (r) => r.status === 200, { what: '/readyz 200' });
  process.kill(first.pid, 'SIGKILL');
  const second = await manager.poll(() => manager.runtimes(), (rts) => rts.some((r) => r.id === 'demo' && r.pid !== first.pid), {
    timeoutMs: 10000,
    what: 'demo registered again by a new process',
  });
  assert.ok(second.length === 1);
  await manager.poll(() => manager.get('/readyz'), (r) => r.status === 200, { what: '/readyz 200 again' });
  const m = await metrics(manager);
  assert.equal(m['actor_host_child_restarts_total'], 1);
  assert.equal((await run(manager, '/flow/echo', 'again')).json.result, 'again');
});

test('SIGTERM during a streaming call: the call finishes within the drain timeout, then children stop', async () => {
  const manager = await startManager(['--demo', '--drain-timeout', '10s']);
  const demo = await manager.waitForRuntime('demo');
  const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 20, delayMs: 50 } });
  assert.deepEqual((await s.lines.next(5000, 'first chunk')).value, { i: 0 });
  manager.child.kill('SIGTERM');
  const rest = await s.lines.drain(5000);
  assert.equal(rest.length, 20, JSON.stringify(rest.slice(-2)));
  assert.deepEqual(rest.at(-1).result, { count: 20, sum: 190 });
  assert.deepEqual(await manager.child.exited, { code: 0, signal: null });
  assert.ok(manager.child.lines.some((l) => /waiting for 1 request\(s\) in flight/.test(l)));
  assert.equal(alive(demo.pid), false, 'demo runtime outlived the manager');
});

test('SIGTERM: a call that outlives --drain-timeout is cancelled (CANCELLED), and the manager exits 0', async () => {
  const manager = await startManager(['--demo', '--drain-timeout', '300ms']);
  const demo = await manager.waitForRuntime('demo');
  const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 200, delayMs: 50 } });
  assert.deepEqual((await s.lines.next(5000, 'first chunk')).value, { i: 0 });
  manager.child.kill('SIGTERM');
  const rest = await s.lines.drain(5000);
  const last = rest.at(-1);
  assert.ok(last.error, `expected an error line, got ${JSON.stringify(last)}`);
  assert.equal(last.error.data?.code, 1, JSON.stringify(last)); // CANCELLED
  assert.match(last.error.message, /drain timeout passed/);
  assert.ok(rest.length < 150, `the stream went on after the drain timeout: ${rest.length} lines`);
  assert.deepEqual(await manager.child.exited, { code: 0, signal: null });
  assert.equal(alive(demo.pid), false, 'demo runtime outlived the manager');
});

test('/metrics, /healthz and /readyz reflect what was done', async () => {
  const manager = await startManager(['--demo']);
  assert.equal((await manager.get('/healthz')).status, 200);
  await manager.waitForRuntime('demo');
  await manager.poll(() => manager.get('/readyz'), (r) => r.status === 200, { what: '/readyz 200' });
  for (const x of [1, 2, 3]) assert.equal((await run(manager, '/flow/echo', x)).json.result, x);
  const failed = await run(manager, '/flow/fail', { status: 'NOT_FOUND', message: 'nope' });
  assert.equal(failed.status, 404);
  const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 5 } });
  assert.equal((await s.lines.drain(5000)).length, 6);
  const m = await waitForMetric(manager, 'actor_host_pending_requests', 0);
  assert.equal(m['actor_host_requests_total{method="runAction",outcome="ok"}'], 4);
  assert.equal(m['actor_host_requests_total{method="runAction",outcome="not_found"}'], 1);
  assert.equal(m['actor_host_request_duration_seconds_count{method="runAction"}'], 5);
  assert.equal(m['actor_host_request_duration_seconds_bucket{method="runAction",le="+Inf"}'], 5);
  assert.equal(m['actor_host_stream_chunks_total'], 5);
  assert.equal(m['actor_host_runtimes_connected'], 1);
  assert.equal(m['actor_host_websockets{listener="reflection"}'], 1);
  assert.equal(m['actor_host_live_actors{kind="child_runtime"}'], 1);
  assert.equal(m['actor_host_live_actors{kind="pending_request"}'], 0);
  assert.equal(m['actor_host_child_starts_total'], 1);
  assert.ok(m['actor_host_bytes_in_total{listener="reflection"}'] > 0);
  assert.equal(m['actor_host_draining'], 0);
});

test('bad configuration is refused at start with where and why', async () => {
  const bad = writeFile('bad.yaml', 'services:\n  - name: x\n    command: [x]\n    restart: sometimes\n');
  const start = (args, env = {}) =>
    new Promise((resolve) => {
      execFile(ACTOR_HOST_BIN, args, { env: { ...process.env, ...env }, timeout: 10000 }, (err, stdout, stderr) =>
        resolve({ code: err ? err.code : 0, stdout, stderr })
      );
    });
  const r1 = await start(['--role', 'manager', '--config', bad]);
  assert.equal(r1.code, 2);
  assert.equal(r1.stderr.trim(), `error: ${bad}:4:14: bad restart 'sometimes': expected never, on-failure or always`);
  const r2 = await start(['--role', 'manager'], { ACTOR_HOST_HTTP_PORT: 'eighty' });
  assert.equal(r2.code, 2);
  assert.equal(r2.stderr.trim(), "error: env ACTOR_HOST_HTTP_PORT: bad http_port 'eighty': expected a port number 0-65535");
  const r3 = await start(['--role', 'manager', '--config', path.join(tmp, 'missing.yaml')]);
  assert.equal(r3.code, 2);
  assert.match(r3.stderr, /missing\.yaml: cannot open: No such file or directory/);
  // `actor-host config` shows the effective values and their sources.
  const good = writeFile('good.yaml', 'manager:\n  http_port: 4555\n  drain_timeout: 3s\n');
  const r4 = await start(['config', '--config', good, '--drain-timeout', '4s'], { ACTOR_HOST_HTTP_PORT: '4666' });
  assert.equal(r4.code, 0, r4.stderr);
  assert.match(r4.stdout, /^  http_port: 4666 +# env ACTOR_HOST_HTTP_PORT$/m);
  assert.match(r4.stdout, /^  drain_timeout: 4s +# flag --drain-timeout$/m);
  assert.match(r4.stdout, /^  bind: 127\.0\.0\.1 +# default$/m);
  assert.match(r4.stdout, new RegExp(`^  port: 0 +# default$`, 'm'));
});

test('--log-format json: every line is a JSON object; lines about a call carry trace id, runtime id and action', async () => {
  const manager = await startManager(['--demo', '--log-format', 'json', '--log-level', 'debug']);
  await manager.waitForRuntime('demo');
  const res = await run(manager, '/flow/echo', 'logged');
  const trace = res.json.telemetry.traceId;
  const line = await manager.child.waitForLine(new RegExp(`"traceId":"${trace}"`), 5000);
  const entry = JSON.parse(line.input);
  assert.equal(entry.runtimeId, 'demo');
  assert.equal(entry.action, '/flow/echo');
  assert.equal(entry.level, 'debug');
  assert.match(entry.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  await terminate(manager);
  for (const l of manager.child.lines) {
    assert.doesNotThrow(() => JSON.parse(l), `not JSON: ${l}`);
  }
  assert.ok(manager.child.lines.some((l) => JSON.parse(l).service === 'demo'), 'service lines carry the service name');
});

test('a service that never registers: the ready timeout is logged and /readyz says why', async () => {
  const config = writeFile(
    'silent.yaml',
    `services:
  - name: silent
    command: [sleep, "30"]
    ready_timeout: 200ms
    stop_grace: 1s
`
  );
  const manager = await startManager(['--config', config]);
  await manager.child.waitForLine(/service silent: Timeout waiting for runtime to be ready \(200 ms\)/, 5000);
  const ready = await manager.get('/readyz');
  assert.equal(ready.status, 503);
  assert.equal(ready.text.trim(), 'not ready: 0 of 1 configured services registered');
  const m = await metrics(manager);
  assert.equal(m['actor_host_services_expected'], 1);
  assert.equal(m['actor_host_services_ready'], 0);
  assert.equal((await manager.get('/healthz')).status, 200);
  const pid = Number((await manager.child.waitForLine(/service silent: started pid (\d+)/, 1000))[1]);
  assert.deepEqual(await terminate(manager), { code: 0, signal: null });
  assert.equal(alive(pid), false, 'sleep outlived the manager');
});

test('-- <command> that cannot be started: the manager says why and exits 127', async () => {
  const manager = await startManager(['--', '/nonexistent/runtime-binary']);
  manager.child.mayExit = true;
  assert.deepEqual(await manager.child.exited, { code: 127, signal: null });
  await manager.child.waitForLine(/service runtime-binary: cannot start program '\/nonexistent\/runtime-binary': execve: No such file or directory/, 1000);
});
