// Services and replicas (docs/API.md, "Services and replicas"), over real
// sockets: runtimes registered under one name share its calls, the least
// loaded first; runtimeId pins and runtimeName picks; a replica that dies
// fails only the calls it held; a cap on calls in flight queues and then
// sheds with 429 + Retry-After; the real Genkit runtime's genkit({name})
// makes it a replica.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, test } from 'node:test';
import { cleanup, runCli, startManager } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fake runtime `id` registered under `name` that answers runAction with its id after `ms`. */
async function replica(m, id, name, { ms = 0 } = {}) {
  const rt = await m.fakeRuntime(id);
  rt.held = 0;
  rt.handlers.runAction = async () => {
    rt.held += 1;
    if (ms > 0) await delay(ms);
    rt.held -= 1;
    return { result: { result: id, telemetry: { traceId: 'a'.repeat(32) } } };
  };
  const reply = await rt.register(id, { name });
  assert.deepEqual(reply.result, {}, JSON.stringify(reply));
  return rt;
}

/** `total` calls of /api/runAction, `callers` at a time; resolves the responses. */
async function calls(m, body, total, callers) {
  const out = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < total) {
        next += 1;
        out.push(await m.post('/api/runAction', body));
      }
    })
  );
  return out;
}

function countBy(responses) {
  const n = {};
  for (const r of responses) {
    assert.equal(r.status, 200, r.text);
    n[r.json.result] = (n[r.json.result] ?? 0) + 1;
  }
  return n;
}

test('replicas under one name share its calls; runtimeId pins; runtimeName picks; the newest name is the default', async () => {
  const m = await startManager();
  for (const id of ['svc-1', 'svc-2', 'svc-3']) await replica(m, id, 'svc');
  await replica(m, 'other', 'other');
  // Neither: the most recently registered name, as Genkit's most-recent rule.
  let r = await m.post('/api/runAction', { key: '/flow/x', input: 1 });
  assert.equal(r.json.result, 'other');
  // runtimeName: 300 calls spread over the three (>= 20 % each).
  const n = countBy(await calls(m, { key: '/flow/x', input: 1, runtimeName: 'svc' }, 300, 6));
  for (const id of ['svc-1', 'svc-2', 'svc-3']) assert.ok((n[id] ?? 0) >= 60, `${id}: ${JSON.stringify(n)}`);
  assert.equal(n.other, undefined);
  // runtimeId pins one replica.
  for (let i = 0; i < 5; i++) {
    r = await m.post('/api/runAction', { key: '/flow/x', input: 1, runtimeId: 'svc-2' });
    assert.equal(r.json.result, 'svc-2');
  }
  // An unknown name: 404 NOT_FOUND with the reason.
  r = await m.post('/api/runAction', { key: '/flow/x', input: 1, runtimeName: 'nope' });
  assert.equal(r.status, 404, r.text);
  assert.match(r.text, /No runtime named nope/);
  // The listing: one entry per service, its replicas, the default marked.
  const services = await m.json('/api/services');
  assert.deepEqual(services.map((s) => [s.name, s.default, s.replicas.map((x) => x.id)]), [
    ['svc', false, ['svc-1', 'svc-2', 'svc-3']],
    ['other', true, ['other']],
  ]);
  assert.ok(services[0].replicas.every((x) => x.state === 'serving' && x.inFlight === 0));
  // GET /api/runtimes keeps one entry per runtime, with its name.
  const rts = await m.runtimes();
  assert.deepEqual(rts.map((x) => [x.id, x.name]), [
    ['svc-1', 'svc'], ['svc-2', 'svc'], ['svc-3', 'svc'], ['other', 'other'],
  ]);
  await m.assertHealthy();
});

test('a replica 40x slower receives few of the calls under 12 concurrent callers', async () => {
  const m = await startManager();
  await replica(m, 'fast-1', 'svc', { ms: 2 });
  await replica(m, 'fast-2', 'svc', { ms: 2 });
  await replica(m, 'slow', 'svc', { ms: 80 });
  const n = countBy(await calls(m, { key: '/flow/x', input: 1, runtimeName: 'svc' }, 300, 12));
  const share = (n.slow ?? 0) / 300;
  assert.ok(share <= 0.15, `slow replica got ${(share * 100).toFixed(1)} %: ${JSON.stringify(n)}`);
  assert.ok(n['fast-1'] > 0 && n['fast-2'] > 0, JSON.stringify(n));
  await m.assertHealthy();
});

