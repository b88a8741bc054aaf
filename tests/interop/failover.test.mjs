// Runtimes that outlive their node (issue 33): our runtime given every
// node's URL moves at once when its node dies, and calls for the runtimes of
// a lost node wait for them to register elsewhere (the failover hold).
// Three manager processes on loopback, real SIGKILLs.
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { cleanup, runCli, startCppRuntime, startGenkitRuntime, tempDir, waitForRegistered, withTimeout } from './lib/harness.mjs';
import { NOTHING_LEFT, runAction, startBalancer, startNode, waitForListed, waitForMembers } from './lib/cluster.mjs';

afterEach(cleanup);
after(cleanup);

describe('failover', () => {
  test('our runtime given every node moves at once when its node dies: registered at the next, callable everywhere, listed once', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const rt = startCppRuntime([a, b, c].map((m) => m.reflectionUrl).join(','), { id: 'roamer' });
    const first = await waitForRegistered(rt);
    assert.equal(first[1], a.reflectionUrl);
    await waitForListed(c, ['a/roamer']);
    assert.equal((await runAction(c, 'roamer', '/flow/echo', 'before')).json.result, 'before');
    a.child.kill('SIGKILL');
    // The link drops with a's process: b is dialled at once, with the same id.
    const second = await waitForRegistered(rt, { count: 2, timeoutMs: 5000 });
    assert.equal(second[1], b.reflectionUrl);
    assert.equal(second[2], 'roamer');
    for (const m of [b, c]) {
      await m.poll(() => m.runtimes(), (rts) => rts.map((r) => r.qualifiedId).join() === 'b/roamer',
        { timeoutMs: 5000, intervalMs: 25, what: `${m.name} to list b/roamer only` });
    }
    const r = await runAction(c, 'roamer', '/flow/echo', 'after');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, 'after');
    for (const m of [b, c]) await m.waitForStats(NOTHING_LEFT);
  });

  test('our runtime given one node learns the others from its register answer and moves to one of them when that node dies', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const rt = startCppRuntime(a.reflectionUrl, { id: 'learner' });
    assert.equal((await waitForRegistered(rt))[1], a.reflectionUrl);
    const learned = await rt.waitForLine(/learned the cluster's other managers from \S+: (.*)$/, 5000);
    assert.deepEqual(learned[1].split(', ').sort(), [b.reflectionUrl, c.reflectionUrl].sort());
    a.child.kill('SIGKILL');
    const second = await waitForRegistered(rt, { count: 2, timeoutMs: 5000 });
    assert.ok([b.reflectionUrl, c.reflectionUrl].includes(second[1]), second[1]);
    const r = await runAction(c, 'learner', '/flow/echo', 'moved');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, 'moved');
  });

  test('a Genkit JS runtime behind a balanced URL (the Kubernetes Service pattern) reconnects through it to a live node when its node dies', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const port = (m) => Number(new URL(m.reflectionUrl).port);
    const service = await startBalancer([a, b, c].map(port));
    try {
      startGenkitRuntime(service.url, { id: 'gk' });
      await waitForListed(c, ['a/gk'], 30000);
      a.child.kill('SIGKILL');
      // Genkit reconnects after 500 ms; the Service hands it a live node.
      for (const m of [b, c]) {
        await m.poll(() => m.runtimes(), (rts) => rts.length === 1 && /^[bc]\/gk$/.test(rts[0].qualifiedId),
          { timeoutMs: 10000, intervalMs: 50, what: `${m.name} to list gk at a live node` });
      }
      const r = await runAction(c, 'gk', '/flow/echo', 'through the service');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result, 'through the service');
    } finally {
      await service.close();
    }
  });

  test('100 runtimes on a node that is killed: all registered at the others within 5 s, each listed once, nothing pending', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const urls = [a, b, c].map((m) => m.reflectionUrl).join(',');
    const ids = Array.from({ length: 100 }, (_, i) => `r${i}`);
    const rts = ids.map((id) => startCppRuntime(urls, { id, args: ['--log-level', 'info'] }));
    await Promise.all(rts.map((rt) => waitForRegistered(rt, { timeoutMs: 60000 })));
    await waitForListed(c, ids.map((id) => `a/${id}`), 20000);
    const killed = Date.now();
    a.child.kill('SIGKILL');
    const moved = await Promise.all(rts.map((rt) => waitForRegistered(rt, { count: 2, timeoutMs: 10000 }).then((m) => ({ url: m[1], at: Date.now() }))));
    const lastMs = Math.max(...moved.map((m) => m.at)) - killed;
    assert.ok(moved.every((m) => m.url === b.reflectionUrl), 'each moved to the next URL of its list');
    assert.ok(lastMs < 5000, `the last runtime registered again ${lastMs} ms after the kill`);
    for (const m of [b, c]) {
      const rts2 = await m.poll(() => m.runtimes(), (list) => list.length === 100,
        { timeoutMs: 5000, intervalMs: 50, what: `${m.name} to list 100 runtimes` });
      const listed = rts2.map((r) => r.qualifiedId).sort();
      assert.deepEqual(listed, ids.map((id) => `b/${id}`).sort(), `${m.name} lists each id once, at b`);
    }
    const r = await runAction(c, 'r42', '/flow/echo', 'still here');
    assert.equal(r.json.result, 'still here', r.text);
    for (const m of [b, c]) await m.waitForStats(NOTHING_LEFT);
  });

  test('a hung node (SIGSTOP): our runtime leaves it within its 6 s idle timeout and calls through another node succeed again', async () => {
    const a = await startNode('a', { args: ['--cluster-heartbeat-timeout', '3s'] });
    const b = await startNode('b', { seeds: [a], args: ['--cluster-heartbeat-timeout', '3s'] });
    const c = await startNode('c', { seeds: [a, b], args: ['--cluster-heartbeat-timeout', '3s'] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const rt = startCppRuntime([a, b, c].map((m) => m.reflectionUrl).join(','), { id: 'stuck' });
    await waitForRegistered(rt);
    await waitForListed(c, ['a/stuck']);
    const stopped = Date.now();
    a.child.kill('SIGSTOP');
    a.child.mayExit = true;
    try {
      const second = await waitForRegistered(rt, { count: 2, timeoutMs: 9000 });
      assert.equal(second[1], b.reflectionUrl);
      await rt.waitForLine(/lost the manager link/, 100);
      const r = await runAction(c, 'stuck', '/flow/echo', 'unstuck');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.result, 'unstuck');
      assert.ok(Date.now() - stopped < 9000);
    } finally {
      a.child.kill('SIGKILL');
    }
  });

  test('calls for a runtime of a lost node wait for it to register at another node (failover hold), else fail UNAVAILABLE', async () => {
    const hold = ['--failover-hold', '2s'];
    const a = await startNode('a', { args: hold });
    const b = await startNode('b', { seeds: [a], args: hold });
    const c = await startNode('c', { seeds: [a, b], args: hold });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const echoing = async (m, id) => {
      const rt = await m.fakeRuntime(id);
      rt.handlers.runAction = (params) => ({ result: { result: params.input, telemetry: { traceId: 'c'.repeat(32) } } });
      await rt.register(id);
      return rt;
    };
    await echoing(a, 'mover');
    await echoing(a, 'lost');
    await waitForListed(c, ['a/mover', 'a/lost']);
    a.child.kill('SIGKILL');
    await c.poll(() => c.runtimes(), (rts) => rts.length === 0, { timeoutMs: 5000, intervalMs: 25, what: "a's runtimes gone at c" });
    const started = Date.now();
    const held = runAction(c, 'mover', '/flow/x', 'held');
    const lost = runAction(c, 'lost', '/flow/x', 'never');
    await c.poll(() => c.get('/metrics'), (m) => /actor_host_failover_held 2\b/.test(m.text),
      { timeoutMs: 2000, intervalMs: 20, what: 'two calls held at c' });
    // mover registers at b: the call held for it goes there.
    await echoing(b, 'mover');
    const r = await held;
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, 'held');
    // lost never comes back: UNAVAILABLE once the hold (2 s from a's loss) is over.
    const l = await lost;
    assert.equal(l.status, 503, l.text);
    assert.equal(l.json.error.data.code, 14, l.text);
    assert.match(l.json.error.message, /lost was on a node that was lost and did not register again within the failover hold/);
    assert.ok(Date.now() - started < 2500, 'the hold ran past its 2 s');
    await c.child.waitForLine(/failover hold: lost did not come back within \d+ ms/, 1000);
    const metrics = (await c.get('/metrics')).text;
    assert.match(metrics, /actor_host_failover_holds_total 2\b/);
    assert.match(metrics, /actor_host_failover_hold_expired_total 1\b/);
    assert.match(metrics, /actor_host_failover_held 0\b/);
    for (const m of [b, c]) await m.waitForStats(NOTHING_LEFT);
  });
});

