#!/usr/bin/env node
// Test peer copied unchanged (apart from this line) from ../shared/peers/iii/caller.mjs (iii protocol harness, iii-sdk 0.22.1).
// Harness caller: a second iii-sdk worker that calls worker.mjs's functions through the engine
// and checks the answers.
//
// Usage: node caller.mjs [ws://127.0.0.1:49134] [--only a,b] [--skip a,b] [--with-die]
//   env: III_URL, HARNESS_WORKER_NAME (name of worker.mjs, default harness-worker),
//        HARNESS_OTEL=1 (turn on the SDK's OpenTelemetry socket)
// Exit code 0 when nothing failed. Last line: "N passed, N failed, N skipped".
//
// Tests marked (mock) need the mock-only function mock::kick and are skipped when the engine
// answers function_not_found for it. The die test (needs --with-die) ends the worker process.
import { isDeepStrictEqual } from 'node:util';
import { registerWorker, TriggerAction } from 'iii-sdk';
import { createChannel } from 'iii-sdk/helpers';

const argv = process.argv.slice(2);
const url = argv.find((a) => /^wss?:\/\//.test(a)) ?? process.env.III_URL ?? 'ws://127.0.0.1:49134';
const opt = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i !== -1 ? argv[i + 1] : undefined;
};
const only = opt('only')?.split(',');
const skip = opt('skip')?.split(',') ?? [];
const withDie = argv.includes('--with-die');
const workerName = process.env.HARNESS_WORKER_NAME ?? 'harness-worker';
const otel = process.env.HARNESS_OTEL === '1';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

class Skip extends Error {}
function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}
async function expectReject(promise) {
  try {
    const v = await promise;
    throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
  } catch (e) {
    if (e instanceof Error && e.message.startsWith('expected a rejection')) throw e;
    return e;
  }
}

const iii = registerWorker(url, {
  workerName: 'harness-caller',
  workerDescription: 'iii protocol harness caller',
  enableMetricsReporting: otel,
  otel: otel ? { enabled: true, serviceName: 'harness-caller' } : { enabled: false },
  invocationTimeoutMs: 10_000,
});

// Receiving end for the trigger-type test.
const ticks = [];
iii.registerFunction('caller::on_tick', async (input, metadata) => {
  ticks.push({ input, metadata });
  return { ok: true };
});

// Capture the SDK's console.error line for trigger registration failures.
const sdkErrors = [];
const origError = console.error;
console.error = (...args) => {
  sdkErrors.push(args.map(String).join(' '));
  origError(...args);
};

const call = (function_id, payload, extra = {}) => iii.trigger({ function_id, payload, ...extra });

async function waitForGreet(deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  let lastErr;
  while (Date.now() < deadline) {
    try {
      return await call('greet', { name: 'probe' }, { timeoutMs: 2000 });
    } catch (e) {
      lastErr = e;
      if (e?.code !== 'function_not_found' && e?.code !== 'TIMEOUT' && e?.code !== 'invocation_stopped') throw e;
      await sleep(150);
    }
  }
  throw new Error(`greet never became callable: ${lastErr?.message ?? lastErr}`);
}

let kickAvailable = null;
async function kickWorker() {
  try {
    const r = await call('mock::kick', { name: workerName }, { timeoutMs: 3000 });
    kickAvailable = true;
    return r;
  } catch (e) {
    if (e?.code === 'function_not_found') {
      kickAvailable = false;
      throw new Skip('engine has no mock::kick');
    }
    throw e;
  }
}