test('a replica that dies fails only the calls it held; later calls go to the others', async () => {
  const m = await startManager();
  const a = await replica(m, 'svc-1', 'svc', { ms: 30 });
  await replica(m, 'svc-2', 'svc', { ms: 30 });
  await replica(m, 'svc-3', 'svc', { ms: 30 });
  const body = { key: '/flow/x', input: 1, runtimeName: 'svc' };
  const results = [];
  let killedAt = 0;
  let held = 0;
  const loop = async () => {
    for (let i = 0; i < 25; i++) {
      const started = Date.now();
      const r = await m.post('/api/runAction', body);
      results.push({ started, r });
    }
  };
  const load = Promise.all(Array.from({ length: 16 }, loop));
  await m.poll(async () => a.held, (h) => h > 0, { what: 'svc-1 holding calls' });
  held = a.held;
  killedAt = Date.now();
  await a.terminate();
  await load;
  const failed = results.filter((x) => x.r.status !== 200);
  for (const f of failed) {
    assert.equal(f.r.status, 503, f.r.text);
    assert.equal(f.r.json.error.code, 14, f.r.text); // UNAVAILABLE
  }
  // The calls svc-1 held at the kill fail (it may have taken a few more
  // meanwhile, before its socket's end was seen); every call started 300 ms
  // after the kill succeeds.
  assert.ok(failed.length <= held + 16, `${failed.length} failed, svc-1 held ${held}`);
  assert.ok(failed.every((x) => x.started < killedAt + 300), 'a call started after the kill failed');
  assert.ok(results.filter((x) => x.started >= killedAt + 300).length > 0, 'no call started after the kill');
  await m.waitForRuntimeGone('svc-1');
  await m.assertHealthy();
});

test('cap 1 and queue 1 on one replica: of 6 calls at once, 2 succeed and 4 get 429 with Retry-After', async () => {
  const m = await startManager(['--max-inflight-per-runtime', '1', '--max-queued-per-service', '1']);
  await replica(m, 'only', 'svc', { ms: 300 });
  const started = Date.now();
  const rs = await Promise.all(
    Array.from({ length: 6 }, async () => {
      const r = await m.post('/api/runAction', { key: '/flow/x', input: 1 });
      return { r, took: Date.now() - started };
    })
  );
  const ok = rs.filter((x) => x.r.status === 200);
  const shed = rs.filter((x) => x.r.status === 429);
  assert.equal(ok.length, 2, rs.map((x) => x.r.status).join(','));
  assert.equal(shed.length, 4);
  for (const s of shed) {
    assert.equal(s.r.headers['retry-after'], '1');
    assert.equal(s.r.json.error.code, 8, s.r.text); // RESOURCE_EXHAUSTED
    assert.match(s.r.text, /Service svc is busy/);
    // Refused at once, not after the run.
    assert.ok(s.took < 250, `a refusal took ${s.took} ms`);
  }
  const metrics = (await m.get('/metrics')).text
    .split('\n')
    .filter((l) => l.startsWith('actor_host_service_'));
  assert.ok(metrics.includes('actor_host_service_calls_refused_total 4'), metrics.join('\n'));
  assert.ok(metrics.includes('actor_host_service_queue_wait_seconds_count{} 1'), metrics.join('\n'));
  assert.ok(metrics.includes('actor_host_service_calls_queued 0'), metrics.join('\n'));
  await m.assertHealthy();
});

test('the real Genkit runtime started with genkit({name}) is a replica of that service', async () => {
  const m = await startManager();
  const env = { HARNESS_NAME: 'orders' };
  await m.startRuntime('orders-a', { kind: 'genkit', env });
  await m.startRuntime('orders-b', { kind: 'genkit', env });
  const services = await m.json('/api/services');
  const orders = services.find((s) => s.name === 'orders');
  assert.ok(orders, JSON.stringify(services));
  assert.deepEqual(orders.replicas.map((x) => x.id).sort(), ['orders-a', 'orders-b']);
  // Its actions were listed once at register: getOrder declares itself idempotent.
  await m.poll(
    () => m.json('/api/services'),
    (list) => list.find((s) => s.name === 'orders').idempotentActions.length === 1,
    { what: 'the declared idempotent action learnt' }
  );
  assert.deepEqual(
    (await m.json('/api/services')).find((s) => s.name === 'orders').idempotentActions,
    ['/flow/getOrder']
  );
  // Two calls by name at once: the second goes to the replica without one.
  const runs = [1, 2].map(() =>
    m.post('/api/runAction', { key: '/flow/slow', input: { ms: 1500 }, runtimeName: 'orders' })
  );
  await m.poll(
    () => m.json('/api/services'),
    (list) => list.find((s) => s.name === 'orders').replicas.every((x) => x.inFlight === 1),
    { what: 'one call in flight on each replica of orders' }
  );
  for (const r of await Promise.all(runs)) assert.equal(r.status, 200, r.text);
  await m.assertHealthy();
});

