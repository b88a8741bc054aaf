// Test peer: verbatim copy of the shared harness ../shared/peers/genkit/manager.mjs (only this line added; keep in sync).
// Drives the REAL Genkit Reflection V2 manager (RuntimeManagerV2 from
// @genkit-ai/tools-common 1.43.0) against whatever runtime connects to it,
// runs a scenario and prints one JSON line per step on stdout.
//
// Usage:
//   node manager.mjs <port> [runtimeId] [--only a,b,c] [--wait-ms N]
//                    [--no-telemetry] [--keep-open] [--list-steps]
//
//   <port>       port of the manager's WebSocket server (0 = let the manager
//                pick from 3200..3400, as the CLI does)
//   [runtimeId]  id of the runtime to target (the id sent in `register`);
//                default: the first runtime that registers
//   --only       comma-separated subset of steps (see --list-steps)
//   --no-telemetry  do not start the fake telemetry sink (register result
//                then carries no telemetryServerUrl)
//
// The runtime is expected to be harness/runtime.mjs (or a compatible
// implementation exposing the same actions).
// Exit code: 0 iff every selected step behaved as expected.

import http from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

// The ESM build of @genkit-ai/tools-common 1.43.0 is not loadable from Node ESM
// (extensionless relative imports -> ERR_MODULE_NOT_FOUND), so load the CJS
// build, exactly as genkit-cli does.
const require = createRequire(import.meta.url);
const { RuntimeManager, RuntimeEvent } = require('@genkit-ai/tools-common/manager');
const { forceStderr, logger } = require('@genkit-ai/tools-common/utils');

forceStderr(); // keep tools-common logging off stdout
logger.level = process.env.DEBUG ? 'debug' : 'warn';

const argv = process.argv.slice(2);
const positional = [];
const opts = { only: null, waitMs: 30000, telemetry: true, keepOpen: false };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--only') opts.only = argv[++i].split(',').filter(Boolean);
  else if (a === '--wait-ms') opts.waitMs = Number(argv[++i]);
  else if (a === '--no-telemetry') opts.telemetry = false;
  else if (a === '--keep-open') opts.keepOpen = true;
  else if (a === '--list-steps') opts.listSteps = true;
  else positional.push(a);
}
const port = Number(positional[0] ?? 0);
let targetId = positional[1];

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TRACE_ID_RE = /^[0-9a-f]{32}$/;

function errInfo(e) {
  return {
    name: e?.name,
    message: e?.message,
    data: e?.data
      ? {
          ...e.data,
          stack: e.data.stack ? '<stack>' : e.data.stack,
          details: e.data.details
            ? { ...e.data.details, stack: e.data.details.stack ? '<stack>' : undefined }
            : e.data.details,
          data: e.data.data
            ? {
                genkitErrorMessage: e.data.data.genkitErrorMessage,
                genkitErrorDetails: e.data.data.genkitErrorDetails
                  ? {
                      ...e.data.data.genkitErrorDetails,
                      stack: e.data.data.genkitErrorDetails.stack ? '<stack>' : undefined,
                    }
                  : e.data.data.genkitErrorDetails,
              }
            : e.data.data,
        }
      : undefined,
  };
}

// Minimal fake telemetry server: the runtime POSTs traces to
// <url>/api/traces and logs to <url>/api/otlp.
const telemetry = { traces: 0, otlp: 0, other: 0 };
let telemetryServer;
let telemetryServerUrl;
if (opts.telemetry) {
  telemetryServer = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/api/traces') telemetry.traces++;
      else if (req.url === '/api/otlp') telemetry.otlp++;
      else telemetry.other++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise((r) => telemetryServer.listen(0, '127.0.0.1', r));
  telemetryServerUrl = `http://127.0.0.1:${telemetryServer.address().port}`;
}

// Inputs used by several steps.
const ORDER = {
  customer: {
    name: 'Ada',
    email: 'ada@example.com',
    address: { street: '1 Main St', city: 'Springfield', zip: '12345' },
  },
  items: [
    { sku: 'A-1', qty: 2, unitPrice: 3.5 },
    { sku: 'B-2', qty: 1, unitPrice: 10 },
  ],
  tags: ['x'],
};

function expect(cond, msg, failures) {
  if (!cond) failures.push(msg);
}

