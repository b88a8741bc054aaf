// The harness itself: a test file's process ended by SIGTERM, SIGINT or
// SIGHUP (a CI job's timeout, `node --test` cancelling the file, Ctrl-C)
// leaves none of its children running and none of its temp dirs behind, and
// exits with 128 + the signal's number.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, test } from 'node:test';
import { Child, cleanup, INTEROP_NODE_DIR, pollUntil, withTimeout } from './lib/harness.mjs';
import { nodeChildEnv, tracked } from './lib/processes.mjs';

afterEach(cleanup);
after(cleanup);

const PEER_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'harness-peer.mjs');

/** Whether `pid` is a live process (a zombie nobody reaped yet is dead). */
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  test(`${signal} to a test process: its children are gone, its temp dirs removed, it exits ${128 + os.constants.signals[signal]}`, async () => {
    const peer = new Child('harness-peer', process.execPath, [PEER_SCRIPT], {
      cwd: INTEROP_NODE_DIR,
      env: nodeChildEnv({}),
    });
    tracked.runtimes.add(peer);
    const ready = await peer.waitForLine(/^READY (.*)$/, 30000);
    const { pids, dir } = JSON.parse(ready[1]);
    try {
      for (const [name, pid] of Object.entries(pids)) assert.ok(alive(pid), `${name} (pid ${pid}) runs before the signal`);
      assert.ok(fs.existsSync(dir));
      peer.kill(signal);
      // The stubborn child costs the harness its whole SIGTERM grace.
      const exit = await withTimeout(peer.exited, 10000, `harness peer exit after ${signal}`);
      assert.deepEqual(exit, { code: 128 + os.constants.signals[signal], signal: null }, peer.describe());
      await pollUntil(
        () => Object.entries(pids).filter(([, pid]) => alive(pid)).map(([name]) => name),
        (left) => left.length === 0,
        { timeoutMs: 5000, what: `the children of the harness peer to be gone after ${signal}` }
      );
      assert.equal(fs.existsSync(dir), false, `temp dir ${dir} left behind`);
    } finally {
      // What a failed run left behind is not the next test's problem.
      for (const pid of Object.values(pids)) if (alive(pid)) process.kill(pid, 'SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