const tests = [
  ['ready', async () => {
    const r = await waitForGreet(15_000);
    assert(r?.greeting === 'Hello, probe!', `probe greeting ${JSON.stringify(r)}`);
  }],
  ['greet', async () => {
    const r = await call('greet', { name: 'iii' });
    assert(r?.greeting === 'Hello, iii!', `greeting ${JSON.stringify(r)}`);
  }],
  ['caller_worker_id_injected', async () => {
    // The engine adds _caller_worker_id (the caller's worker id) to object payloads.
    const r = await call('greet', { name: 'id' });
    assert(typeof r?.caller_worker_id === 'string', `caller_worker_id ${JSON.stringify(r)}`);
    if (iii.workerId) assert(r.caller_worker_id === iii.workerId, `caller id ${r.caller_worker_id} != own id ${iii.workerId}`);
  }],
  ['metadata', async () => {
    const r = await call('echo', { a: 1, list: [1, 2, { b: null }] }, { metadata: { tenant: 'acme', n: 7 } });
    assert(isDeepStrictEqual(r?.metadata, { tenant: 'acme', n: 7 }), `metadata ${JSON.stringify(r)}`);
    assert(r?.input?.a === 1 && isDeepStrictEqual(r?.input?.list, [1, 2, { b: null }]), `input ${JSON.stringify(r)}`);
  }],
  ['non_object_payloads', async () => {
    for (const p of ['text', '\u2713 \u00fcn\u00efc\u00f8d\u00e9 \u{1F680} "quoted" \\ back', 42, 1.5e300, [1, 'two'], null, true]) {
      const r = await call('echo', p);
      assert(isDeepStrictEqual(r?.input, p), `payload ${JSON.stringify(p)} came back as ${JSON.stringify(r?.input)}`);
    }
  }],
  ['undefined_result', async () => {
    const r = await call('noop', {});
    assert(r === undefined || r === null, `noop returned ${JSON.stringify(r)}`);
  }],
  ['large_payload', async () => {
    const big = 'x'.repeat(2 * 1024 * 1024) + '\u00e9';
    const r = await call('echo', { big });
    assert(r?.input?.big === big, `2 MiB payload round trip (got ${r?.input?.big?.length} chars)`);
  }],
  ['unknown_function', async () => {
    const e = await expectReject(call('does::not::exist', { x: 1 }));
    assert(e?.name === 'InvocationError', `error class ${e?.name}`);
    assert(e.code === 'function_not_found', `code ${e.code}`);
    assert(/not found/i.test(e.message), `message ${e.message}`);
  }],
  ['fail', async () => {
    const e = await expectReject(call('fail', { message: 'boom' }));
    assert(e.code === 'invocation_failed', `code ${e.code}`);
    assert(e.message === 'invocation_failed: boom', `message ${e.message}`);
    assert(typeof e.stacktrace === 'string' && e.stacktrace.includes('boom'), 'stacktrace forwarded');
  }],
  ['fail_string', async () => {
    const e = await expectReject(call('fail', { kind: 'string', message: 'plain' }));
    assert(e.code === 'invocation_failed', `code ${e.code}`);
    assert(e.message === 'invocation_failed: plain', `message ${e.message}`);
  }],
  ['timeout', async () => {
    const t0 = Date.now();
    const e = await expectReject(call('slow', { ms: 1200 }, { timeoutMs: 300 }));
    assert(e.code === 'TIMEOUT', `code ${e.code}`);
    assert(Date.now() - t0 < 1000, 'timed out client-side before the function finished');
    await sleep(1200); // the late result arrives and must be ignored quietly
  }],
  ['slow_ok', async () => {
    const r = await call('slow', { ms: 200 });
    assert(r?.slept === 200, `slow ${JSON.stringify(r)}`);
  }],
  ['void', async () => {
    const t0 = Date.now();
    const r = await call('slow', { ms: 500 }, { action: TriggerAction.Void() });
    assert(r === undefined, `void returned ${JSON.stringify(r)}`);
    assert(Date.now() - t0 < 200, 'void returns at once');
  }],
  ['concurrency', async () => {
    const names = Array.from({ length: 25 }, (_, i) => `n${i}`);
    const rs = await Promise.all(names.map((n) => call('greet', { name: n })));
    rs.forEach((r, i) => assert(r?.greeting === `Hello, ${names[i]}!`, `#${i} ${JSON.stringify(r)}`));
  }],
  ['nested', async () => {
    const r = await call('chain', { name: 'nested' });
    assert(r?.via === 'chain' && r?.inner?.greeting === 'Hello, nested!', `chain ${JSON.stringify(r)}`);
  }],
  ['functions_list', async () => {
    const r = await call('engine::functions::list', {});
    const ids = (r?.functions ?? []).map((f) => f.function_id);
    for (const id of ['greet', 'slow', 'fail', 'caller::on_tick']) assert(ids.includes(id), `${id} missing from ${ids.join(',')}`);
  }],
  ['trigger_type', async () => {
    ticks.length = 0;
    const t = iii.registerTrigger({
      type: 'harness::tick',
      function_id: 'caller::on_tick',
      config: { count: 2, interval_ms: 50 },
      metadata: { source: 'harness' },
    });
    const deadline = Date.now() + 5000;
    while (ticks.length < 2 && Date.now() < deadline) await sleep(25);
    t.unregister();
    assert(ticks.length >= 2, `got ${ticks.length} ticks`);
    assert(ticks[0].input?.tick === 1, `tick payload ${JSON.stringify(ticks[0].input)}`);
    assert(isDeepStrictEqual(ticks[0].metadata, { source: 'harness' }), `tick metadata ${JSON.stringify(ticks[0].metadata)}`);
  }],
  ['trigger_rejected', async () => {
    sdkErrors.length = 0;
    const t = iii.registerTrigger({ type: 'harness::tick', function_id: 'caller::on_tick', config: { reject: true } });
    const deadline = Date.now() + 3000;
    const match = () => sdkErrors.find((l) => l.includes('Trigger registration failed') && l.includes('reject=true'));
    while (!match() && Date.now() < deadline) await sleep(25);
    t.unregister();
    assert(match(), `no forwarded triggerregistrationresult error (saw: ${sdkErrors.join(' | ')})`);
  }],
  ['channel', async () => {
    const ch = await createChannel(iii);
    assert(ch?.writerRef?.direction === 'write' && ch?.readerRef?.direction === 'read', 'channel refs');
    const texts = [];
    ch.reader.onMessage((m) => texts.push(m));
    const bytesP = ch.reader.readAll();
    const r = await call('stream_out', { writer: ch.writerRef, text: 'payload-bytes' });
    assert(r?.ok === true, `stream_out ${JSON.stringify(r)}`);
    const bytes = await Promise.race([bytesP, sleep(5000).then(() => null)]);
    assert(bytes !== null, 'reader finished');
    assert(bytes.toString('utf8') === 'payload-bytes', `bytes ${bytes?.toString('utf8')}`);
    assert(texts.some((m) => JSON.parse(m).type === 'hello'), `texts ${texts.join(',')}`);
  }],
  ['stopped_on_disconnect (mock)', async () => {
    if (kickAvailable === false) throw new Skip('engine has no mock::kick');
    const pending = call('slow', { ms: 3000 }, { timeoutMs: 10_000 });
    pending.catch(() => {});
    await sleep(300);
    await kickWorker();
    const e = await expectReject(pending);
    assert(e.code === 'invocation_stopped', `code ${e.code} (${e.message})`);
  }],
  ['reconnect_replay (mock)', async () => {
    if (kickAvailable === null) await kickWorker();
    if (kickAvailable === false) throw new Skip('engine has no mock::kick');
    const t0 = Date.now();
    const r = await waitForGreet(15_000);
    assert(r?.greeting === 'Hello, probe!', 'greet after reconnect');
    console.log(`[caller] worker callable again ${Date.now() - t0}ms after the kick`);
    const list = await call('engine::workers::list', {});
    const named = (list?.workers ?? []).filter((w) => w.name === workerName);
    assert(named.length === 1, `exactly one live ${workerName} after reattach, got ${named.length}`);
  }],
  ['die_stops_invocation', async () => {
    if (!withDie) throw new Skip('needs --with-die');
    const e = await expectReject(call('die', {}, { timeoutMs: 10_000 }));
    assert(e.code === 'invocation_stopped', `code ${e.code} (${e.message})`);
  }],
];

let passed = 0;
let failed = 0;
let skipped = 0;
for (const [name, fn] of tests) {
  const short = name.split(' ')[0];
  if ((only && !only.includes(short) && short !== 'ready') || skip.includes(short)) {
    skipped++;
    console.log(`SKIP ${name} (not selected)`);
    continue;
  }
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    console.log(`PASS ${name} (${Date.now() - t0}ms)`);
  } catch (e) {
    if (e instanceof Skip) {
      skipped++;
      console.log(`SKIP ${name}: ${e.message}`);
      continue;
    }
    failed++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
    if (name === 'ready') break;
  }
}

console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
if (otel) await sleep(1500); // let span/log batches flush to /otel
await iii.shutdown();
process.exit(failed ? 1 : 0);
