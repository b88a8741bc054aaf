// Partitions (issue 33): three nodes, each in a network namespace of its own
// (lib/netns.mjs); a partition blackholes the packets between the sides
// while this process still reaches every node.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import { cleanup } from './lib/harness.mjs';
import { NOTHING_LEFT, runAction, waitForListed, waitForMembers } from './lib/cluster.mjs';
import { buildNetwork, names, partition, removeNetwork, startNsNode } from './lib/netns.mjs';

// Quick detection for the test: beats every 500 ms, a node silent 2 s is unreachable.
const timeoutMs = 2000;
const nodeArgs = ['--cluster-heartbeat-timeout', `${timeoutMs}ms`, '--failover-hold', '1s'];

async function echoing(m, id) {
  const rt = await m.fakeRuntime(id);
  rt.handlers.runAction = (params) => ({ result: { result: `${id}:${params.input}`, telemetry: { traceId: 'e'.repeat(32) } } });
  await rt.register(id);
  return rt;
}

before(buildNetwork);
afterEach(cleanup);
after(async () => {
  await cleanup();
  removeNetwork();
});

describe('partition', () => {
  test('{a} | {b, c}: a is a minority (not ready, calls for the other side fail at once), b and c serve; healed, every directory has every runtime again within 2 heartbeat timeouts and an id registered on both sides keeps the majority\'s holder', async () => {
    const a = await startNsNode('a', [], nodeArgs);
    const b = await startNsNode('b', [a], nodeArgs);
    const c = await startNsNode('c', [a, b], nodeArgs);
    for (const m of [a, b, c]) await waitForMembers(m, names, { timeoutMs: 10000 });
    await echoing(a, 'on-a');
    await echoing(b, 'on-b');
    for (const m of [a, b, c]) await waitForListed(m, ['a/on-a', 'b/on-b']);
    assert.equal((await a.get('/readyz')).status, 200);

    const heal = partition(['a']);
    let healed = false;
    try {
      // a notices within the heartbeat timeout that it reaches 1 of 3 nodes.
      const ready = await a.poll(() => a.get('/readyz'), (r) => r.status === 503,
        { timeoutMs: timeoutMs + 3000, intervalMs: 50, what: 'a not ready' });
      assert.match(ready.text, /this node reaches 1 of the 3 nodes of its cluster \(a minority; keep-majority\)/);
      assert.match((await a.get('/metrics')).text, /actor_host_cluster_minority 1\b/);
      await a.child.waitForLine(/cluster: this node reaches 1 of the 3 nodes .*: not ready/, 1000);
      // A call for a runtime on the other side fails at once, UNAVAILABLE.
      const t0 = Date.now();
      const r = await runAction(a, 'on-b', '/flow/x', 1);
      assert.ok(Date.now() - t0 < 500, `the call took ${Date.now() - t0} ms`);
      assert.equal(r.status, 503, r.text);
      assert.equal(r.json.error.data.code, 14, r.text);
      assert.match(r.json.error.message, /runtime on-b is not on this side of a partition/);
      // a's own runtime still serves its callers.
      assert.equal((await runAction(a, 'on-a', '/flow/x', 2)).json.result, 'on-a:2');
      // The majority serves: ready, its runtimes callable, a's gone from its listing.
      for (const m of [b, c]) {
        await m.poll(() => m.runtimes(), (rts) => rts.map((x) => x.qualifiedId).join() === 'b/on-b',
          { timeoutMs: timeoutMs + 3000, intervalMs: 50, what: `${m.name} to drop a's runtimes` });
        assert.equal((await m.get('/readyz')).status, 200, `${m.name} ready`);
        assert.match((await m.get('/metrics')).text, /actor_host_cluster_minority 0\b/);
      }
      assert.equal((await runAction(c, 'on-b', '/flow/x', 3)).json.result, 'on-b:3');
      // One id registered on both sides while they are apart.
      const dupOnA = await echoing(a, 'dup');
      await echoing(b, 'dup');

      heal();
      healed = true;
      const healedAt = Date.now();
      // The majority's holder keeps the id; the copy a held while cut off yields (close 4409).
      for (const m of [a, b, c]) {
        await m.poll(() => m.runtimes(), (rts) => rts.map((x) => x.qualifiedId).sort().join() === 'a/on-a,b/dup,b/on-b',
          { timeoutMs: 2 * timeoutMs, intervalMs: 50, what: `${m.name} to list every runtime again, dup once` });
      }
      assert.equal((await dupOnA.closed).code, 4409);
      await a.child.waitForLine(/Runtime dup: registered here while this node was cut off from the majority/, 100);
      assert.equal((await runAction(a, 'dup', '/flow/x', 6)).json.result, 'dup:6');
      const convergedMs = Date.now() - healedAt;
      assert.ok(convergedMs < 2 * timeoutMs, `converged after ${convergedMs} ms`);
      await a.poll(() => a.get('/readyz'), (x) => x.status === 200, { timeoutMs: 1000, intervalMs: 50, what: 'a ready again' });
      assert.equal((await runAction(a, 'on-b', '/flow/x', 4)).json.result, 'on-b:4');
      assert.equal((await runAction(c, 'on-a', '/flow/x', 5)).json.result, 'on-a:5');
      for (const m of [a, b, c]) await m.waitForStats(NOTHING_LEFT);
    } finally {
      if (!healed) heal();
    }
  });
});
