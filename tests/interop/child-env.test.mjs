// What the manager hands its children: a small environment (not its own
// secrets or whatever its shell exported) unless a service asks for more with
// `inherit_env`, and a --write-env-file that is owner-only and never written
// through a symbolic link.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, test } from 'node:test';
import { cleanup, startManager } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-child-env-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The manager's environment on top of the test runner's. */
const managerEnv = {
  ACTOR_HOST_AUTH_TOKEN_TEST: 'manager-secret',
  CHILD_ENV_API_KEY: 'api-key',
  CHILD_ENV_PLAIN: 'plain',
  LANG: 'C.UTF-8',
};

/** A command that prints its environment, then a marker line. */
const printEnv = ['sh', '-c', 'env; echo ENV-END'];

/** The variable names service `name` printed (logged as "[name] KEY=VALUE"). */
async function printedEnv(manager, name) {
  await manager.child.waitForLine(new RegExp(`\\[${name}\\] ENV-END`), 10000);
  const out = {};
  for (const line of manager.child.lines) {
    // The text log adds the line's fields at its end.
    const m = line.match(new RegExp(`\\[${name}\\] ([A-Za-z_][A-Za-z0-9_]*)=(.*?)(?: service=\\S+)?(?: runtime=\\S+)?$`));
    if (m) out[m[1]] = m[2];
  }
  return out;
}

const allowed = new Set(['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TERM',
  'SSL_CERT_FILE', 'SSL_CERT_DIR', 'ASAN_OPTIONS', 'LSAN_OPTIONS', 'UBSAN_OPTIONS', 'TSAN_OPTIONS', 'MSAN_OPTIONS',
  // set by the manager, the service's env: and sh itself
  'GENKIT_ENV', 'GENKIT_REFLECTION_V2_SERVER', 'GENKIT_RUNTIME_ID', 'GIVEN', 'PWD', 'SHLVL', 'OLDPWD', '_']);

test('services get a minimal environment; inherit_env adds names or everything but the manager secrets', async () => {
  const config = path.join(tmp, 'host.yaml');
  const service = (name, extra) => `  - name: ${name}
    command: [${printEnv.map((a) => JSON.stringify(a)).join(', ')}]
    register: false
    restart: never
${extra}`;
  fs.writeFileSync(
    config,
    'services:\n' +
      service('minimal', '    env: {GIVEN: "1"}\n') +
      service('listed', '    inherit_env: [CHILD_ENV_API_KEY, "ACTOR_HOST_*"]\n') +
      service('everything', '    inherit_env: true\n')
  );
  const manager = await startManager(['--config', config], { env: managerEnv });

  const minimal = await printedEnv(manager, 'minimal');
  const extra = Object.keys(minimal).filter((k) => !allowed.has(k) && !k.startsWith('LC_'));
  assert.deepEqual(extra, [], `not on the allow-list: ${extra.join(' ')}`);
  assert.equal(minimal.GIVEN, '1');
  assert.equal(minimal.LANG, 'C.UTF-8');
  assert.equal(minimal.GENKIT_RUNTIME_ID, 'minimal');
  assert.ok(minimal.PATH, 'PATH is kept');

  const listed = await printedEnv(manager, 'listed');
  assert.equal(listed.CHILD_ENV_API_KEY, 'api-key');
  assert.equal(listed.CHILD_ENV_PLAIN, undefined);
  assert.equal(listed.ACTOR_HOST_AUTH_TOKEN_TEST, undefined, 'a prefix passed a secret');

  const everything = await printedEnv(manager, 'everything');
  assert.equal(everything.CHILD_ENV_PLAIN, 'plain');
  assert.equal(everything.CHILD_ENV_API_KEY, 'api-key');
  assert.equal(everything.ACTOR_HOST_AUTH_TOKEN_TEST, undefined, 'inherit_env: true passed a secret');
});

test('-- <command> keeps the shell environment but not the manager secrets', async () => {
  const manager = await startManager(['--', ...printEnv], { env: managerEnv });
  manager.child.mayExit = true;
  const env = await printedEnv(manager, 'sh');
  assert.equal(env.CHILD_ENV_PLAIN, 'plain');
  assert.equal(env.ACTOR_HOST_AUTH_TOKEN_TEST, undefined);
  await manager.child.exited;
});

test('--write-env-file writes mode 0600 and refuses a symbolic link planted at the path', async () => {
  const envFile = path.join(tmp, 'runtime.env');
  fs.writeFileSync(envFile, 'OLD=1\n', { mode: 0o644 });
  const ok = await startManager(['--write-env-file', envFile, '--demo']);
  await ok.waitForRuntime('demo');
  assert.equal(fs.statSync(envFile).mode & 0o777, 0o600);
  assert.match(fs.readFileSync(envFile, 'utf8'), /^GENKIT_ENV=dev\nGENKIT_REFLECTION_V2_SERVER=ws:\/\/localhost:\d+\nGENKIT_RUNTIME_ID=demo\n$/);
  assert.deepEqual(fs.readdirSync(tmp).filter((f) => f.startsWith('runtime.env')), ['runtime.env'], 'a temporary file was left');

  const victim = path.join(tmp, 'victim');
  fs.writeFileSync(victim, 'precious\n');
  const link = path.join(tmp, 'linked.env');
  fs.symlinkSync(victim, link);
  const refused = await startManager(['--write-env-file', link]);
  refused.child.mayExit = true;
  const exit = await refused.child.exited;
  assert.equal(exit.code, 1, refused.child.describe());
  await refused.child.waitForLine(/cannot start: --write-env-file: refusing to write .*linked\.env: it is a symbolic link/, 1000);
  assert.equal(fs.readFileSync(victim, 'utf8'), 'precious\n');
  assert.ok(fs.lstatSync(link).isSymbolicLink());
});