test('cancel by trace id alone reaches the replica that holds the run', async () => {
  const m = await startManager();
  const traceId = 'f'.repeat(32);
  const make = async (id) => {
    const rt = await m.fakeRuntime(id);
    rt.handlers.runAction = (_p, msg) => {
      rt.run = msg;
      rt.notify('runActionState', { requestId: msg.id, state: { traceId } });
      return undefined; // answered when cancelled
    };
    rt.handlers.cancelAction = (params) => {
      if (!rt.run || params.traceId !== traceId) return { error: { code: -32602, message: 'Action not found or already completed' } };
      rt.send({ jsonrpc: '2.0', id: rt.run.id, error: { code: -32000, message: 'Action was cancelled', data: { code: 1, message: 'Action was cancelled' } } });
      return { result: { message: 'Action cancelled' } };
    };
    assert.deepEqual((await rt.register(id, { name: 'svc' })).result, {});
    return rt;
  };
  const a = await make('svc-1');
  const b = await make('svc-2');
  const run = m.post('/api/runAction', { key: '/flow/x', input: 1 });
  await m.poll(async () => Boolean(a.run || b.run), (x) => x, { what: 'a replica running the call' });
  const cancel = await m.post('/api/cancelAction', { traceId });
  assert.equal(cancel.status, 200, cancel.text);
  assert.equal(cancel.json.result.data.message, 'Action cancelled');
  const r = await run;
  assert.equal(r.json.error.code, 1, r.text); // CANCELLED
  // Both replicas were asked; only the holder had the run.
  assert.equal(a.messages.filter((x) => x.method === 'cancelAction').length, 1);
  assert.equal(b.messages.filter((x) => x.method === 'cancelAction').length, 1);
  await m.assertHealthy();
});

test('a replica that keeps failing is ejected: a log line, a metric, its state, and no more balanced calls', async () => {
  const m = await startManager();
  await replica(m, 'good-1', 'svc');
  await replica(m, 'good-2', 'svc');
  const bad = await m.fakeRuntime('bad');
  bad.calls = 0;
  bad.handlers.runAction = () => {
    bad.calls += 1;
    return { error: { code: -32000, message: 'backend down', data: { code: 14, message: 'backend down' } } };
  };
  assert.deepEqual((await bad.register('bad', { name: 'svc' })).result, {});
  const rs = await calls(m, { key: '/flow/x', input: 1, runtimeName: 'svc' }, 120, 4);
  const failed = rs.filter((r) => r.status !== 200);
  // Five failures in a row eject it; its calls in flight then may fail too.
  assert.ok(failed.length >= 5 && failed.length <= 5 + 4, `${failed.length} failed`);
  assert.equal(bad.calls, failed.length);
  const svc = (await m.json('/api/services')).find((s) => s.name === 'svc');
  assert.equal(svc.replicas.find((x) => x.id === 'bad').state, 'ejected');
  const metrics = (await m.get('/metrics')).text.split('\n');
  assert.ok(metrics.includes('actor_host_replica_ejections_total 1'), metrics.filter((l) => l.includes('eject')).join('\n'));
  assert.match(m.child.describe(), /runtime bad ejected from balanced calls for 10 s/);
  await m.assertHealthy();
});

/** Runs the CLI to completion: {code, stdout, stderr}. */
const cli = (args, opts) => runCli(args, { timeoutMs: 60000, ...opts });

