// The Genkit TS manager baseline: RuntimeManagerV2 (@genkit-ai/tools-common
// 1.43.0) hosted in this Node process and driven through its in-process API
// (manager.runAction / cancelAction), which is how the Genkit CLI and Dev UI
// server call it. It has no caller-facing socket of its own, so the load runs
// here too: the CPU of this process is the manager's plus its callers'.
//
//   node bench/ts_driver.mjs --node-dir BUILD/interop-node [--port 0]
//                            [--front-door PORT [--no-commands]]
//
// Prints {"ready":true,"port":P,"pid":N}, then takes one JSON command per
// stdin line and answers each with one JSON line on stdout:
//   {"cmd":"wait","runtimes":N,"timeoutMs":T}  -> {"runtimes":n}
//   {"cmd":"phase", "scenario":"echo|open|stream|bidi|cancel", "callers":N,
//    "inflight":K, "seconds":S, "warmup":W, "rate":R, "streamN":N,
//    "system":"ts", "round":I, "runtimeId":ID, "runtimePid":PID}
//                                              -> the same result line as bench_load
//   {"cmd":"mem"}                              -> {"rssKb":..,"heapUsedKb":..,"runtimes":n} (after gc)
//   {"cmd":"exit"}
// Scenario semantics match bench/loadgen.cpp (see there); N callers x K in
// flight become N*K concurrent workers.
//
// --front-door PORT adds a WebSocket front door on ws://127.0.0.1:PORT/api/ws
// speaking the same JSON-RPC as actor-host's /api/ws (runAction with
// runActionState/streamChunk notifications, bidi input, cancelAction), a thin
// adapter over the same in-process API, so that bench_load can drive the TS
// manager exactly like actor-host ("ts-ws" in the report). --no-commands:
// ignore stdin and run until SIGTERM.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(`--${k}`) ? args[args.indexOf(`--${k}`) + 1] : d);
const nodeDir = opt('node-dir', process.env.BENCH_NODE_DIR);
const port = Number(opt('port', '0')) || undefined;
const frontDoor = Number(opt('front-door', '0')) || 0;
const readCommands = !args.includes('--no-commands');
if (!nodeDir) {
  console.error('ts_driver: --node-dir (with @genkit-ai/tools-common installed) is required');
  process.exit(2);
}
const require = createRequire(path.join(path.resolve(nodeDir), 'noop.js'));
const { RuntimeManager } = require('@genkit-ai/tools-common/manager');
const { forceStderr, logger } = require('@genkit-ai/tools-common/utils');
forceStderr();
logger.level = 'warn';
const toolsVersion = JSON.parse(
  fs.readFileSync(path.join(nodeDir, 'node_modules/@genkit-ai/tools-common/package.json'), 'utf8')
).version;

const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const now = () => performance.now();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TICK = 100; // USER_HZ
const procCpuMs = (pid) => {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return ((Number(rest[11]) + Number(rest[12])) * 1000) / TICK; // utime+stime
  } catch {
    return -1;
  }
};
const procRssKb = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
  } catch {
    return -1;
  }
};
const machineBusyMs = () => {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const idle = f[3] + f[4];
  return ((f.reduce((a, b) => a + b, 0) - idle) * 1000) / TICK;
};
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : -1);

const manager = await RuntimeManager.create({
  projectRoot: path.resolve(nodeDir),
  experimentalReflectionV2: true,
  reflectionV2Port: port,
});
process.on('uncaughtException', (e) => {
  console.error('ts_driver:', e);
  process.exit(1);
});
process.on('unhandledRejection', (e) => {
  console.error('ts_driver: unhandled rejection', e);
});

function channel() {
  const q = [];
  let wake = null;
  let done = false;
  const kick = () => {
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  };
  return {
    push(x) {
      q.push(x);
      kick();
    },
    end() {
      done = true;
      kick();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (q.length) {
          yield q.shift();
          continue;
        }
        if (done) return;
        await new Promise((r) => (wake = r));
      }
    },
  };
}

