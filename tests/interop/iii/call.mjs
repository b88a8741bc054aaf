#!/usr/bin/env node
// One call through the real iii SDK, then exit: prints `RESULT <json>` or
// `ERROR {"code", "message"}` (for a void call: `SENT`).
//
// Usage: node call.mjs ws://127.0.0.1:PORT FUNCTION_ID [JSON_PAYLOAD] [--void]
//   env HARNESS_WORKER_NAME (default sdk-call)
import { registerWorker, TriggerAction } from 'iii-sdk';

const [url, functionId, payloadText = 'null', ...flags] = process.argv.slice(2);
const name = process.env.HARNESS_WORKER_NAME ?? 'sdk-call';
const iii = registerWorker(url, { workerName: name, otel: { enabled: false }, enableMetricsReporting: false });
const payload = JSON.parse(payloadText);
try {
  if (flags.includes('--void')) {
    await iii.trigger({ function_id: functionId, payload, action: TriggerAction.Void() });
    // The frame is queued until the socket opens: give it that long.
    await new Promise((r) => setTimeout(r, 500));
    console.log('SENT');
  } else {
    const result = await iii.trigger({ function_id: functionId, payload, timeoutMs: 15000 });
    console.log(`RESULT ${JSON.stringify(result ?? null)}`);
  }
} catch (e) {
  console.log(`ERROR ${JSON.stringify({ code: e?.code ?? null, message: String(e?.message ?? e) })}`);
}
await iii.shutdown();
process.exit(0);
