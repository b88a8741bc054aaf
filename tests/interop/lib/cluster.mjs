// Cluster nodes for the interop tests: managers joined over their cluster
// ports on loopback (cluster.test.mjs, failover.test.mjs).
import net from 'node:net';
import { startManager } from './harness.mjs';

export const NOTHING_LEFT = { 'actors.pending_request': 0, 'actors.remote_call': 0, 'actors.caller_session': 0, 'gateway.outbound': 0, 'gateway.inbound': 0 };

/** Starts node `name`; `seeds` are other nodes; returns the manager with `.clusterAddress`. */
export async function startNode(name, { seeds = [], clusterPort = 0, port = 0, args = [], launcher = [], host, env = {} } = {}) {
  const flags = ['--node-name', name, '--cluster-port', String(clusterPort), '--cluster-heartbeat-interval', '500ms', ...args];
  if (seeds.length) flags.push('--cluster-seeds', seeds.map((s) => s.clusterAddress ?? s).join(','));
  if (host) flags.push('--bind', host);
  const m = await startManager(flags, { port, launcher, host, env });
  const line = await m.child.waitForLine(/Cluster node \S+: listening on (\S+)/, 10000);
  m.clusterAddress = line[1];
  m.name = name;
  return m;
}

export async function waitForMembers(m, names, { status = 'up', timeoutMs = 5000 } = {}) {
  return m.poll(
    () => m.json('/api/cluster'),
    (c) => names.every((n) => c.nodes.some((x) => x.name === n && x.status === status)),
    { timeoutMs, intervalMs: 25, what: `${m.name} to see ${names.join(',')} ${status}` }
  );
}

export async function waitForListed(m, qualifiedIds, timeoutMs = 5000) {
  return m.poll(
    () => m.runtimes(),
    (rts) => qualifiedIds.every((q) => rts.some((r) => r.qualifiedId === q)),
    { timeoutMs, intervalMs: 25, what: `${m.name} to list ${qualifiedIds.join(',')}` }
  );
}

export function runAction(m, runtimeId, key, input, extra = {}) {
  return m.post('/api/rpc/runAction', { key, input, runtimeId, ...extra });
}

/**
 * A TCP balancer in front of `backends` (ports on 127.0.0.1), as a
 * Kubernetes Service is for the Genkit runtime: each new connection goes to
 * the next backend that accepts it (round robin; a dead one is skipped).
 * Returns {url, close()}.
 */
export async function startBalancer(ports) {
  const sockets = new Set();
  let next = 0;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.pause();
    const attempt = (tries) => {
      if (tries === ports.length) return client.destroy();
      const port = ports[next++ % ports.length];
      const upstream = net.connect(port, '127.0.0.1');
      upstream.once('error', () => attempt(tries + 1));
      upstream.once('connect', () => {
        sockets.add(upstream);
        upstream.removeAllListeners('error');
        const end = () => { client.destroy(); upstream.destroy(); };
        upstream.on('error', end).on('close', end);
        client.on('error', end).on('close', end);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${server.address().port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
