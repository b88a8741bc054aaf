// The real Genkit tools server as a bench system: @genkit-ai/tools-common's
// startServer (what `genkit start` serves: express, POST /api/runAction and
// /api/streamAction) over RuntimeManagerV2, the Reflection V2 manager the
// fake runtime dials. bench_load drives it over HTTP exactly like
// actor-host's HTTP front door (the `tools` row of the report).
//
//   node bench/tools_server.mjs --node-dir BUILD/interop-node --port P --http-port H
//                               [--home DIR]
//
// Prints {"ready":true,"port":P,"http_port":H,"pid":N} once the manager
// listens (the HTTP port follows a moment later: wait for it), then runs
// until SIGTERM.
//
// HOME is pointed at a scratch directory (--home, default
// BUILD/interop-node/tools-home) before the package is loaded, because
// startServer fetches the Dev UI assets into ~/.genkit unless a zip is
// already there: an empty zip is put there so that nothing is downloaded,
// and usage analytics stay off (never acknowledged in that HOME).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
const opt = (k, d) => (args.includes(`--${k}`) ? args[args.indexOf(`--${k}`) + 1] : d);
const nodeDir = opt('node-dir', process.env.BENCH_NODE_DIR);
const port = Number(opt('port', '0')) || undefined;
const httpPort = Number(opt('http-port', '0'));
if (!nodeDir || !httpPort) {
  console.error('tools_server: --node-dir and --http-port are required');
  process.exit(2);
}
const toolsVersion = JSON.parse(
  fs.readFileSync(path.join(nodeDir, 'node_modules/@genkit-ai/tools-common/package.json'), 'utf8')
).version;
const home = path.resolve(opt('home', path.join(nodeDir, 'tools-home')));
const assets = path.join(home, '.genkit', 'assets', toolsVersion);
fs.mkdirSync(assets, { recursive: true });
const zip = path.join(assets, `${toolsVersion}.zip`);
if (!fs.existsSync(zip)) {
  // An empty zip archive: only the end-of-central-directory record.
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  fs.writeFileSync(zip, eocd);
}
process.env.HOME = home;
const projectRoot = path.join(home, 'project');
fs.mkdirSync(projectRoot, { recursive: true });

const require = createRequire(path.join(path.resolve(nodeDir), 'noop.js'));
const { RuntimeManager } = require('@genkit-ai/tools-common/manager');
const { startServer } = require('@genkit-ai/tools-common/server');
const { forceStderr, logger } = require('@genkit-ai/tools-common/utils');
if (typeof startServer !== 'function') {
  console.error(`tools_server: @genkit-ai/tools-common ${toolsVersion} exports no startServer`);
  process.exit(2);
}
forceStderr();
logger.level = 'warn';

const manager = await RuntimeManager.create({
  projectRoot,
  experimentalReflectionV2: true,
  reflectionV2Port: port,
});
process.on('uncaughtException', (e) => {
  console.error('tools_server:', e);
  process.exit(1);
});
startServer(manager, httpPort, '127.0.0.1');

const stop = async () => {
  await manager.stop();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdout.write(
  JSON.stringify({ ready: true, port: manager.port, http_port: httpPort, pid: process.pid, node: process.version, tools_common: toolsVersion }) + '\n'
);