test('a host.yaml service with replicas: 3 restarted one replica at a time under load fails no call (restart, then SIGHUP with a new spec)', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-replicas-'));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const config = path.join(tmp, 'host.yaml');
  const yaml = (svcName) => `services:
  - name: svc
    command: [actor-host, --role, runtime, --demo, --name, ${svcName}]
    replicas: 3
  - name: other
    command: [actor-host, --role, runtime, --demo]
`;
  fs.writeFileSync(config, yaml('svc'));
  const m = await startManager(['--config', config]);
  const ids = ['svc-1', 'svc-2', 'svc-3'];
  for (const id of [...ids, 'other']) await m.waitForRuntime(id);
  const pids = async () => Object.fromEntries((await m.runtimes()).map((r) => [r.id, r.pid]));
  const before = await pids();
  const services = await m.json('/api/services');
  assert.deepEqual(services.map((s) => [s.name, s.replicas.length]).sort(), [['other', 1], ['svc', 3]]);
  // 16 callers of a 20 ms run by name while a restart goes on.
  const underLoad = async (during) => {
    let stop = false;
    const results = [];
    const loop = async () => {
      while (!stop) {
        const r = await m.post('/api/runAction', { key: '/flow/slow', input: { ms: 20 }, runtimeName: 'svc' });
        results.push(r);
      }
    };
    const load = Promise.all(Array.from({ length: 16 }, loop));
    try {
      return [await during(), results];
    } finally {
      stop = true;
      await load;
    }
  };
  const [restart, results] = await underLoad(() => cli(['restart', 'svc', '--manager', m.apiUrl]));
  assert.equal(restart.code, 0, restart.stderr);
  assert.match(restart.stdout, /Restarted svc: \["svc-1","svc-2","svc-3"\]/);
  const failed = results.filter((r) => r.status !== 200);
  assert.equal(failed.length, 0, `${failed.length} of ${results.length} failed: ${failed[0]?.text}`);
  assert.ok(results.length > 50, `only ${results.length} calls ran during the restart`);
  // Every replica is a new process, registered again under its id.
  const after_ = await pids();
  for (const id of ids) assert.notEqual(after_[id], before[id], id);
  // An unknown service is a clear error.
  const bad = await cli(['restart', 'nope', '--manager', m.apiUrl]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /no service nope among the ones this manager runs/);
  // SIGHUP after host.yaml changed svc's command: its replicas restart one
  // at a time with the new spec (they register the new name), under load
  // without a failed call; `other`, unchanged, keeps its process.
  fs.writeFileSync(config, yaml('svc-v2'));
  const [, reloadResults] = await underLoad(async () => {
    m.child.proc.kill('SIGHUP');
    await m.poll(
      () => m.runtimes(),
      (list) => ids.every((id) => list.find((r) => r.id === id)?.name === 'svc-v2'),
      { what: 'every replica of svc running the new spec', timeoutMs: 60000 }
    );
  });
  const reloadFailed = reloadResults.filter((r) => r.status !== 200);
  assert.equal(reloadFailed.length, 0, `${reloadFailed.length} of ${reloadResults.length} failed: ${reloadFailed[0]?.text}`);
  const reloaded = await pids();
  for (const id of ids) assert.notEqual(reloaded[id], after_[id], id);
  assert.equal(reloaded.other, before.other);
  await m.child.waitForLine(/services reload: service svc-1 changed/, 1000);
  await m.assertHealthy();
});

test('an idempotent action (retry_idempotent) that meets UNAVAILABLE runs again on another replica', async () => {
  const m = await startManager(['--retry-idempotent', '/flow/get*']);
  await replica(m, 'good', 'svc');
  const bad = await m.fakeRuntime('bad');
  bad.handlers.runAction = () => ({ error: { code: -32000, message: 'backend down', data: { code: 14, message: 'backend down' } } });
  assert.deepEqual((await bad.register('bad', { name: 'svc' })).result, {});
  // Until bad is ejected (five failures in a row) about half the calls meet it.
  const idem = await calls(m, { key: '/flow/getOrder', input: 1, runtimeName: 'svc' }, 20, 2);
  for (const r of idem) assert.equal(r.status, 200, r.text);
  const metrics = (await m.get('/metrics')).text.split('\n');
  const retries = Number(metrics.find((l) => l.startsWith('actor_host_idempotent_retries_total '))?.split(' ')[1]);
  assert.ok(retries >= 1, `retries: ${retries}`);
  const badRuns = bad.messages.filter((x) => x.method === 'runAction').length;
  assert.equal(retries, badRuns, 'every run that met bad was retried once');
  await m.assertHealthy();
});