describe('clocks', () => {
  const libfaketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1';
  test('a node whose wall clock jumps an hour forward and two back stays a member and serves: no membership change, calls across it keep working', { skip: !fs.existsSync(libfaketime) && 'libfaketime is not installed (scripts/install-deps.sh)' }, async () => {
    // libfaketime moves b's wall clock (CLOCK_REALTIME) as an NTP step
    // would; the monotonic clock, which every timeout here uses, is left alone.
    const dir = tempDir('clock-jump');
    const offset = path.join(dir, 'offset');
    fs.writeFileSync(offset, '+0');
    const env = { LD_PRELOAD: libfaketime, FAKETIME_TIMESTAMP_FILE: offset, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
    const timeout = ['--cluster-heartbeat-timeout', '2s'];
    const a = await startNode('a', { args: timeout });
    const b = await startNode('b', { seeds: [a], args: timeout, env });
    const c = await startNode('c', { seeds: [a, b], args: timeout });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const echoing = async (m, id) => {
      const rt = await m.fakeRuntime(id);
      rt.handlers.runAction = (params) => ({ result: { result: params.input, telemetry: { traceId: 'f'.repeat(32) } } });
      await rt.register(id);
    };
    await echoing(a, 'on-a');
    await echoing(b, 'on-b');
    await waitForListed(c, ['a/on-a', 'b/on-b']);
    const changes = async (m) => Number((await m.get('/metrics')).text.match(/actor_host_cluster_membership_changes_total (\d+)/)[1]);
    const before = { a: await changes(a), c: await changes(c) };
    // Calls across b both ways for longer than the heartbeat timeout after each jump.
    const keepCalling = async (ms) => {
      const end = Date.now() + ms;
      for (let i = 0; Date.now() < end; i++) {
        const r1 = await runAction(c, 'on-b', '/flow/x', `c${i}`);
        assert.equal(r1.json?.result, `c${i}`, r1.text);
        const r2 = await runAction(b, 'on-a', '/flow/x', `b${i}`);
        assert.equal(r2.json?.result, `b${i}`, r2.text);
      }
    };
    for (const jump of ['+3600', '-3600', '+0']) {
      fs.writeFileSync(offset, jump);
      if (jump === '+3600') {
        // b's wall clock did jump: a runtime registered now is stamped an hour ahead.
        await echoing(b, 'late');
        const late = (await b.runtimes()).find((r) => r.id === 'late');
        assert.ok(Date.parse(late.timestamp) - Date.now() > 50 * 60 * 1000, late.timestamp);
      }
      await keepCalling(2500);
    }
    for (const m of [a, b, c]) {
      const cl = await m.json('/api/cluster');
      assert.deepEqual(cl.nodes.map((n) => `${n.name}:${n.status}`).sort(), ['a:up', 'b:up', 'c:up']);
    }
    assert.deepEqual({ a: await changes(a), c: await changes(c) }, before, 'no node saw b leave or rejoin');
    for (const m of [a, b, c]) await m.waitForStats(NOTHING_LEFT);
  });
});

describe('planned drain', () => {
  // 4 callers keep calling through c while a, which holds the runtime, drains.
  async function drainUnderLoad(a, b, c, rt, startDrain) {
    let stop = false;
    const failures = [];
    let ok = 0;
    const caller = async (n) => {
      for (let i = 0; !stop; i++) {
        const r = await runAction(c, 'roamer', '/flow/echo', `c${n}-${i}`);
        if (r.status === 200 && r.json.result === `c${n}-${i}`) ok++;
        else failures.push(`${r.status} ${r.text}`);
      }
    };
    const callers = [0, 1, 2, 3].map(caller);
    await c.poll(async () => ok, (n) => n >= 20, { timeoutMs: 5000, intervalMs: 10, what: 'calls flowing' });
    const drainStarted = Date.now();
    await startDrain();
    const exit = await withTimeout(a.child.exited, 8000, 'the drained node to exit');
    const drainMs = Date.now() - drainStarted;
    // The runtime moved: calls keep flowing through c to its new node.
    const second = await waitForRegistered(rt, { count: 2, timeoutMs: 5000 });
    assert.notEqual(second[1], a.reflectionUrl);
    const before = ok;
    await c.poll(async () => ok, (n) => n >= before + 20, { timeoutMs: 5000, intervalMs: 10, what: 'calls flowing after the move' });
    stop = true;
    await Promise.all(callers);
    assert.deepEqual(failures, [], `${failures.length} of ${failures.length + ok} calls failed`);
    return { exit, drainMs };
  }

  test('SIGTERM of the node that holds the runtime while 4 callers call it through another node: it moves, no call fails, the node exits 0', async () => {
    const a = await startNode('a', { args: ['--drain-timeout', '5s'] });
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const rt = startCppRuntime([a, b, c].map((m) => m.reflectionUrl).join(','), { id: 'roamer' });
    assert.equal((await waitForRegistered(rt))[1], a.reflectionUrl);
    await waitForListed(c, ['a/roamer']);
    const { exit, drainMs } = await drainUnderLoad(a, b, c, rt, async () => a.child.kill('SIGTERM'));
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(drainMs < 5000, `the drain took ${drainMs} ms`);
    await a.child.waitForLine(/drain: \d+ runtime link\(s\) closed with 1012/, 100);
    for (const m of [b, c]) await m.waitForStats(NOTHING_LEFT);
  });

  test('actor-host drain against a node does the same', async () => {
    const a = await startNode('a', { args: ['--drain-timeout', '5s'] });
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const rt = startCppRuntime([a, b, c].map((m) => m.reflectionUrl).join(','), { id: 'roamer' });
    assert.equal((await waitForRegistered(rt))[1], a.reflectionUrl);
    await waitForListed(c, ['a/roamer']);
    a.child.mayExit = true; // it stops by itself once drained
    const { exit } = await drainUnderLoad(a, b, c, rt, async () => {
      const r = await runCli(['drain', '--manager', a.apiUrl]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /node a is draining/);
    });
    assert.deepEqual(exit, { code: 0, signal: null });
    for (const m of [b, c]) await m.waitForStats(NOTHING_LEFT);
  });
});
