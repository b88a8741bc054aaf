#!/usr/bin/env node
// Soak of the manager (not in CI; see README.md here): runtimes (ours and the
// real Genkit JS runtime) and iii workers (iii-sdk and raw) connecting and
// dying, slow and vanishing callers (HTTP, NDJSON, /api/ws), floods and bad
// frames, and (doors.mjs) the gRPC door, the cluster port and the trace
// store with their callers and attackers, for --minutes. Samples the manager's RSS and open fds from /proc,
// checks /api/__stats live counts once the callers are gone and once
// everything is gone, and writes report.md + report.json.
//
//   node bench/soak/soak.mjs [--minutes 10] [--intensity 1] [--out DIR]
//        [--sample-ms 2000] [--flat-pct 10] [--flat-floor-mib 4]
//        [--no-genkit] [--no-iii] [--no-doors] [--manager-arg=--flag ...]
//
// Environment as for the interop tests: ACTOR_HOST_BIN, INTEROP_NODE_DIR
// (tests/interop/setup.sh BUILD_DIR prepares it). Exit: 0 pass, 1 a verdict
// failed, 2 the soak itself broke.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { cleanup, startCppRuntime, startGenkitRuntime, startManager } from '../../tests/interop/lib/harness.mjs';
import { writeReport } from './report.mjs';
import * as w from './workloads.mjs';
import * as d from './doors.mjs';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    intensity: { type: 'string', default: '1' },
    out: { type: 'string' },
    'sample-ms': { type: 'string', default: '2000' },
    'flat-pct': { type: 'string', default: '10' },
    'flat-floor-mib': { type: 'string', default: '4' },
    'no-genkit': { type: 'boolean', default: false },
    'no-iii': { type: 'boolean', default: false },
    'no-doors': { type: 'boolean', default: false },
    'manager-arg': { type: 'string', multiple: true, default: [] },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 17).map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}

const minutes = Number(args.minutes);
const intensity = Number(args.intensity);
if (!(minutes >= 1 && minutes <= 24 * 60) || !(intensity > 0 && intensity <= 10)) {
  console.error('soak: --minutes must be 1..1440 and --intensity in (0, 10]');
  process.exit(2);
}
const totalMs = minutes * 60000;
// Reserved at the end: the callers' last rounds, two leak checkpoints, the stop.
const tailMs = 20000;
const activeMs = totalMs - tailMs;
const sampleMs = Number(args['sample-ms']);
const outDir = args.out ?? path.join(os.tmpdir(), `actor-host-soak-${new Date().toISOString().replace(/[:.]/g, '-')}`);
fs.mkdirSync(outDir, { recursive: true });

const log = (msg) => console.log(`[soak +${((Date.now() - t0) / 1000).toFixed(0)}s] ${msg}`);
const t0 = Date.now();

// Never outlive the budget: whatever happens, everything started is killed
// (the harness SIGKILLs its children on exit).
const watchdog = setTimeout(() => {
  console.error('soak: watchdog: still running 2 minutes past --minutes; giving up');
  process.exit(2);
}, totalMs + 120000);
watchdog.unref();
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => (console.error(`soak: ${sig}`), process.exit(130)));

// -- sampling -----------------------------------------------------------------

// The trace store's file (with the doors): the manager maps it (SQLite
// mmap_size 256 MiB), so the pages of it that were read or written count in
// RSS. They are the kernel's page cache of a file bounded by the store's cap,
// not the manager's memory: the RSS verdict is judged without them.
let storePath = null;

/** Resident MiB of the mappings of the trace store's files (/proc/<pid>/smaps). */
function storeRssMiB(pid) {
  if (!storePath) return 0;
  let inStore = false;
  let kb = 0;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inStore = line.includes(storePath);
    else if (inStore && line.startsWith('Rss:')) kb += Number(line.match(/(\d+)/)[1]);
  }
  return kb / 1024;
}

