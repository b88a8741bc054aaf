// The real Genkit telemetry server (@genkit-ai/telemetry-server, as the
// Genkit CLI starts it), for bench/trace_store_js.sh: a Genkit runtime
// exporting to it is the baseline actor-host's trace store is compared with.
//   node bench/telemetry_server.mjs --node-dir BUILD/interop-node --dir DIR
// Prints {"port":N} once it listens; stops on SIGTERM.
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
};
const requireNode = createRequire(path.join(path.resolve(arg('--node-dir')), 'package.json'));
const { startTelemetryServer, LocalFileTraceStore, LocalFileLogStore } =
  requireNode('@genkit-ai/telemetry-server');

const port = await new Promise((resolve, reject) => {
  const s = net.createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const dir = arg('--dir');
await startTelemetryServer({
  port,
  traceStore: new LocalFileTraceStore({ storeRoot: dir, indexRoot: dir }),
  logStore: new LocalFileLogStore({ storeRoot: dir, indexRoot: dir }),
});
console.log(JSON.stringify({ port }));
process.on('SIGTERM', () => process.exit(0));
