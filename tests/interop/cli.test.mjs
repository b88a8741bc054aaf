// The CLI client (`actor-host runtimes | actions | run | cancel`) against our
// manager with our C++ demo runtime: output, --json, and exit codes.
import assert from 'node:assert/strict';
import { after, afterEach, test } from 'node:test';
import { cleanup, runCli, startManager, startManagerWithRuntime, TRACE_ID_RE } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

/** Runs the CLI to completion: {code, stdout, stderr}. */
const cli = (args, opts) => runCli(args, { timeoutMs: 15000, ...opts });

test('runtimes, actions and run, readable and --json', async () => {
  const { manager } = await startManagerWithRuntime('rt-cli', { runtime: { kind: 'cpp' } });
  const m = ['--manager', manager.apiUrl];

  const rts = await cli(['runtimes', ...m]);
  assert.equal(rts.code, 0, rts.stderr);
  assert.match(rts.stdout, /^ID\s+PID\s+NAME\s+VERSION/m);
  assert.match(rts.stdout, /^rt-cli\s+\d+/m);
  const rtsJson = await cli(['runtimes', '--json', ...m]);
  assert.equal(JSON.parse(rtsJson.stdout).runtimes[0].id, 'rt-cli');

  const acts = await cli(['actions', ...m]);
  assert.equal(acts.code, 0, acts.stderr);
  assert.match(acts.stdout, /^\/flow\/bidiSum\s+number\s+\(bidi\)/m);
  assert.match(acts.stdout, /^\/tool\/add\s+object\s+Adds two numbers\./m);

  const echo = await cli(['run', '/flow/echo', '{"a":[1,2]}', '--json', ...m]);
  assert.equal(echo.code, 0, echo.stderr);
  const out = JSON.parse(echo.stdout);
  assert.deepEqual(out.result, { a: [1, 2] });
  assert.match(out.telemetry.traceId, TRACE_ID_RE);

  const stream = await cli(['run', '/flow/streamCount', '{"n":3}', '--stream', '--json', ...m]);
  assert.equal(stream.code, 0, stream.stderr);
  const lines = stream.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(lines.slice(0, 3), [{ i: 0 }, { i: 1 }, { i: 2 }]);
  assert.deepEqual(lines[3].result, { count: 3, sum: 3 });

  const ctx = await cli(['run', '/flow/whoami', '"x"', '--context', '{"auth":{"uid":"u1"}}', '--json', ...m]);
  assert.equal(JSON.parse(ctx.stdout).result.context.auth.uid, 'u1');
});

test('exit codes: action error 1, usage 2, unreachable 3, no runtime 4, timeout 5', async () => {
  const { manager } = await startManagerWithRuntime('rt-codes', { runtime: { kind: 'cpp' } });
  const m = ['--manager', manager.apiUrl];

  const fail = await cli(['run', '/flow/fail', '{"status":"NOT_FOUND","message":"gone"}', ...m]);
  assert.equal(fail.code, 1);
  assert.match(fail.stderr, /error: NOT_FOUND: gone \(NOT_FOUND\)/);

  const badInput = await cli(['run', '/flow/echo', 'hello', ...m]);
  assert.equal(badInput.code, 2);
  assert.match(badInput.stderr, /input must be JSON/);

  const unknownRuntime = await cli(['run', '/flow/echo', '1', '--runtime', 'nope', ...m]);
  assert.equal(unknownRuntime.code, 4);
  assert.match(unknownRuntime.stderr, /Runtime nope not found/);

  const slow = await cli(['run', '/flow/slow', '{"ms":10000}', '--timeout', '200ms', ...m]);
  assert.equal(slow.code, 5);
  assert.match(slow.stderr, /timed out/);

  const unreachable = await cli(['runtimes', '--manager', 'http://127.0.0.1:1']);
  assert.equal(unreachable.code, 3);

  const empty = await startManager();
  const none = await cli(['run', '/flow/echo', '1', '--manager', empty.apiUrl]);
  assert.equal(none.code, 4);
  assert.match(none.stderr, /No runtimes found/);
});

test('cancel stops a running action by trace id', async () => {
  const { manager } = await startManagerWithRuntime('rt-cancel', { runtime: { kind: 'cpp' } });
  const m = ['--manager', manager.apiUrl];
  const s = await manager.stream('/api/rpc/streamAction', { key: '/flow/slow', input: { ms: 30000 } });
  assert.match(s.traceId ?? '', TRACE_ID_RE);
  const cancel = await cli(['cancel', s.traceId, ...m]);
  assert.equal(cancel.code, 0, cancel.stderr);
  assert.match(cancel.stdout + cancel.stderr, /Action cancelled/);
  const { value: last } = await s.lines.next(5000, 'the final line');
  assert.equal(last?.error?.data?.code, 1, JSON.stringify(last));
  // Already finished: the runtime's -32602 is an error (exit 1).
  const again = await cli(['cancel', s.traceId, ...m]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /Action not found or already completed/);
});

test('a word that is no command is a usage error naming the commands, not a program the manager runs', async () => {
  const typo = await cli(['runtimse']);
  assert.equal(typo.code, 2);
  assert.match(typo.stderr, /error: unknown command 'runtimse'; commands: runtimes, actions, run, cancel, cluster, config/);
  assert.doesNotMatch(typo.stderr, /listening|starting/i);
});

test('text from a runtime cannot drive the terminal: control characters are printed escaped', async () => {
  const { manager } = await startManagerWithRuntime('rt-cli-esc', { runtime: { kind: 'cpp' } });
  const m = ['--manager', manager.apiUrl];
  const fake = await manager.fakeRuntime('rt-esc');
  // ESC ] 0 ; ... BEL retitles the window; C1 CSI (U+009B) starts a control sequence.
  const description = 'hi\u001b]0;pwned\u0007 \u009b2J\u007f';
  fake.handlers.listActions = () => ({ result: { actions: { '/flow/x': { key: '/flow/x', name: 'x', description } } } });
  fake.handlers.listValues = () => ({ result: { values: {} } });
  assert.deepEqual((await fake.register('rt-esc')).result, {});
  const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

  const acts = await cli(['actions', '--runtime', 'rt-esc', ...m]);
  assert.equal(acts.code, 0, acts.stderr);
  assert.ok(acts.stdout.includes('hi\\u001b]0;pwned\\u0007 \\u009b2J\\u007f'), acts.stdout);
  assert.doesNotMatch(acts.stdout, raw);
  const json = await cli(['actions', '--runtime', 'rt-esc', '--json', ...m]);
  assert.doesNotMatch(json.stdout, raw);
  assert.equal(JSON.parse(json.stdout).actions['/flow/x'].description, description);

  const fail = await cli(['run', '/flow/fail', JSON.stringify({ status: 'INTERNAL', message: 'x\u001b[2Jy' }), '--runtime', 'rt-cli-esc', ...m]);
  assert.equal(fail.code, 1);
  assert.ok(fail.stderr.includes('x\\u001b[2Jy'), fail.stderr);
  assert.doesNotMatch(fail.stderr, raw);
});