async function* pushable(items, delayMs) {
  for (const it of items) {
    await sleep(delayMs);
    yield it;
  }
}

const steps = {
  async runtimes(m) {
    const f = [];
    const list = m.listRuntimes();
    const rt = m.getRuntimeById(targetId);
    expect(!!rt, `runtime ${targetId} not listed`, f);
    expect(typeof rt?.pid === 'number', 'pid missing', f);
    expect(rt?.reflectionServerUrl === `ws://localhost:${m.port}`, 'reflectionServerUrl', f);
    return { f, detail: { runtimes: list } };
  },

  async listActions(m) {
    const f = [];
    const actions = await m.listActions({ runtimeId: targetId });
    const keys = Object.keys(actions).sort();
    for (const k of [
      '/flow/echo',
      '/flow/streamCount',
      '/flow/slow',
      '/flow/fail',
      '/flow/createOrder',
      '/flow/whoami',
      '/flow/chat',
      '/flow/bidiSum',
      '/tool/add',
    ]) {
      expect(keys.includes(k), `missing action ${k}`, f);
    }
    const co = actions['/flow/createOrder'];
    expect(co?.key === '/flow/createOrder', 'key field', f);
    expect(co?.name === 'createOrder', 'name field', f);
    expect(co?.inputSchema?.type === 'object', 'createOrder.inputSchema', f);
    expect(co?.outputSchema?.type === 'object', 'createOrder.outputSchema', f);
    expect(co?.metadata?.category === 'harness', 'createOrder.metadata passthrough', f);
    expect(actions['/flow/bidiSum']?.metadata?.bidi === true, 'bidiSum.metadata.bidi', f);
    expect(actions['/flow/echo']?.inputSchema === undefined, 'echo has no inputSchema', f);
    return {
      f,
      detail: {
        keys,
        sample: {
          '/flow/echo': actions['/flow/echo'],
          '/flow/createOrder': co,
          '/flow/bidiSum': actions['/flow/bidiSum'],
        },
      },
    };
  },

  async runAction(m) {
    const f = [];
    const input = { hello: 'world', n: [1, 2, 3], nested: { ok: true, nil: null } };
    let early;
    const r = await m.runAction(
      { key: '/flow/echo', input, runtimeId: targetId },
      undefined,
      (tid) => (early = tid)
    );
    expect(isDeepStrictEqual(r.result, input), 'echo result != input', f);
    expect(TRACE_ID_RE.test(r.telemetry?.traceId ?? ''), 'telemetry.traceId', f);
    expect(early === r.telemetry?.traceId, 'early traceId (runActionState) == final traceId', f);
    const r2 = await m.runAction({ key: '/flow/createOrder', input: ORDER, runtimeId: targetId });
    expect(r2.result?.total === 17 && r2.result?.priority === 'normal', 'createOrder output', f);
    const r3 = await m.runAction({ key: '/tool/add', input: { a: 2, b: 40 }, runtimeId: targetId });
    expect(r3.result === 42, 'tool add', f);
    return { f, detail: { echo: r, createOrder: r2, add: r3, earlyTraceId: early } };
  },

  async stream(m) {
    const f = [];
    const chunks = [];
    const r = await m.runAction(
      { key: '/flow/streamCount', input: { n: 5 }, runtimeId: targetId },
      (c) => chunks.push(c)
    );
    expect(chunks.length === 5, `got ${chunks.length} chunks`, f);
    expect(isDeepStrictEqual(chunks, [0, 1, 2, 3, 4].map((i) => ({ i }))), 'chunk order/content', f);
    expect(isDeepStrictEqual(r.result, { count: 5, sum: 10 }), 'stream result', f);
    return { f, detail: { chunks, result: r } };
  },

  async cancel(m) {
    const f = [];
    let cancelResult;
    let traceId;
    const t0 = Date.now();
    let runErr;
    const run = m
      .runAction({ key: '/flow/slow', input: { ms: 20000 }, runtimeId: targetId }, undefined, (tid) => {
        traceId = tid;
        m.cancelAction({ traceId: tid, runtimeId: targetId }).then(
          (x) => (cancelResult = x),
          (e) => (cancelResult = { error: errInfo(e) })
        );
      })
      .then(
        (r) => ({ unexpectedSuccess: r }),
        (e) => ((runErr = e), { error: errInfo(e) })
      );
    const res = await run;
    const elapsed = Date.now() - t0;
    await sleep(50);
    expect(!!traceId, 'no traceId from runActionState', f);
    expect(isDeepStrictEqual(cancelResult, { message: 'Action cancelled' }), 'cancelAction result', f);
    expect(runErr?.data?.code === 1, 'cancelled run error code should be 1 (CANCELLED)', f);
    expect(runErr?.message === 'Action was cancelled', 'cancel message', f);
    expect(runErr?.data?.details?.traceId === traceId, 'cancel error details.traceId', f);
    expect(elapsed < 5000, `cancel took ${elapsed}ms`, f);
    // Cancelling again / unknown traceId.
    let again;
    try {
      again = { result: await m.cancelAction({ traceId, runtimeId: targetId }) };
    } catch (e) {
      again = { error: errInfo(e) };
    }
    expect(again.error?.message === 'Action not found or already completed', 'second cancel error', f);
    return { f, detail: { traceId, cancelResult, runResult: res, elapsedMs: elapsed, cancelAgain: again } };
  },

  async errors(m) {
    const f = [];
    const cap = async (req) => {
      try {
        return { unexpectedSuccess: await m.runAction({ ...req, runtimeId: targetId }) };
      } catch (e) {
        return { error: errInfo(e), raw: e };
      }
    };
    const plain = await cap({ key: '/flow/fail', input: { message: 'kaboom' } });
    expect(plain.raw?.message === 'kaboom', 'plain error message', f);
    expect(plain.raw?.data?.code === 13, 'plain error code 13 INTERNAL', f);
    expect(TRACE_ID_RE.test(plain.raw?.data?.details?.traceId ?? ''), 'plain error traceId', f);
    expect(typeof plain.raw?.data?.details?.stack === 'string', 'plain error stack', f);
    const status = await cap({ key: '/flow/fail', input: { status: 'FAILED_PRECONDITION', message: 'nope' } });
    expect(status.raw?.data?.code === 9, 'GenkitError FAILED_PRECONDITION -> 9', f);
    expect(status.raw?.message === 'FAILED_PRECONDITION: nope', 'GenkitError message', f);
    const invalid = await cap({ key: '/flow/createOrder', input: { customer: { name: '' }, items: [] } });
    expect(invalid.raw?.data?.code === 3, 'schema validation -> 3 INVALID_ARGUMENT', f);
    expect(invalid.raw?.data?.details?.traceId === undefined, 'validation error has no traceId', f);
    const missing = await cap({ key: '/flow/doesNotExist', input: 1 });
    expect(missing.raw?.message === 'action /flow/doesNotExist not found', 'unknown action message', f);
    expect(missing.raw?.data?.code === undefined, 'unknown action: no Status in error.data', f);
    for (const x of [plain, status, invalid, missing]) delete x.raw;
    return { f, detail: { plain, status, invalid, missing } };
  },

  async bidi(m) {
    const f = [];
    const chunks = [];
    const r = await m.runAction(
      { key: '/flow/chat', runtimeId: targetId },
      (c) => chunks.push(c),
      undefined,
      pushable([{ text: 'hi' }, { text: 'how are you' }, { text: 'bye' }], 30)
    );
    expect(chunks.length === 3, `chat chunks ${chunks.length}`, f);
    expect(chunks[1]?.reply === 'HOW ARE YOU', 'chat chunk content', f);
    expect(r.result?.turns === 3, 'chat result', f);
    const chunks2 = [];
    const r2 = await m.runAction(
      { key: '/flow/bidiSum', runtimeId: targetId },
      (c) => chunks2.push(c),
      undefined,
      pushable([1, 2, 3, 4], 10)
    );
    expect(
      isDeepStrictEqual(chunks2, [1, 3, 6, 10].map((runningTotal) => ({ runningTotal }))),
      'bidiSum chunks',
      f
    );
    expect(isDeepStrictEqual(r2.result, { total: 10, count: 4 }), 'bidiSum result', f);
    return { f, detail: { chat: { chunks, result: r }, bidiSum: { chunks: chunks2, result: r2 } } };
  },

  async listValues(m) {
    const f = [];
    const dm = await m.listValues({ type: 'defaultModel', runtimeId: targetId });
    const mw = await m.listValues({ type: 'middleware', runtimeId: targetId });
    let bad;
    try {
      bad = { result: await m.listValues({ type: 'prompt', runtimeId: targetId }) };
    } catch (e) {
      bad = { error: errInfo(e) };
    }
    expect(dm?.defaultModel?.name === 'harness/fake-model', 'defaultModel value', f);
    expect(mw?.harnessTag?.name === 'harnessTag', 'middleware value', f);
    expect(/not supported/.test(bad.error?.message ?? ''), 'unsupported type error', f);
    return { f, detail: { defaultModel: dm, middleware: mw, unsupported: bad } };
  },

  async context(m) {
    const f = [];
    const r = await m.runAction({
      key: '/flow/whoami',
      input: 'x',
      context: { auth: { uid: 'u1' }, tenant: 't1' },
      telemetryLabels: { harness: 'yes' },
      runtimeId: targetId,
    });
    expect(r.result?.context?.auth?.uid === 'u1', 'context propagated', f);
    return { f, detail: r };
  },

  async concurrent(m) {
    const f = [];
    const N = 32;
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        m.runAction({ key: '/flow/echo', input: { i }, runtimeId: targetId })
      )
    );
    const bad = rs.filter((r, i) => r.result?.i !== i).length;
    expect(bad === 0, `${bad} mismatched concurrent responses`, f);
    return { f, detail: { n: N, mismatched: bad } };
  },
};

