#!/usr/bin/env node
// A worker on the real iii SDK that binds engine::workers-available (an
// engine-provided trigger type) with registerTrigger and prints every event
// it gets as `EVENT {"data":..., "metadata":...}`.
//
// Usage: node watcher.mjs ws://127.0.0.1:PORT   (env HARNESS_WORKER_NAME, default watcher)
import { registerWorker } from 'iii-sdk';

const url = process.argv[2] ?? 'ws://127.0.0.1:49134';
const name = process.env.HARNESS_WORKER_NAME ?? 'watcher';
const iii = registerWorker(url, { workerName: name, otel: { enabled: false }, enableMetricsReporting: false });

iii.registerFunction('watch::on_worker', async (data, metadata) => {
  console.log(`EVENT ${JSON.stringify({ data, metadata: metadata ?? null })}`);
  return null;
});
iii.registerTrigger({
  type: 'engine::workers-available',
  function_id: 'watch::on_worker',
  config: {},
  metadata: { watcher: name },
});
console.log('WATCHER_STARTED');

async function stop() {
  await iii.shutdown();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