function procSample(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (k) => Number(status.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  const rssMiB = kib('VmRSS') / 1024;
  const storeMiB = storeRssMiB(pid);
  return {
    rssMiB,
    hwmMiB: kib('VmHWM') / 1024,
    anonMiB: kib('RssAnon') / 1024,
    fileMiB: kib('RssFile') / 1024, // the mapped binary and libraries, and the trace store
    storeMiB,
    judgedMiB: rssMiB - storeMiB,
    threads: Number(status.match(/^Threads:\s+(\d+)/m)?.[1] ?? NaN),
    fds: fs.readdirSync(`/proc/${pid}/fd`).length,
  };
}

const samples = [];
async function sample(manager, phase) {
  const s = { t: (Date.now() - t0) / 1000, phase, ...procSample(manager.child.pid) };
  try {
    s.stats = await manager.stats();
  } catch (e) {
    s.statsError = e.message;
  }
  samples.push(s);
  return s;
}

// -- leak checkpoints ---------------------------------------------------------

const callerKeys = ['actors.pending_request', 'actors.caller_session', 'actors.invocation', 'actors.channel', 'actors.trigger_binding',
  'grpc.open_calls'];
// With the doors: the calls that crossed the cluster link (node a's side).
const clusterKeys = ['actors.remote_call', 'gateway.outbound', 'gateway.inbound'];
const peerKeys = ['actors.runtime_connection', 'actors.worker_connection', 'runtimes', 'sockets.runtime', 'sockets.worker'];
const get = (obj, p) => p.split('.').reduce((o, k) => o?.[k], obj);

/** Polls /api/__stats until `keys` are 0 and sockets.api <= 1 (the stats request itself), up to `ms`. */
async function checkpoint(manager, name, keys, ms = 15000) {
  const want = Object.fromEntries([...keys.map((k) => [k, 0]), ['sockets.api', (n) => n <= 1]]);
  const started = Date.now();
  let stats;
  let zero = false;
  try {
    stats = await manager.waitForStats(want, ms);
    zero = true;
  } catch {
    stats = await manager.stats().catch(() => null);
  }
  const counts = Object.fromEntries([...keys, 'sockets.api'].map((k) => [k, get(stats, k)]));
  log(`checkpoint ${name}: ${zero ? 'all zero' : 'NOT zero'} after ${Date.now() - started} ms ${JSON.stringify(counts)}`);
  return { name, zero, waitedMs: Date.now() - started, counts, stats };
}

// -- the run --------------------------------------------------------------------

async function main() {
  log(`${minutes} min (active ${activeMs / 1000}s), intensity ${intensity}, out ${outDir}`);
  const doorsOn = !args['no-doors'];
  const door = doorsOn ? await d.doorArgs(outDir, args['manager-arg']) : { args: [] };
  storePath = door.store ?? null;
  const manager = await startManager([...door.args, ...args['manager-arg']]);
  log(`manager pid ${manager.child.pid}: API ${manager.apiUrl}, reflection ${manager.reflectionUrl}, workers ${manager.workerUrl}`);
  const genkit = !args['no-genkit'];
  const stable = [startCppRuntime(manager.reflectionUrl, { id: 'stable-cpp' })];
  if (genkit) stable.push(startGenkitRuntime(manager.reflectionUrl, { id: 'stable-genkit' }));
  const runtimeIds = genkit ? ['stable-cpp', 'stable-genkit'] : ['stable-cpp'];
  for (const [i, id] of runtimeIds.entries()) await manager.waitForRuntime(id, { timeoutMs: 30000, child: stable[i] });
  const doors = doorsOn ? await d.startDoors(manager, { maxBodyBytes: managerFlag('--max-body-bytes', 8388608), store: door.store }) : null;
  if (doors) log(`doors: gRPC ${doors.grpcAddress}, cluster ${doors.clusterAddress}, node b pid ${doors.nodeB.child.pid} with stable-b, trace store ${door.store}`);
  const tally = new w.Tally();
  const ctx = new w.Ctx(manager, tally, { intensity, activeMs });
  const mute = await w.startMuteRuntime(ctx);
  const baseline = await sample(manager, 'baseline');
  log(`baseline: RSS ${baseline.rssMiB.toFixed(1)} MiB, ${baseline.fds} fds, ${baseline.threads} threads`);

  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await w.sleep(sampleMs);
      if (!sampling) break;
      if (!manager.child.running) throw new Error(`manager died: ${manager.child.describe()}`);
      const s = await sample(manager, 'active');
      if (samples.length % Math.max(1, Math.round(30000 / sampleMs)) === 0) {
        log(`RSS ${s.rssMiB.toFixed(1)} MiB, ${s.fds} fds, pending ${get(s.stats, 'actors.pending_request')}, callers ${get(s.stats, 'actors.caller_session')}`);
      }
    }
  })();
  const loads = [
    w.httpCallers(ctx, runtimeIds),
    w.vanishingCallers(ctx, runtimeIds),
    w.slowReaders(ctx, runtimeIds),
    w.wsCallers(ctx, runtimeIds),
    w.floods(ctx, runtimeIds),
    w.badHttp(ctx),
    w.runtimeChurn(ctx, { genkit }),
    w.fakeRuntimes(ctx),
    w.callersOfMute(ctx),
    ...(args['no-iii'] ? [] : [w.sdkWorkerChurn(ctx), w.rawWorkers(ctx)]),
    ...(doors ? [d.grpcCalls(ctx, doors), d.grpcAttacks(ctx, doors), d.clusterCalls(ctx), d.clusterAttacks(ctx, doors),
      d.traceReads(ctx), d.traceAttacks(ctx, doors)] : []),
  ];
  const stopTimer = setTimeout(() => (log('active phase over: stopping the workloads'), ctx.stop()), activeMs);
  const died = manager.child.exited.then((exit) => {
    if (!ctx.stopping) throw new Error(`manager exited ${JSON.stringify(exit)} during the soak: ${manager.child.describe()}`);
  });
  // The sampler and `died` only ever settle by failing; rounds in flight at
  // the stop get 20 s before their sockets are destroyed under them.
  await Promise.race([Promise.all(loads), died, sampler, w.sleep(activeMs + 20000)]);
  clearTimeout(stopTimer);
  ctx.stop();
  sampling = false;
  ctx.destroyAll();
  for (const c of ctx.children) c.kill('SIGKILL');

  const result = { minutes, intensity, activeMs, baseline, tally, checkpoints: [], outDir };
  // A: callers gone, the stable runtimes (the mute one too) still connected:
  // nothing may be left.
  const gone = doors ? [...callerKeys, ...clusterKeys] : callerKeys;
  result.checkpoints.push(await checkpoint(manager, 'callers gone', gone));
  await sample(manager, 'callers-gone');
  if (doors) {
    result.doors = { grpc: doors.grpcAddress, cluster: doors.clusterAddress, notes: doors.notes, metrics: await d.doorMetrics(manager) };
    try {
      result.doors.nodeBRssMiB = procSample(doors.nodeB.child.pid).rssMiB;
    } catch {}
  }
  // B: every runtime and worker gone too, and node b with stable-b.
  await mute.terminate();
  for (const c of stable) c.kill('SIGTERM');
  if (doors) Object.assign(result.doors, await d.stopDoors(doors));
  await Promise.all(stable.map((c) => Promise.race([c.exited, w.sleep(5000)])));
  result.checkpoints.push(await checkpoint(manager, 'everything gone', [...gone, ...peerKeys]));
  result.final = await sample(manager, 'everything-gone');
  manager.child.kill('SIGTERM');
  result.managerExit = await Promise.race([manager.child.exited, w.sleep(15000).then(() => 'still running 15 s after SIGTERM')]);
  result.managerLog = manager.child.logPath;
  result.warnings = countWarnings(manager.child.lines);
  if (doors) result.doors.store = d.removeStore(door.store);
  try {
    await cleanup();
  } catch (e) {
    result.cleanupProblems = e.message.slice(0, 2000);
  }
  return result;
}

