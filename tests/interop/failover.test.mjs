// Runtimes that outlive their node (issue 33): our runtime given every
// node's URL moves at once when its node dies, and calls for the runtimes of
// a lost node wait for them to register elsewhere (the failover hold).
// Three manager processes on loopback, real SIGKILLs.
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { cleanup, startCppRuntime, waitForRegistered } from './lib/harness.mjs';
import { NOTHING_LEFT, runAction, startNode, waitForListed, waitForMembers } from './lib/cluster.mjs';

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