async function phase(p) {
  const scenario = p.scenario;
  const runtimeId = p.runtimeId;
  const workers = Math.max(1, (p.callers ?? 1) * (p.inflight ?? 1));
  const streamN = p.streamN ?? 10000;
  const drainMs = (p.drainTimeout ?? 10) * 1000;
  let ph = (p.warmup ?? 1) > 0 ? 'warmup' : 'measure';
  const issuing = () => ph === 'warmup' || ph === 'measure';
  const lat = [];
  const ack = [];
  let ops = 0;
  let errors = 0;
  let orderErrors = 0;
  let firstError = '';
  let lateSkipped = 0;
  let sentMeasure = 0;
  let inflight = 0;
  const error = (m) => {
    if (ph === 'measure') errors++;
    if (!firstError) firstError = String(m).slice(0, 300);
  };
  const record = (ms) => {
    if (ph === 'measure') {
      ops++;
      lat.push(ms * 1000);
    }
  };
  let snap0;
  let snap1;
  const streamCancels = new Set(); // of the streams running
  const snapshot = () => ({ t: now(), self: procCpuMs(process.pid), rt: procCpuMs(p.runtimePid), busy: machineBusyMs() });
  if (ph === 'measure') snap0 = snapshot();
  let seq = 0;
  const echo = async () => {
    const i = seq++;
    const s = now();
    inflight++;
    if (ph === 'measure') sentMeasure++;
    try {
      const r = await manager.runAction({ key: '/flow/echo', input: { i, s: 'hello' }, runtimeId });
      if (r?.result?.i !== i) error(`echo mismatch ${JSON.stringify(r)}`);
      else record(now() - s);
    } catch (e) {
      error(`echo failed: ${e?.message}`);
    } finally {
      inflight--;
    }
  };
  const worker = {
    echo: async () => {
      while (issuing()) await echo();
    },
    stream: async () => {
      while (issuing()) {
        let got = 0;
        const s = now();
        // Cancelled at the end of the window, as bench_load does (see
        // cancel_streams there); before its trace id came, when it comes.
        let traceId;
        let cancelWanted = false;
        const cancel = () => {
          cancelWanted = true;
          if (!traceId) return;
          streamCancels.delete(cancel);
          manager.cancelAction({ traceId, runtimeId }).catch((e) => {
            // Refused only if the stream ended first (its own answer says how).
            if (!/already completed/i.test(e?.message ?? '')) error(`stream cancel failed: ${e?.message}`);
          });
        };
        streamCancels.add(cancel);
        const onTrace = (t) => {
          traceId = t;
          if (cancelWanted) cancel();
        };
        try {
          const r = await manager.runAction({ key: '/flow/streamCount', input: { n: streamN }, runtimeId }, (c) => {
            if (c?.i !== got) orderErrors++;
            if (got === 0 && ph === 'measure') lat.push((now() - s) * 1000);
            got++;
            if (ph === 'measure') ops++;
          }, onTrace);
          if (r?.result?.count !== streamN || got !== streamN) error(`stream ended after ${got}: ${JSON.stringify(r)}`);
        } catch (e) {
          if (!(cancelWanted && /cancel/i.test(e?.message ?? ''))) error(`stream failed: ${e?.message}`);
        } finally {
          streamCancels.delete(cancel);
        }
      }
    },
    bidi: async () => {
      while (issuing()) {
        const ch = channel();
        let q = 0;
        let sent = now();
        const onChunk = (c) => {
          if (c?.q !== q) {
            orderErrors++;
            return;
          }
          record(now() - sent);
          q++;
          if (issuing()) {
            sent = now();
            ch.push({ q });
          } else ch.end();
        };
        ch.push({ q: 0 });
        try {
          const r = await manager.runAction({ key: '/flow/bidiEcho', runtimeId }, onChunk, undefined, ch);
          if (r?.result?.count !== q) error(`bidi count ${JSON.stringify(r)} after ${q}`);
        } catch (e) {
          error(`bidi failed: ${e?.message}`);
        }
      }
    },
    cancel: async () => {
      while (issuing()) {
        let onTrace;
        const traceP = new Promise((r) => (onTrace = r));
        const run = manager.runAction({ key: '/flow/slow', input: {}, runtimeId }, undefined, onTrace);
        run.catch(() => {});
        const traceId = await traceP;
        const t1 = now();
        try {
          const r = await manager.cancelAction({ traceId, runtimeId });
          if (r?.message !== 'Action cancelled') error(`cancel answer ${JSON.stringify(r)}`);
          else if (ph === 'measure') ack.push((now() - t1) * 1000);
        } catch (e) {
          error(`cancel failed: ${e?.message}`);
        }
        try {
          await run;
          error('slow run was not cancelled');
        } catch (e) {
          if (/cancel/i.test(e?.message ?? '')) record(now() - t1);
          else error(`slow run failed: ${e?.message}`);
        }
      }
    },
  };
  let running;
  if (scenario === 'open') {
    const rate = p.rate ?? 1000;
    const maxInflight = p.maxInflight ?? 20000;
    const t0 = now();
    let sent = 0;
    const pending = new Set();
    running = new Promise((resolve) => {
      const tick = () => {
        if (!issuing()) return resolve(Promise.all(pending));
        const due = Math.floor(((now() - t0) / 1000) * rate);
        while (sent < due) {
          sent++;
          if (inflight >= maxInflight) {
            if (ph === 'measure') lateSkipped++;
            continue;
          }
          const pr = echo();
          pending.add(pr);
          pr.finally(() => pending.delete(pr));
        }
        setTimeout(tick, 1);
      };
      tick();
    });
  } else {
    const fn = worker[scenario];
    if (!fn) return { system: p.system, scenario, round: p.round, ok: false, note: `unknown scenario ${scenario}` };
    running = Promise.all(Array.from({ length: workers }, fn));
  }
  // The measured window starts when the warm-up timer actually fires and
  // lasts `seconds` from there (a busy event loop delays timers).
  await new Promise((resolve) => {
    const measure = () => {
      ph = 'measure';
      snap0 = snapshot();
      setTimeout(resolve, p.seconds * 1000);
    };
    if (ph === 'warmup') setTimeout(measure, p.warmup * 1000);
    else setTimeout(resolve, p.seconds * 1000);
  });
  snap1 = snapshot();
  ph = 'drain';
  for (const cancel of [...streamCancels]) cancel();
  const drained = await Promise.race([running.then(() => true), sleep(drainMs).then(() => false)]);
  ph = 'done';
  const wallMs = snap1.t - snap0.t;
  lat.sort((a, b) => a - b);
  ack.sort((a, b) => a - b);
  const r1 = (x) => Math.round(x * 10) / 10;
  const unit = scenario === 'stream' ? 'chunks' : scenario === 'bidi' ? 'echoes' : scenario === 'cancel' ? 'cancels' : 'calls';
  const cpuSut = snap1.self - snap0.self;
  const cpuRt = snap1.rt - snap0.rt;
  const busy = snap1.busy - snap0.busy;
  const res = {
    system: p.system ?? 'ts',
    scenario,
    round: p.round ?? 0,
    callers: p.callers ?? 1,
    inflight: p.inflight ?? 1,
  };
  if (scenario === 'open') Object.assign(res, { rate_target: p.rate, late_skipped: lateSkipped, sent: sentMeasure });
  if (scenario === 'stream') res.stream_n = streamN;
  Object.assign(res, {
    wall_ms: r1(wallMs),
    ops,
    unit,
    rate: r1((ops * 1000) / wallMs),
    errors,
    order_errors: orderErrors,
    lat_us: { n: lat.length, p50: r1(pct(lat, 50)), p90: r1(pct(lat, 90)), p99: r1(pct(lat, 99)), p999: r1(pct(lat, 99.9)), max: r1(pct(lat, 100)) },
  });
  if (scenario === 'cancel') res.ack_us = { n: ack.length, p50: r1(pct(ack, 50)), p99: r1(pct(ack, 99)) };
  res.procs = {
    sut: { pid: process.pid, cpu_pct: r1((cpuSut * 100) / wallMs), cpu_us_per_op: ops ? Math.round((cpuSut * 1000000) / ops) / 1000 : 0, rss_kb: procRssKb(process.pid) },
    runtime: { pid: p.runtimePid, cpu_pct: r1((cpuRt * 100) / wallMs), cpu_us_per_op: ops ? Math.round((cpuRt * 1000000) / ops) / 1000 : 0, rss_kb: procRssKb(p.runtimePid) },
  };
  res.caller_in_sut = true;
  res.machine_busy_pct = r1((busy * 100) / wallMs);
  res.foreign_pct = r1(Math.max(0, ((busy - cpuSut - cpuRt) * 100) / wallMs));
  res.ok = drained && errors === 0 && orderErrors === 0 && ops > 0;
  if (!drained || firstError) res.note = (firstError || `drain timed out with ${inflight} in flight`).replace(/["\\\n]/g, "'");
  res.tools_common = toolsVersion;
  return res;
}

// ---- optional WebSocket front door (same protocol as actor-host's /api/ws) ----
function startFrontDoor(apiPort) {
  const { WebSocketServer } = require('ws');
  const wss = new WebSocketServer({ host: '127.0.0.1', port: apiPort, path: '/api/ws', perMessageDeflate: false });
  wss.on('connection', (ws) => {
    const inputs = new Map(); // caller request id -> channel
    const send = (o) => ws.send(JSON.stringify(o));
    const fail = (id, e) =>
      send({ jsonrpc: '2.0', error: { code: -32000, message: e?.message ?? String(e), data: e?.data }, id });
    ws.on('message', (data) => {
      let m;
      try {
        m = JSON.parse(data.toString());
      } catch {
        return send({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      }
      const p = m.params ?? {};
      if (m.method === 'sendInputStreamChunk') return inputs.get(p.requestId)?.push(p.chunk);
      if (m.method === 'endInputStream') {
        inputs.get(p.requestId)?.end();
        return inputs.delete(p.requestId);
      }
      if (m.id === undefined) return;
      if (m.method === 'runAction') {
        const { stream, streamInput, ...req } = p;
        const id = m.id;
        let ch;
        if (streamInput) inputs.set(id, (ch = channel()));
        manager
          .runAction(
            req,
            stream ? (chunk) => send({ jsonrpc: '2.0', method: 'streamChunk', params: { requestId: id, chunk } }) : undefined,
            (traceId) => send({ jsonrpc: '2.0', method: 'runActionState', params: { requestId: id, state: { traceId } } }),
            ch
          )
          .then((r) => send({ jsonrpc: '2.0', result: r, id }), (e) => fail(id, e))
          .finally(() => inputs.delete(id));
      } else if (m.method === 'cancelAction') {
        manager.cancelAction(p).then((r) => send({ jsonrpc: '2.0', result: r, id: m.id }), (e) => fail(m.id, e));
      } else {
        send({ jsonrpc: '2.0', error: { code: -32601, message: `Method not found: ${m.method}` }, id: m.id });
      }
    });
  });
  return new Promise((r) => wss.on('listening', r));
}
if (frontDoor) await startFrontDoor(frontDoor);

out({ ready: true, port: manager.port, api_port: frontDoor || undefined, pid: process.pid, node: process.version, tools_common: toolsVersion });

if (!readCommands) {
  const stop = async () => {
    await manager.stop();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await new Promise(() => {});
}
const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  if (!line.trim()) continue;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    out({ error: 'bad command' });
    continue;
  }
  if (cmd.cmd === 'wait') {
    const t0 = now();
    while (manager.listRuntimes().length < cmd.runtimes && now() - t0 < (cmd.timeoutMs ?? 30000)) await sleep(20);
    out({ runtimes: manager.listRuntimes().length });
  } else if (cmd.cmd === 'phase') {
    out(await phase(cmd));
  } else if (cmd.cmd === 'mem') {
    global.gc?.();
    await sleep(200);
    global.gc?.();
    const mu = process.memoryUsage();
    out({ rssKb: procRssKb(process.pid), heapUsedKb: Math.round(mu.heapUsed / 1024), runtimes: manager.listRuntimes().length, gc: !!global.gc });
  } else if (cmd.cmd === 'exit') {
    break;
  } else {
    out({ error: `unknown command ${cmd.cmd}` });
  }
}
await manager.stop();
process.exit(0);
