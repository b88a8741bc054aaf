// A test file's process in miniature, for harness-signals.test.mjs: starts,
// through the harness, a manager with our runtime as its own child (-- <command>),
// our runtime registered with it from outside, a child that ignores SIGTERM
// and a temp dir, prints their pids and the dir on one line ("READY {json}")
// and waits to be signalled.
import { ACTOR_HOST_BIN, Child, startCppRuntime, startManager, tempDir, waitForRegistered } from './lib/harness.mjs';

const manager = await startManager(['--id', 'attached', '--', ACTOR_HOST_BIN, '--role', 'runtime', '--demo']);
const attached = await manager.waitForRuntime('attached');
const runtime = startCppRuntime(manager.reflectionUrl, { id: 'outside' });
await waitForRegistered(runtime);
// Only SIGKILL stops it.
const stubborn = new Child('stubborn', process.execPath, [
  '-e',
  "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000); console.log('IGNORING SIGTERM')",
]);
await stubborn.waitForLine(/^IGNORING SIGTERM$/);
const dir = tempDir('actor-host-harness-peer-');
const pids = { manager: manager.child.pid, attached: attached.pid, runtime: runtime.pid, stubborn: stubborn.pid };
console.log(`READY ${JSON.stringify({ pids, dir })}`);
setInterval(() => {}, 1000);