if (opts.listSteps) {
  console.log(Object.keys(steps).join(','));
  process.exit(0);
}

const t0 = Date.now();
const manager = await RuntimeManager.create({
  projectRoot: path.dirname(fileURLToPath(import.meta.url)),
  experimentalReflectionV2: true,
  reflectionV2Port: port || undefined,
  manageHealth: true,
  telemetryServerUrl,
});
out({ step: 'start', ok: true, port: manager.port, url: `ws://localhost:${manager.port}`, telemetryServerUrl: telemetryServerUrl ?? null });

const events = [];
manager.onRuntimeEvent((ev, rt) => events.push({ ev, id: rt.id, t: Date.now() - t0 }));

// Wait for the target runtime to register.
const registered = await new Promise((resolve) => {
  const check = () => {
    const rts = manager.listRuntimes();
    const hit = targetId ? rts.find((r) => r.id === targetId) : rts[0];
    if (hit) {
      resolve(hit);
      return true;
    }
    return false;
  };
  if (check()) return;
  const unsub = manager.onRuntimeEvent((ev) => {
    if (ev === RuntimeEvent.ADD && check()) {
      unsub();
      clearTimeout(timer);
    }
  });
  const timer = setTimeout(() => {
    unsub();
    resolve(null);
  }, opts.waitMs);
});
if (!registered) {
  out({ step: 'register', ok: false, failures: [`no runtime ${targetId ?? ''} registered within ${opts.waitMs}ms`] });
  await manager.stop();
  telemetryServer?.close();
  process.exit(1);
}
targetId = registered.id;
out({ step: 'register', ok: true, ms: Date.now() - t0, runtime: registered });

let failed = 0;
let passed = 0;
for (const name of opts.only ?? Object.keys(steps)) {
  const fn = steps[name];
  if (!fn) {
    out({ step: name, ok: false, failures: ['unknown step'] });
    failed++;
    continue;
  }
  const s = Date.now();
  try {
    const { f, detail } = await fn(manager);
    const ok = f.length === 0;
    ok ? passed++ : failed++;
    out({ step: name, ok, ms: Date.now() - s, ...(ok ? {} : { failures: f }), detail });
  } catch (e) {
    failed++;
    out({ step: name, ok: false, ms: Date.now() - s, failures: ['threw'], error: errInfo(e) });
  }
}

out({ step: 'summary', ok: failed === 0, passed, failed, events, telemetry: opts.telemetry ? telemetry : null });
if (!opts.keepOpen) {
  await manager.stop();
  telemetryServer?.close();
  // wss.close() does not close already-open sockets in ws@8, so exit explicitly.
  process.exit(failed === 0 ? 0 : 1);
}
