#!/usr/bin/env node
// Test peer copied unchanged (apart from this line) from ../shared/peers/iii/worker.mjs (iii protocol harness, iii-sdk 0.22.1).
// Harness worker built on the real iii Node SDK (iii-sdk 0.22.1).
//
// Usage: node worker.mjs [ws://127.0.0.1:49134]
//   env: III_URL (engine url if no argv), HARNESS_WORKER_NAME (default harness-worker),
//        HARNESS_OTEL=1 (turn on the SDK's OpenTelemetry socket to <url>/otel; off by default)
//
// Functions it registers:
//   greet        {name}            -> {greeting, caller_worker_id, metadata}
//   echo         any               -> {input, metadata}
//   slow         {ms}              -> {slept}        (see note on cancellation below)
//   fail         {message, kind}   -> throws (Error by default, a bare string when kind="string")
//   chain        {name}            -> calls greet through the engine and wraps the answer
//   stream_out   {writer, text}    -> writes to a channel writer passed by reference
//   noop         any               -> returns undefined (result-less invocationresult)
//   die          {}                -> exits the process without answering (disconnect test)
// Trigger type it provides:
//   harness::tick  config {count=1, interval_ms=50, reject=false}: fires the bound function
//                  `count` times via a void trigger; reject=true makes registration fail.
//
// Cancellation: iii-sdk 0.22.1 has no cancel message and handlers get no abort signal. A
// caller's timeout is purely client-side, and when the *caller* disconnects the engine just
// drops the result. So `slow` cannot honour cancellation; it logs when it finishes.
import { registerWorker, TriggerAction } from 'iii-sdk';

const url = process.argv[2] ?? process.env.III_URL ?? 'ws://127.0.0.1:49134';
const name = process.env.HARNESS_WORKER_NAME ?? 'harness-worker';
const otel = process.env.HARNESS_OTEL === '1';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const iii = registerWorker(url, {
  workerName: name,
  workerDescription: 'iii protocol harness worker',
  enableMetricsReporting: otel,
  otel: otel
    ? { enabled: true, serviceName: name, metricsEnabled: true, metricsExportIntervalMs: 1000 }
    : { enabled: false },
  invocationTimeoutMs: 10_000,
});

iii.registerFunction(
  'greet',
  async (input, metadata) => ({
    greeting: `Hello, ${input?.name ?? 'world'}!`,
    caller_worker_id: input?._caller_worker_id ?? null,
    metadata: metadata ?? null,
  }),
  { description: 'Greets by name', metadata: { harness: true } },
);

iii.registerFunction('echo', async (input, metadata) => ({ input, metadata: metadata ?? null }), {
  description: 'Returns its input and metadata',
});

let slowActive = 0;
iii.registerFunction(
  'slow',
  async (input) => {
    const ms = Number(input?.ms ?? 1000);
    slowActive++;
    const started = Date.now();
    try {
      await sleep(ms);
    } finally {
      slowActive--;
    }
    console.log(`[worker] slow(${ms}) finished after ${Date.now() - started}ms (active now ${slowActive})`);
    return { slept: ms };
  },
  { description: 'Sleeps for input.ms milliseconds' },
);

iii.registerFunction(
  'fail',
  async (input) => {
    if (input?.kind === 'string') throw String(input?.message ?? 'intentional failure (string)');
    throw new Error(input?.message ?? 'intentional failure');
  },
  { description: 'Always throws' },
);

iii.registerFunction(
  'chain',
  async (input) => {
    const inner = await iii.trigger({ function_id: 'greet', payload: { name: input?.name ?? 'chain' } });
    return { via: 'chain', inner };
  },
  { description: 'Calls greet through the engine' },
);

iii.registerFunction(
  'stream_out',
  async (input) => {
    // The SDK turns any {channel_id, access_key, direction} object inside the input into a
    // ChannelWriter / ChannelReader before calling the handler.
    const writer = input?.writer;
    if (!writer || typeof writer.sendMessage !== 'function') {
      throw new Error('stream_out needs input.writer to be a channel writer ref');
    }
    const text = String(input?.text ?? 'hello');
    writer.sendMessage(JSON.stringify({ type: 'hello', text }));
    await new Promise((resolve, reject) => {
      writer.stream.write(Buffer.from(text, 'utf8'), (err) => (err ? reject(err) : resolve()));
    });
    await new Promise((resolve) => writer.stream.end(resolve));
    return { ok: true, bytes: Buffer.byteLength(text) };
  },
  { description: 'Writes a text message and bytes into a channel' },
);

iii.registerFunction('noop', async () => undefined, { description: 'Returns nothing' });

iii.registerFunction(
  'die',
  async () => {
    console.log('[worker] die: exiting without answering');
    setTimeout(() => process.exit(3), 50);
    return new Promise(() => {});
  },
  { description: 'Exits the worker process mid-invocation' },
);

const tickTimers = new Map();
iii.registerTriggerType(
  { id: 'harness::tick', description: 'Fires the bound function count times every interval_ms' },
  {
    async registerTrigger({ id, function_id, config, metadata }) {
      console.log(`[worker] registerTrigger ${id} -> ${function_id} config=${JSON.stringify(config)}`);
      if (config?.reject) throw new Error('tick config rejected: reject=true');
      const count = Number(config?.count ?? 1);
      const interval = Number(config?.interval_ms ?? 50);
      clearInterval(tickTimers.get(id));
      let n = 0;
      const timer = setInterval(() => {
        n++;
        iii.trigger({
          function_id,
          payload: { tick: n, trigger_id: id },
          action: TriggerAction.Void(),
          metadata,
        });
        if (n >= count) {
          clearInterval(timer);
          tickTimers.delete(id);
        }
      }, interval);
      tickTimers.set(id, timer);
    },
    async unregisterTrigger({ id }) {
      console.log(`[worker] unregisterTrigger ${id}`);
      clearInterval(tickTimers.get(id));
      tickTimers.delete(id);
    },
  },
);

console.log(`[worker] ${name} connecting to ${url} (otel ${otel ? 'on' : 'off'})`);
console.log('WORKER_STARTED');

async function stop() {
  await iii.shutdown();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
