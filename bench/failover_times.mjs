// How long a cluster takes to notice a node's failure and to serve its
// runtime again (issue 33; the figures in docs/CLUSTER.md). Not in CI.
//
// Each trial: three managers with the default heartbeat (1 s interval, 5 s
// timeout) and failover hold (5 s); our runtime given the three URLs,
// registered at a; a stream from c to it in flight. Then a gets SIGKILL or
// SIGSTOP, or (blackhole) every packet to and from a vanishes, and we take
//   detect: from the signal until c's stream ends with UNAVAILABLE;
//   back:   from the signal until a call through c succeeds again (calls
//           are sent every 50 ms; those sent while it moves are held).
// Medians of --trials (10) per failure.
//
//   cd build/interop-node
//   ACTOR_HOST_BIN=$PWD/../actor-host INTEROP_NODE_DIR=$PWD node ../../bench/failover_times.mjs
// blackhole puts the nodes in network namespaces (root only):
//   ... bash ../../tests/interop/netns.sh node ../../bench/failover_times.mjs --failures blackhole
import { parseArgs } from 'node:util';
import { cleanup, startCppRuntime, startManager, waitForRegistered } from '../tests/interop/lib/harness.mjs';
import { runAction, waitForListed, waitForMembers } from '../tests/interop/lib/cluster.mjs';
import { buildNetwork, partition, removeNetwork, startNsNode } from '../tests/interop/lib/netns.mjs';

const { values: opts } = parseArgs({
  options: {
    trials: { type: 'string', default: '10' },
    failures: { type: 'string', default: 'SIGKILL,SIGSTOP' },
  },
});

async function node(name, seeds) {
  const flags = ['--node-name', name, '--cluster-port', '0'];
  if (seeds.length) flags.push('--cluster-seeds', seeds.map((s) => s.clusterAddress).join(','));
  const m = await startManager(flags);
  m.clusterAddress = (await m.child.waitForLine(/Cluster node \S+: listening on (\S+)/, 10000))[1];
  m.name = name;
  return m;
}

async function trial(signal) {
  const blackhole = signal === 'blackhole';
  const start = blackhole ? (name, seeds) => startNsNode(name, seeds) : node;
  const a = await start('a', []);
  const b = await start('b', [a]);
  const c = await start('c', [a, b]);
  for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c'], { timeoutMs: 15000 });
  const rt = startCppRuntime([a, b, c].map((m) => m.reflectionUrl).join(','), { id: 'mover' });
  await waitForRegistered(rt);
  await waitForListed(c, ['a/mover'], 10000);
  const s = await c.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 1000000, delayMs: 5 }, runtimeId: 'mover' }, { timeoutMs: 60000 });
  await s.lines.next(10000, 'first chunk');
  const t0 = Date.now();
  const heal = blackhole ? partition(['a'], { fromHere: true }) : null;
  if (!blackhole) a.child.kill(signal);
  if (signal === 'SIGSTOP') a.child.mayExit = true;
  const detect = (async () => {
    const rest = await s.lines.drain(60000, 'end of the stream');
    const last = rest.at(-1);
    if (last?.error?.data?.code !== 14) throw new Error(`the stream ended without UNAVAILABLE: ${JSON.stringify(last)}`);
    return Date.now() - t0;
  })();
  const back = (async () => {
    for (;;) {
      const r = await runAction(c, 'mover', '/flow/echo', 'x');
      if (r.status === 200) return Date.now() - t0;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const result = { signal, detectMs: await detect, backMs: await back };
  if (signal === 'SIGSTOP') a.child.kill('SIGKILL');
  heal?.();
  await cleanup();
  return result;
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const failures = opts.failures.split(',');
if (failures.includes('blackhole')) buildNetwork();
for (const signal of failures) {
  const runs = [];
  for (let i = 0; i < Number(opts.trials); i++) {
    const r = await trial(signal);
    runs.push(r);
    console.log(JSON.stringify(r));
  }
  console.log(`${signal}: callers see UNAVAILABLE after ${median(runs.map((r) => r.detectMs))} ms (median of ${runs.length}); ` +
    `callable again after ${median(runs.map((r) => r.backMs))} ms`);
}
if (failures.includes('blackhole')) removeNetwork();
