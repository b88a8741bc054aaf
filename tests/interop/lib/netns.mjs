// Cluster nodes in network namespaces (partition.netns.mjs,
// bench/failover_times.mjs --failures blackhole): each node in a namespace of
// its own, linked to this process's namespace (tests/interop/netns.sh gives
// the process one of its own, so the host's network is never touched), which
// routes between them. A partition is a set of `ip rule ... blackhole` rules
// here: packets across it vanish without a reset, as on a cut link.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { startNode } from './cluster.mjs';

const tag = `ah${process.pid % 100000}`;
export const names = ['a', 'b', 'c'];
const nsOf = (name) => `${tag}-${name}`;
const subnet = (name) => `10.99.${names.indexOf(name) + 1}`;
const hostOf = (name) => `${subnet(name)}.1`;
const ip = (...args) => execFileSync('ip', args, { stdio: ['ignore', 'pipe', 'pipe'] });

export function buildNetwork() {
  ip('link', 'set', 'lo', 'up');
  fs.writeFileSync('/proc/sys/net/ipv4/ip_forward', '1');
  for (const name of names) {
    const ns = nsOf(name);
    ip('netns', 'add', ns);
    ip('link', 'add', `v${name}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
    ip('addr', 'add', `${subnet(name)}.254/24`, 'dev', `v${name}`);
    ip('link', 'set', `v${name}`, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', ns, 'addr', 'add', `${hostOf(name)}/24`, 'dev', 'eth0');
    ip('-n', ns, 'link', 'set', 'eth0', 'up');
    ip('-n', ns, 'route', 'add', 'default', 'via', `${subnet(name)}.254`);
  }
}

export function removeNetwork() {
  for (const name of names) {
    try { ip('netns', 'del', nsOf(name)); } catch { /* not made */ }
  }
}

/**
 * Cuts `side` off from the other nodes (both ways), and with `fromHere` from
 * this namespace too (its processes: runtimes, callers); returns the heal.
 */
export function partition(side, { fromHere = false } = {}) {
  const rules = [];
  for (const x of side) {
    for (const y of names.filter((n) => !side.includes(n))) {
      rules.push(['from', `${subnet(x)}.0/24`, 'to', `${subnet(y)}.0/24`]);
      rules.push(['from', `${subnet(y)}.0/24`, 'to', `${subnet(x)}.0/24`]);
    }
    if (fromHere) {
      rules.push(['to', `${subnet(x)}.0/24`]);
      rules.push(['from', `${subnet(x)}.0/24`]);
    }
  }
  for (const r of rules) ip('rule', 'add', ...r, 'blackhole');
  return () => { for (const r of rules) ip('rule', 'del', ...r, 'blackhole'); };
}

/** Node `name` in its namespace, reachable from here at its address. */
export function startNsNode(name, seeds, args = []) {
  return startNode(name, {
    seeds,
    host: hostOf(name),
    launcher: ['ip', 'netns', 'exec', nsOf(name)],
    args: ['--insecure', '--cluster-insecure', ...args],
  });
}
