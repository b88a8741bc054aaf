// Where the interop tests find what they run, read from the environment,
// and the pinned packages every module loads from the setup.sh directory.
//
// Environment:
//   ACTOR_HOST_BIN    manager binary (default <repo>/build/actor-host)
//   INTEROP_NODE_DIR  directory prepared by setup.sh (default <repo>/build/interop-node)
//   INTEROP_LOG_DIR   where child process output goes (default $TMPDIR/actor-host-interop-logs)
//   INTEROP_MANAGER_LOG_LEVEL  passed to the manager as --log-level when set
//   INTEROP_RUNTIME_LOG_LEVEL  passed to cpp runtimes as --log-level when set
//   INTEROP_RUNTIMES  comma-separated runtime kinds the per-kind tests run
//                     against (default genkit,cpp)
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..', '..');

export const ACTOR_HOST_BIN =
  process.env.ACTOR_HOST_BIN || path.join(repoRoot, 'build', 'actor-host');
export const INTEROP_NODE_DIR =
  process.env.INTEROP_NODE_DIR || path.join(repoRoot, 'build', 'interop-node');
export const RUNTIME_SCRIPT = path.join(INTEROP_NODE_DIR, 'genkit-runtime.mjs');
export const GENKIT_MANAGER_SCRIPT = path.join(INTEROP_NODE_DIR, 'genkit-manager.mjs');

/**
 * Runtime kinds the manager tests run against: 'genkit' is the real Genkit JS
 * runtime (genkit-runtime.mjs), 'cpp' is `actor-host --role runtime --demo`,
 * which hosts the same actions.
 */
export const RUNTIME_KINDS = ['genkit', 'cpp'];
export const RUNTIMES = (process.env.INTEROP_RUNTIMES || RUNTIME_KINDS.join(','))
  .split(',')
  .map((k) => k.trim())
  .filter(Boolean);
for (const k of RUNTIMES) {
  if (!RUNTIME_KINDS.includes(k)) throw new Error(`INTEROP_RUNTIMES: unknown runtime kind ${k}`);
}
export const LOG_DIR =
  process.env.INTEROP_LOG_DIR || path.join(os.tmpdir(), 'actor-host-interop-logs');

// ESM ignores NODE_PATH, so load the pinned packages from the setup.sh
// directory explicitly.
const requireFromNodeDir = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'));
let WebSocketImpl;
try {
  WebSocketImpl = requireFromNodeDir('ws');
} catch (e) {
  throw new Error(
    `cannot load 'ws' from ${INTEROP_NODE_DIR}/node_modules; ` +
      `run tests/interop/setup.sh <build dir> first (${e.message})`
  );
}
export const WebSocket = WebSocketImpl;

export const TRACE_ID_RE = /^[0-9a-f]{32}$/;