/** The value of `--flag N` among the --manager-arg flags, else `fallback`. */
function managerFlag(flag, fallback) {
  const a = args['manager-arg'];
  const i = a.findIndex((x) => x === flag || x.startsWith(`${flag}=`));
  if (i < 0) return fallback;
  const v = a[i].includes('=') ? a[i].split('=')[1] : a[i + 1];
  return Number(v) > 0 ? Number(v) : fallback;
}

/** The manager's warn/error lines by their text with numbers and ids blanked, most frequent first. */
function countWarnings(lines) {
  const byText = {};
  for (const l of lines) {
    if (!/\b(warn|warning|error|critical)\b/i.test(l)) continue;
    const key = l
      .replace(/^\S+ \S+ /, '')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
      .replace(/\b[0-9a-f]{16,}\b/gi, '<hex>')
      .replace(/\d+/g, '#')
      .slice(0, 160);
    byText[key] = (byText[key] ?? 0) + 1;
  }
  return Object.entries(byText).sort((a, b) => b[1] - a[1]).slice(0, 15);
}

try {
  const result = await main();
  const { text, pass } = writeReport(result, samples, {
    flatPct: Number(args['flat-pct']),
    flatFloorMiB: Number(args['flat-floor-mib']),
  });
  console.log(text);
  log(`report: ${path.join(outDir, 'report.md')}`);
  process.exit(pass ? 0 : 1);
} catch (e) {
  console.error(`soak: ${e.stack ?? e}`);
  fs.writeFileSync(path.join(outDir, 'samples.json'), JSON.stringify(samples));
  try {
    await cleanup();
  } catch {}
  process.exit(2);
}
