// The checks of the systemd units in deploy/systemd (deploy.test.mjs;
// tested against broken copies in deploy-validators.test.mjs): the units'
// settings against deploy/host.yaml, and `systemd-analyze verify`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MANAGER_KEYS, stopBudgetMs, tmpRoot } from './deploy.mjs';
import { ACTOR_HOST_BIN } from './harness.mjs';

/** A unit file as {Section: [{key, value, line}]}; continuation lines joined. */
export function parseUnit(text) {
  const sections = {};
  let current = null;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    const lineNo = i + 1;
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i].trim()}`;
    const sec = line.match(/^\[(.+)\]$/);
    if (sec) {
      current = sections[sec[1]] ??= [];
      continue;
    }
    const kv = line.match(/^([A-Za-z0-9]+)\s*=\s*(.*)$/);
    if (!kv || !current) throw new Error(`line ${lineNo}: not a key=value in a section: ${line}`);
    current.push({ key: kv[1], value: kv[2], line: lineNo });
  }
  const all = (section, key) => (sections[section] ?? []).filter((e) => e.key === key).map((e) => e.value);
  return { sections, all, get: (section, key) => all(section, key).at(-1) };
}

/** systemd time span ("40s", "1min 30s", "90" = seconds) -> seconds. */
function systemdSeconds(v) {
  if (v === undefined) return undefined;
  if (v === 'infinity') return Infinity;
  const units = { us: 1e-6, ms: 1e-3, s: 1, sec: 1, m: 60, min: 60, h: 3600, hr: 3600 };
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*([a-z]*)\s*/gy;
  let m;
  let seen = 0;
  while ((m = re.exec(v.trim())) !== null && m[0]) {
    if (!(m[2] in units) && m[2] !== '') return NaN;
    total += Number(m[1]) * (m[2] ? units[m[2]] : 1);
    seen = re.lastIndex;
  }
  return seen === v.trim().length ? total : NaN;
}

const HARDENING = {
  NoNewPrivileges: ['yes', 'true'],
  ProtectSystem: ['strict'],
  ProtectHome: ['yes', 'true', 'read-only', 'tmpfs'],
  PrivateTmp: ['yes', 'true'],
  LimitNOFILE: ['65536'],
};

function checkCommonUnit(unit, problems, name) {
  const want = (cond, msg) => cond || problems.push(`${name}: ${msg}`);
  want(unit.get('Service', 'Type') === 'simple', `Type=${unit.get('Service', 'Type')}, not simple`);
  want(unit.get('Service', 'DynamicUser') === 'yes' || unit.get('Service', 'User'), 'neither DynamicUser=yes nor User=');
  want(unit.get('Service', 'KillSignal') === 'SIGTERM', `KillSignal=${unit.get('Service', 'KillSignal')}, not SIGTERM`);
  want(unit.get('Service', 'KillMode') === 'mixed', `KillMode=${unit.get('Service', 'KillMode')}, not mixed`);
  for (const [key, ok] of Object.entries(HARDENING)) {
    want(ok.includes(unit.get('Service', key)), `${key}=${unit.get('Service', key)}, want ${ok.join('|')}`);
  }
  want(unit.get('Install', 'WantedBy'), 'no [Install] WantedBy=');
}

/** Problems of the manager unit against `hostCfg` (deploy/host.yaml); [] when it fits. */
export function checkManagerUnit(text, hostCfg) {
  const problems = [];
  const unit = parseUnit(text);
  const want = (cond, msg) => cond || problems.push(`manager unit: ${msg}`);
  checkCommonUnit(unit, problems, 'manager unit');
  want(unit.get('Service', 'ExecStart') === '/usr/local/bin/actor-host --role manager --config /etc/actor-host/host.yaml', `ExecStart=${unit.get('Service', 'ExecStart')}`);
  want(unit.get('Service', 'Restart') === 'on-failure', `Restart=${unit.get('Service', 'Restart')}, not on-failure`);
  const stop = systemdSeconds(unit.get('Service', 'TimeoutStopSec'));
  const budget = stopBudgetMs(hostCfg) / 1000;
  want(stop > budget, `TimeoutStopSec=${unit.get('Service', 'TimeoutStopSec')} must exceed drain_timeout + largest stop_grace = ${budget}s`);
  // Every ACTOR_HOST_<KEY> shown (set or commented out) must name a real key.
  const overrides = [...text.matchAll(/\bACTOR_HOST_([A-Z0-9_]+)=/g)].map((m) => m[1]);
  want(overrides.length > 0, 'no ACTOR_HOST_* Environment example');
  for (const k of overrides) want(k.toLowerCase() in MANAGER_KEYS, `ACTOR_HOST_${k} overrides no manager key`);
  return problems;
}

/** Problems of the runtime template unit against `hostCfg` and runtime.env; [] when it fits. */
export function checkRuntimeUnit(text, hostCfg, runtimeEnvText) {
  const problems = [];
  const unit = parseUnit(text);
  const want = (cond, msg) => cond || problems.push(`runtime unit: ${msg}`);
  checkCommonUnit(unit, problems, 'runtime unit');
  want(unit.get('Service', 'ExecStart') === '/usr/local/bin/actor-host --role runtime --id %i --config /etc/actor-host/runtimes/%i.yaml', `ExecStart=${unit.get('Service', 'ExecStart')}`);
  want(unit.get('Service', 'Restart') === 'always', `Restart=${unit.get('Service', 'Restart')}, not always`);
  want(systemdSeconds(unit.get('Service', 'RestartSec')) > 0, 'no RestartSec=');
  want(unit.all('Service', 'EnvironmentFile').includes('-/etc/actor-host/runtime.env'), 'no EnvironmentFile=-/etc/actor-host/runtime.env');
  const port = hostCfg?.manager?.port;
  const expected = `ws://127.0.0.1:${port}`;
  const envLines = unit.all('Service', 'Environment').filter((e) => e.startsWith('GENKIT_REFLECTION_V2_SERVER='));
  want(envLines.every((e) => e === `GENKIT_REFLECTION_V2_SERVER=${expected}`), `a default GENKIT_REFLECTION_V2_SERVER other than ${expected}: ${envLines}`);
  const fileValue = runtimeEnvText.match(/^GENKIT_REFLECTION_V2_SERVER=(.*)$/m)?.[1];
  want(fileValue === expected, `runtime.env sets GENKIT_REFLECTION_V2_SERVER=${fileValue}, host.yaml's manager listens on ${expected}`);
  return problems;
}

