// Test harness for the actor-host interop tests: starts the manager binary,
// runtimes of two kinds (the real Genkit JS runtime, 'genkit', and our own
// `actor-host --role runtime`, 'cpp') and the real Genkit manager, and gives
// the tests HTTP, NDJSON and JSON-RPC WebSocket clients. Everything started
// here is tracked and torn down by cleanup(), which each test file runs from
// afterEach/after hooks.
//
// The tests import from here; the code is in modules by concern:
//   env.mjs        paths and settings from the environment (listed there), 'ws'
//   wait.mjs       withTimeout, pollUntil, AsyncQueue
//   processes.mjs  Child, the tracking of what a test starts, cleanup(),
//                  temp dirs, free ports, pgrep
//   http.mjs       httpRequest, ndjsonStream
//   rpc.mjs        JSON-RPC over WebSocket: RpcSocket, FakeRuntime
//   manager.mjs    the manager, the runtimes and the Genkit manager it meets, the CLI
//   iii.mjs        iii-sdk peers, a raw iii worker client, checks the iii tests share
export { ACTOR_HOST_BIN, INTEROP_NODE_DIR, RUNTIME_KINDS, RUNTIME_SCRIPT, RUNTIMES, TRACE_ID_RE, WebSocket } from './env.mjs';
export { AsyncQueue, pollUntil, withTimeout } from './wait.mjs';
export { Child, childPids, cleanup, freePort, pgrep, tempDir } from './processes.mjs';
export { HttpResponse, httpRequest, ndjsonStream } from './http.mjs';
export { FakeRuntime, RpcSocket } from './rpc.mjs';
export {
  Manager,
  runCli,
  startCppRuntime,
  startGenkitManager,
  startGenkitRuntime,
  startManager,
  startManagerWithRuntime,
  waitForRegistered,
} from './manager.mjs';
export {
  assertNoLeaks,
  IiiClient,
  openChannelSocket,
  runIiiCaller,
  sdkCall,
  startIiiPeer,
  startIiiWorker,
  waitForFunction,
} from './iii.mjs';
