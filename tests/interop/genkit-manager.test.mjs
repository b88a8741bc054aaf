// Our runtime (`actor-host --role runtime --demo`) against the REAL Genkit
// manager: genkit-manager.mjs (a copy of the shared harness's manager.mjs)
// hosts RuntimeManagerV2 from @genkit-ai/tools-common, waits for runtime
// rt-cpp, runs its whole scenario (runtimes, listActions, runAction, stream,
// cancel, errors, bidi, listValues, context, concurrent) and prints one JSON
// line per step; it exits 0 iff every step passed.
import assert from 'node:assert/strict';
import { after, afterEach, test } from 'node:test';
import { cleanup, startCppRuntime, startGenkitManager, waitForRegistered, withTimeout } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const SCENARIO_MS = 60000;

/** A step line as a short readable text: name, failures, and what went wrong. */
function describeStep(s) {
  const failures = s.failures ? ` failures: ${JSON.stringify(s.failures)}` : '';
  const error = s.error ? ` error: ${JSON.stringify(s.error)}` : '';
  const detail = s.ok ? '' : ` detail: ${JSON.stringify(s.detail ?? null).slice(0, 2000)}`;
  return `${s.step}${failures}${error}${detail}`;
}

test('the Genkit manager scenario passes against the cpp runtime', { timeout: SCENARIO_MS + 30000 }, async () => {
  // Port 0: the Genkit manager picks a free one (3200-3400) and prints it first.
  const gm = await startGenkitManager('rt-cpp');
  const runtime = startCppRuntime(gm.url, { id: 'rt-cpp' });
  await waitForRegistered(runtime, { timeoutMs: 15000 });

  const exit = await withTimeout(gm.child.exited, SCENARIO_MS, `the scenario to finish; so far: ${gm.steps().map((s) => s.step)}`);
  const steps = gm.steps();
  const names = steps.map((s) => s.step);
  const failed = steps.filter((s) => !s.ok);
  const report = failed.length
    ? `failing steps:\n${failed.map(describeStep).join('\n')}`
    : `steps: ${names.join(',')}`;

  // Every scenario step ran and reported a line.
  for (const step of ['start', 'register', 'runtimes', 'listActions', 'runAction', 'stream', 'cancel', 'errors', 'bidi', 'listValues', 'context', 'concurrent', 'summary']) {
    assert.ok(names.includes(step), `step ${step} reported (exit ${JSON.stringify(exit)}); ${report}\n${gm.child.describe()}`);
  }
  assert.deepEqual(failed.map((s) => s.step), [], report);
  assert.equal(exit.code, 0, `scenario exit ${JSON.stringify(exit)}; ${report}\n${gm.child.describe()}`);

  const register = steps.find((s) => s.step === 'register');
  assert.equal(register.runtime?.id, 'rt-cpp');
  assert.equal(register.runtime?.pid, runtime.pid);
  assert.match(register.runtime?.genkitVersion ?? '', /^cpp\//);

  // The Genkit manager is gone now; our runtime outlives it (and retries).
  assert.ok(runtime.running, `the runtime is still running: ${runtime.describe()}`);
});