export function haveSystemdAnalyze() {
  const r = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  return !r.error && r.status === 0;
}

/**
 * `systemd-analyze verify` of a unit file, from a copy in a temp dir whose
 * ExecStart binary is swapped for one that exists (the installed path does
 * not exist here). A template is verified as instance `name@check`. Returns
 * problems: a non-zero exit, or any line about this unit (systemd only warns,
 * exit 0, about unknown keys and values it "ignores").
 */
export function systemdVerify(unitText, unitName, { binary = ACTOR_HOST_BIN } = {}) {
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'units-'));
  const exe = fs.existsSync(binary) ? binary : process.execPath;
  const swapped = unitText.replaceAll('/usr/local/bin/actor-host', exe);
  fs.writeFileSync(path.join(dir, unitName), swapped);
  const target = unitName.endsWith('@.service') ? unitName.replace('@.service', '@check.service') : unitName;
  const r = spawnSync('systemd-analyze', ['verify', path.join(dir, target)], {
    encoding: 'utf8',
    env: { ...process.env, SYSTEMD_LOG_COLOR: '0', SYSTEMD_PAGER: '' },
  });
  const lines = `${r.stdout}\n${r.stderr}`.split('\n').filter(Boolean);
  const stem = unitName.replace(/@?\.service$/, '');
  const ours = lines.filter((l) => l.includes(dir) || l.includes(stem));
  const problems = [];
  if (r.error) problems.push(`systemd-analyze: ${r.error.message}`);
  if (r.status !== 0) problems.push(`systemd-analyze verify exited ${r.status}`);
  problems.push(...ours.map((l) => l.replaceAll(dir, '<dir>')));
  return { problems: [...new Set(problems)], output: lines };
}
