#!/usr/bin/env node
// A worker on the real iii SDK for the registration hooks of the RBAC
// listener: registers the functions pub::keep, pub::rename-me and
// pub::refuse-me, and binds harness::tick twice (config {count:0, tag:"keep"}
// and {count:0, refuse:true}).
//
// Usage: node registrar.mjs ws://127.0.0.1:PORT   (env HARNESS_WORKER_NAME, default registrar)
import { registerWorker } from 'iii-sdk';

const url = process.argv[2] ?? 'ws://127.0.0.1:49134';
const name = process.env.HARNESS_WORKER_NAME ?? 'registrar';
const iii = registerWorker(url, { workerName: name, otel: { enabled: false }, enableMetricsReporting: false });

for (const id of ['pub::keep', 'pub::rename-me', 'pub::refuse-me']) {
  iii.registerFunction(id, async (data) => ({ from: id, data }), { description: `registrar ${id}` });
}
iii.registerTrigger({ type: 'harness::tick', function_id: 'pub::keep', config: { count: 0, tag: 'keep' } });
iii.registerTrigger({ type: 'harness::tick', function_id: 'pub::keep', config: { count: 0, refuse: true } });
console.log('REGISTRAR_STARTED');

async function stop() {
  await iii.shutdown();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
