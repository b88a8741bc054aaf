// The operator recipes in deploy/: every YAML file parses; the example host
// config and the one inside the Kubernetes ConfigMap follow the host config
// format and pass `actor-host config`; the Kubernetes objects fit together
// (probes, Service selector and ports, the runtime's manager URL, the grace
// period against drain_timeout); the systemd units say what deploy/README.md
// promises and pass `systemd-analyze verify`. The validators below are tested
// against broken copies too, so a check that cannot fail would show.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { ACTOR_HOST_BIN, INTEROP_NODE_DIR } from './lib/harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const DEPLOY = path.join(repoRoot, 'deploy');
const HOST_YAML = path.join(DEPLOY, 'host.yaml');
const K8S = path.join(DEPLOY, 'k8s');
const SYSTEMD = path.join(DEPLOY, 'systemd');

// ESM ignores NODE_PATH: load 'yaml' from the setup.sh directory.
const YAML = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'))('yaml');

const tmpRoot = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'actor-host-deploy-'));
after(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

const rel = (file) => path.relative(repoRoot, file);

// ---------------------------------------------------------------------------
// YAML

/**
 * Parses every document of `text` strictly (duplicate keys, unknown tags and
 * syntax errors all throw, with `where` and the line); empty documents are
 * dropped. Returns plain JS values.
 */
function parseYamlDocs(text, where) {
  const docs = YAML.parseAllDocuments(text, { prettyErrors: true, uniqueKeys: true, strict: true });
  const problems = [];
  for (const doc of docs) {
    for (const e of [...doc.errors, ...doc.warnings]) {
      const pos = e.linePos?.[0];
      problems.push(`${where}:${pos ? `${pos.line}:${pos.col}` : '?'}: ${e.code}: ${e.message.split('\n')[0]}`);
    }
  }
  if (problems.length) throw new Error(problems.join('\n'));
  return docs.filter((d) => d.contents !== null).map((d) => d.toJS());
}

function parseYamlFile(file) {
  return parseYamlDocs(fs.readFileSync(file, 'utf8'), rel(file));
}

function yamlFilesUnder(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...yamlFilesUnder(p));
    else if (/\.ya?ml$/.test(entry.name)) out.push(p);
  }
  return out.sort();
}

// ---------------------------------------------------------------------------
// Host config (the manager's --config), as specified for `actor-host config`

/** "250ms", "30s", "2m" or a plain number of ms -> ms; anything else -> null. */
function parseDuration(v) {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? v : null;
  if (typeof v !== 'string') return null;
  const m = v.match(/^(\d+)(ms|s|m)?$/);
  if (!m) return null;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2] ?? 'ms'];
}

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;

const MANAGER_KEYS = {
  bind: (v) => typeof v === 'string' && v.length > 0,
  port: (v) => isInt(v, 0, 65535),
  http_port: (v) => isInt(v, 0, 65535),
  worker_port: (v) => isInt(v, 0, 65535),
  worker_rbac_port: (v) => v === 'off' || isInt(v, 0, 65535),
  worker_auth_function: (v) => typeof v === 'string',
  worker_expose_functions: (v) => typeof v === 'string',
  worker_on_function_registration: (v) => typeof v === 'string',
  worker_on_trigger_type_registration: (v) => typeof v === 'string',
  worker_on_trigger_registration: (v) => typeof v === 'string',
  worker_middleware: (v) => typeof v === 'string',
  request_timeout: (v) => parseDuration(v) > 0,
  run_timeout: (v) => parseDuration(v) !== null,
  drain_timeout: (v) => parseDuration(v) !== null,
  max_frame_bytes: (v) => isInt(v, 1, Number.MAX_SAFE_INTEGER),
  max_body_bytes: (v) => isInt(v, 1, Number.MAX_SAFE_INTEGER),
  auth_token_file: (v) => typeof v === 'string',
  allowed_origins: (v) => typeof v === 'string',
  allowed_hosts: (v) => typeof v === 'string',
  log_level: (v) => ['trace', 'debug', 'info', 'warn', 'error'].includes(v),
  log_format: (v) => ['text', 'json'].includes(v),
  scheduler_threads: (v) => isInt(v, 1, 64),
  io_threads: (v) => isInt(v, 1, 64),
  actors_on_io_threads: (v) => typeof v === 'boolean',
};
const SERVICE_KEYS = {
  name: (v) => typeof v === 'string' && /^\S+$/.test(v),
  command: (v) => Array.isArray(v) && v.length > 0 && v.every((a) => typeof a === 'string' && a.length > 0),
  runtime_id: (v) => typeof v === 'string' && /^\S+$/.test(v),
  env: (v) => isMap(v) && Object.values(v).every((x) => ['string', 'number', 'boolean'].includes(typeof x)),
  cwd: (v) => typeof v === 'string' && v.length > 0,
  restart: (v) => ['never', 'on-failure', 'always'].includes(v),
  backoff: (v) => parseDuration(v) > 0,
  max_backoff: (v) => parseDuration(v) > 0,
  max_restarts: (v) => isInt(v, 0, Number.MAX_SAFE_INTEGER),
  ready_timeout: (v) => parseDuration(v) > 0,
  stop_grace: (v) => parseDuration(v) !== null,
  register: (v) => typeof v === 'boolean',
  inherit_env: (v) => typeof v === 'boolean' || (Array.isArray(v) && v.every((n) => typeof n === 'string' && /^[A-Za-z_][A-Za-z0-9_]*\*?$/.test(n))),
};
const HOST_DEFAULTS = { drain_timeout: 15000, stop_grace: 5000 };

/** Problems of a parsed host config against the format; [] when it fits. */
function checkHostConfig(cfg) {
  const problems = [];
  if (!isMap(cfg)) return ['the host config is not a mapping'];
  for (const k of Object.keys(cfg)) if (!['manager', 'services'].includes(k)) problems.push(`unknown top-level key ${k}`);
  const checkKeys = (obj, spec, where) => {
    for (const [k, v] of Object.entries(obj)) {
      if (!(k in spec)) problems.push(`${where}: unknown key ${k}`);
      else if (!spec[k](v)) problems.push(`${where}.${k}: invalid value ${JSON.stringify(v)}`);
    }
  };
  if (cfg.manager !== undefined) {
    if (isMap(cfg.manager)) checkKeys(cfg.manager, MANAGER_KEYS, 'manager');
    else problems.push('manager: not a mapping');
  }
  if (cfg.services !== undefined) {
    if (!Array.isArray(cfg.services)) problems.push('services: not a list');
    const names = new Set();
    const ids = new Set();
    for (const [i, s] of (Array.isArray(cfg.services) ? cfg.services : []).entries()) {
      const where = `services[${i}]`;
      if (!isMap(s)) {
        problems.push(`${where}: not a mapping`);
        continue;
      }
      checkKeys(s, SERVICE_KEYS, where);
      for (const k of ['name', 'command']) if (s[k] === undefined) problems.push(`${where}: ${k} is required`);
      if (names.has(s.name)) problems.push(`${where}: duplicate name ${s.name}`);
      names.add(s.name);
      const id = s.runtime_id ?? s.name;
      if (s.register !== false) {
        if (ids.has(id)) problems.push(`${where}: duplicate runtime id ${id}`);
        ids.add(id);
      }
      if (parseDuration(s.backoff ?? 500) > parseDuration(s.max_backoff ?? 30000)) {
        problems.push(`${where}: backoff exceeds max_backoff`);
      }
    }
  }
  return problems;
}

/** The longest a manager with `cfg` may take to stop after SIGTERM (drain, then its services), in ms. */
function stopBudgetMs(cfg) {
  const drain = parseDuration(cfg?.manager?.drain_timeout ?? HOST_DEFAULTS.drain_timeout);
  const graces = (cfg?.services ?? []).map((s) => parseDuration(s.stop_grace ?? HOST_DEFAULTS.stop_grace));
  return drain + Math.max(0, ...graces);
}

// ---------------------------------------------------------------------------
// Kubernetes

function loadK8sObjects() {
  const objects = [];
  for (const file of fs.readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')) {
    for (const obj of parseYamlFile(path.join(K8S, file))) objects.push({ ...obj, __file: file });
  }
  return objects;
}

function containerArgv(c) {
  return [...(c.command ?? []), ...(c.args ?? [])];
}

function roleOf(deployment) {
  const argv = containerArgv(deployment.spec?.template?.spec?.containers?.[0] ?? {});
  const i = argv.indexOf('--role');
  return i >= 0 ? argv[i + 1] : undefined;
}

/** A container port given by number or by name -> its number. */
function resolvePort(container, port) {
  if (typeof port === 'number') return port;
  return (container.ports ?? []).find((p) => p.name === port)?.containerPort;
}

const labelsMatch = (selector, labels) =>
  isMap(selector) && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

/** The ConfigMap's host.yaml, parsed: {cfg} or {error}. */
function embeddedHostConfig(configMap) {
  const text = configMap?.data?.['host.yaml'];
  if (typeof text !== 'string') return { error: 'ConfigMap actor-host-config has no data.host.yaml' };
  try {
    const docs = parseYamlDocs(text, 'k8s/configmap.yaml data.host.yaml');
    if (docs.length !== 1) return { error: `data.host.yaml holds ${docs.length} documents, not 1` };
    return { cfg: docs[0] };
  } catch (e) {
    return { error: e.message };
  }
}

/** Problems of the Kubernetes objects taken together; [] when they fit. */
function checkK8s(objects) {
  const problems = [];
  const want = (cond, msg) => cond || problems.push(msg);
  const ofKind = (kind) => objects.filter((o) => o.kind === kind);
  const configMaps = ofKind('ConfigMap');
  const deployments = ofKind('Deployment');
  const services = ofKind('Service');
  want(configMaps.length === 1, `expected 1 ConfigMap, found ${configMaps.length}`);
  want(deployments.length === 2, `expected 2 Deployments, found ${deployments.length}`);
  want(services.length === 1, `expected 1 Service, found ${services.length}`);
  for (const o of objects) want(o.apiVersion && o.metadata?.name, `${o.__file}: an object without apiVersion or metadata.name`);

  const configMap = configMaps.find((c) => c.metadata?.name === 'actor-host-config');
  want(configMap, 'no ConfigMap named actor-host-config');
  const { cfg, error } = embeddedHostConfig(configMap);
  if (error) problems.push(error);
  if (cfg) {
    for (const p of checkHostConfig(cfg)) problems.push(`ConfigMap host.yaml: ${p}`);
    want(cfg.manager?.bind === '0.0.0.0', `ConfigMap host.yaml: manager.bind is ${cfg.manager?.bind}, not 0.0.0.0 (in a pod)`);
    want(isInt(cfg.manager?.port, 1, 65535), 'ConfigMap host.yaml: manager.port must be fixed (the runtimes dial it)');
  }
  const reflectionPort = cfg?.manager?.port;
  const httpPort = cfg?.manager?.http_port ?? 4100;

  for (const d of deployments) {
    const name = d.metadata?.name;
    const tpl = d.spec?.template;
    want(labelsMatch(d.spec?.selector?.matchLabels, tpl?.metadata?.labels), `Deployment ${name}: selector.matchLabels does not match its pod labels`);
    for (const c of tpl?.spec?.containers ?? []) {
      want(c.image, `Deployment ${name}: container ${c.name} has no image`);
      for (const kind of ['requests', 'limits']) {
        want(c.resources?.[kind]?.cpu && c.resources?.[kind]?.memory, `Deployment ${name}: container ${c.name} lacks resources.${kind} cpu/memory`);
      }
    }
  }

  const manager = deployments.find((d) => roleOf(d) === 'manager');
  const runtime = deployments.find((d) => roleOf(d) === 'runtime');
  want(manager, 'no Deployment runs --role manager');
  want(runtime, 'no Deployment runs --role runtime');
  const service = services[0];

  if (manager) {
    const pod = manager.spec.template.spec;
    const c = pod.containers?.[0] ?? {};
    const argv = containerArgv(c);
    const configPath = argv[argv.indexOf('--config') + 1];
    want(argv.includes('--config') && configPath === '/etc/actor-host/host.yaml', `manager: --config is ${configPath}, not /etc/actor-host/host.yaml`);
    const volume = (pod.volumes ?? []).find((v) => v.configMap?.name === 'actor-host-config');
    want(volume, 'manager: no volume from ConfigMap actor-host-config');
    const mount = (c.volumeMounts ?? []).find((m) => m.name === volume?.name);
    want(mount?.mountPath === '/etc/actor-host', `manager: the config volume is mounted at ${mount?.mountPath}, not /etc/actor-host`);
    const items = volume?.configMap?.items;
    want(!items || items.some((it) => it.key === 'host.yaml' && it.path === 'host.yaml'), 'manager: the config volume leaves out host.yaml');

    want(resolvePort(c, 'reflection') === reflectionPort, `manager: container port "reflection" is ${resolvePort(c, 'reflection')}, host.yaml says ${reflectionPort}`);
    want(resolvePort(c, 'http') === httpPort, `manager: container port "http" is ${resolvePort(c, 'http')}, host.yaml says ${httpPort}`);
    for (const [probe, pathWanted] of [['livenessProbe', '/healthz'], ['readinessProbe', '/readyz']]) {
      const get = c[probe]?.httpGet;
      want(get?.path === pathWanted, `manager: ${probe} path is ${get?.path}, not ${pathWanted}`);
      want(get && resolvePort(c, get.port) === httpPort, `manager: ${probe} port ${get?.port} is not the http port ${httpPort}`);
    }
    const grace = pod.terminationGracePeriodSeconds;
    const budget = stopBudgetMs(cfg) / 1000;
    want(typeof grace === 'number' && grace > budget, `manager: terminationGracePeriodSeconds ${grace} must exceed drain_timeout + stop_grace = ${budget}s`);

    if (service) {
      const labels = manager.spec.template.metadata?.labels;
      want(labelsMatch(service.spec?.selector, labels), `Service ${service.metadata?.name}: selector does not select the manager pods`);
      if (runtime) {
        want(!labelsMatch(service.spec?.selector, runtime.spec.template.metadata?.labels), `Service ${service.metadata?.name}: selector also selects the runtime pods`);
      }
      const declared = (c.ports ?? []).map((p) => p.containerPort);
      const targets = (service.spec?.ports ?? []).map((p) => ({ port: p.port, target: resolvePort(c, p.targetPort ?? p.port) }));
      for (const t of targets) want(declared.includes(t.target), `Service: port ${t.port} targets no container port of the manager`);
      want(targets.some((t) => t.target === reflectionPort), 'Service: no port reaches the reflection port');
      want(targets.some((t) => t.target === httpPort), 'Service: no port reaches the http port');
    }
  }

  if (runtime && service) {
    const c = runtime.spec.template.spec.containers?.[0] ?? {};
    want(containerArgv(c).includes('--demo'), 'runtime: not started with --demo');
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
    const urlText = env.GENKIT_REFLECTION_V2_SERVER?.value;
    let url;
    try {
      url = new URL(urlText);
    } catch {
      problems.push(`runtime: GENKIT_REFLECTION_V2_SERVER is not a URL: ${urlText}`);
    }
    if (url) {
      const svc = service.metadata?.name;
      want(url.protocol === 'ws:', `runtime: ${urlText} is not ws://`);
      want(url.hostname === svc || url.hostname.startsWith(`${svc}.`), `runtime: ${urlText} does not name the Service ${svc}`);
      const sp = (service.spec?.ports ?? []).find((p) => p.port === Number(url.port || 80));
      const managerC = manager?.spec.template.spec.containers?.[0] ?? {};
      want(sp && resolvePort(managerC, sp.targetPort ?? sp.port) === reflectionPort, `runtime: ${urlText} does not reach the manager's reflection port through the Service`);
    }
    want(env.GENKIT_RUNTIME_ID?.valueFrom?.fieldRef?.fieldPath === 'metadata.name', 'runtime: GENKIT_RUNTIME_ID does not come from metadata.name');
    // The runtimes hold the token the manager checks (off loopback one is needed).
    const tokenFile = cfg?.manager?.auth_token_file;
    want(tokenFile, 'ConfigMap host.yaml: manager.auth_token_file is not set (peers off loopback need a token)');
    const secretOf = (pod, file) => {
      const ctr = pod.containers?.[0] ?? {};
      const mount = (ctr.volumeMounts ?? []).find((m) => file?.startsWith(`${m.mountPath}/`));
      return (pod.volumes ?? []).find((v) => v.name === mount?.name)?.secret?.secretName;
    };
    const managerSecret = manager && secretOf(manager.spec.template.spec, tokenFile);
    want(managerSecret, `manager: ${tokenFile} is not mounted from a Secret`);
    const rtFile = env.ACTOR_HOST_AUTH_TOKEN_FILE?.value;
    want(rtFile && secretOf(runtime.spec.template.spec, rtFile) === managerSecret, `runtime: ACTOR_HOST_AUTH_TOKEN_FILE (${rtFile}) is not the manager's Secret ${managerSecret}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------
// systemd

/** A unit file as {Section: [{key, value, line}]}; continuation lines joined. */
function parseUnit(text) {
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
function checkManagerUnit(text, hostCfg) {
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
function checkRuntimeUnit(text, hostCfg, runtimeEnvText) {
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

function haveSystemdAnalyze() {
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
function systemdVerify(unitText, unitName, { binary = ACTOR_HOST_BIN } = {}) {
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

// ---------------------------------------------------------------------------
// actor-host config

function runConfig(file, env = {}) {
  const r = spawnSync(ACTOR_HOST_BIN, ['config', '--config', file], {
    encoding: 'utf8',
    timeout: 15000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

function describeRun(r) {
  const hint = /not expected|unknown|extraneous/i.test(r.stderr) && !/restart/.test(r.stderr)
    ? ` (does ${ACTOR_HOST_BIN} have the \`config\` subcommand yet?)`
    : '';
  return `exit ${r.code}${r.signal ? ` signal ${r.signal}` : ''}${hint}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
}

/** A copy of `text` with the first `restart:` value replaced: {text, line} (1-based). */
function breakRestart(text) {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => /^\s*restart:\s*\S/.test(l));
  assert.ok(i >= 0, 'no restart: line to break');
  lines[i] = lines[i].replace(/restart:\s*[^\s#]+/, 'restart: sometimes');
  return { text: lines.join('\n'), line: i + 1 };
}

function writeTmp(name, text) {
  const file = path.join(tmpRoot, name);
  fs.writeFileSync(file, text);
  return file;
}

// ---------------------------------------------------------------------------
// The recipes

const hostText = fs.readFileSync(HOST_YAML, 'utf8');

describe('every YAML file under deploy/', () => {
  const files = yamlFilesUnder(DEPLOY);

  test('the expected files are there', () => {
    const names = files.map(rel);
    for (const f of ['deploy/host.yaml', 'deploy/k8s/configmap.yaml', 'deploy/k8s/manager.yaml', 'deploy/k8s/runtime.yaml', 'deploy/k8s/kustomization.yaml']) {
      assert.ok(names.includes(f), `${f} is missing (found ${names.join(', ')})`);
    }
  });

  for (const file of files) {
    test(`${rel(file)} parses`, () => {
      const docs = parseYamlFile(file);
      assert.ok(docs.length > 0, 'no document');
    });
  }
});

describe('deploy/host.yaml', () => {
  test('follows the host config format, with the three kinds of service', () => {
    const [cfg] = parseYamlDocs(hostText, 'deploy/host.yaml');
    assert.deepEqual(checkHostConfig(cfg), []);
    const services = cfg.services;
    assert.ok(services.some((s) => s.command[0] === 'actor-host' && s.command.includes('--demo')), 'a demo runtime service');
    assert.ok(services.some((s) => s.command[0] === 'node' && s.cwd && isMap(s.env)), 'a Node app service with cwd and env');
    assert.ok(services.some((s) => s.register === false), 'a plain program with register: false');
  });

  test('every key of the format is shown, each with a comment', () => {
    const [cfg] = parseYamlDocs(hostText, 'deploy/host.yaml');
    assert.deepEqual(Object.keys(MANAGER_KEYS).filter((k) => !(k in cfg.manager)), [], 'manager keys not shown');
    const shown = new Set(cfg.services.flatMap((s) => Object.keys(s)));
    assert.deepEqual(Object.keys(SERVICE_KEYS).filter((k) => !shown.has(k)), [], 'service keys not shown');
    // The first occurrence of each key has a comment on its line or the line above.
    const lines = hostText.split('\n');
    const uncommented = [...Object.keys(MANAGER_KEYS), ...Object.keys(SERVICE_KEYS)].filter((k) => {
      const i = lines.findIndex((l) => new RegExp(`^\\s*(- )?${k}:`).test(l));
      return !(lines[i].includes('#') || lines[i - 1]?.trim().startsWith('#'));
    });
    assert.deepEqual(uncommented, []);
  });

  test('`actor-host config` accepts it', () => {
    const r = runConfig(HOST_YAML);
    assert.equal(r.code, 0, describeRun(r));
    // It prints the effective configuration, services included.
    for (const name of ['demo', 'app', 'static']) assert.match(r.stdout, new RegExp(`\\b${name}\\b`), describeRun(r));
  });

  test('`actor-host config` rejects a bad restart: value with file:line and exit 2', () => {
    const broken = breakRestart(hostText);
    const file = writeTmp('host-broken.yaml', broken.text);
    const r = runConfig(file);
    assert.equal(r.code, 2, describeRun(r));
    assert.ok(r.stderr.includes(`${file}:${broken.line}:`), `stderr names ${file}:${broken.line}:\n${describeRun(r)}`);
    assert.match(r.stderr, /restart/, describeRun(r));
  });
});

describe('deploy/k8s', () => {
  test('the objects fit together', () => {
    const objects = loadK8sObjects();
    assert.deepEqual(checkK8s(objects), []);
    const kinds = objects.map((o) => o.kind).sort();
    assert.deepEqual(kinds, ['ConfigMap', 'Deployment', 'Deployment', 'Secret', 'Service']);
  });

  test('kustomization.yaml lists exactly the manifests', () => {
    const [k] = parseYamlFile(path.join(K8S, 'kustomization.yaml'));
    assert.equal(k.kind, 'Kustomization');
    const manifests = fs.readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml').sort();
    assert.deepEqual([...k.resources].sort(), manifests);
  });

  test('kubectl kustomize renders it', (t) => {
    const probe = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) return t.skip('kubectl not found');
    const r = spawnSync('kubectl', ['kustomize', K8S], { encoding: 'utf8', timeout: 30000 });
    assert.equal(r.status, 0, r.stderr);
    const rendered = parseYamlDocs(r.stdout, 'kubectl kustomize output');
    assert.deepEqual(rendered.map((o) => o.kind).sort(), ['ConfigMap', 'Deployment', 'Deployment', 'Secret', 'Service']);
  });

  test('`actor-host config` accepts the ConfigMap\'s host.yaml', () => {
    const configMap = loadK8sObjects().find((o) => o.kind === 'ConfigMap');
    const file = writeTmp('configmap-host.yaml', configMap.data['host.yaml']);
    const r = runConfig(file);
    assert.equal(r.code, 0, describeRun(r));
  });
});

describe('deploy/systemd', () => {
  const [hostCfg] = parseYamlDocs(hostText, 'deploy/host.yaml');
  const managerText = fs.readFileSync(path.join(SYSTEMD, 'actor-host-manager.service'), 'utf8');
  const runtimeText = fs.readFileSync(path.join(SYSTEMD, 'actor-host-runtime@.service'), 'utf8');
  const runtimeEnv = fs.readFileSync(path.join(SYSTEMD, 'runtime.env'), 'utf8');

  test('the manager unit: ExecStart, stop timing against drain_timeout, hardening', () => {
    assert.deepEqual(checkManagerUnit(managerText, hostCfg), []);
  });

  test('the runtime template unit: ExecStart with %i, manager URL from runtime.env', () => {
    assert.deepEqual(checkRuntimeUnit(runtimeText, hostCfg, runtimeEnv), []);
  });

  for (const [name, text] of [['actor-host-manager.service', managerText], ['actor-host-runtime@.service', runtimeText]]) {
    test(`systemd-analyze verify ${name}`, (t) => {
      if (!haveSystemdAnalyze()) return t.skip('systemd-analyze not found');
      const { problems, output } = systemdVerify(text, name);
      for (const l of output) t.diagnostic(l);
      assert.deepEqual(problems, []);
    });
  }
});

// ---------------------------------------------------------------------------
// The validators catch broken input

describe('the checks fail on broken recipes', () => {
  test('YAML: a syntax error and a duplicate key are reported with their line', () => {
    assert.throws(() => parseYamlDocs('a: 1\nb: [1, 2\nc: 3\n', 'bad.yaml'), /bad\.yaml:\d+:\d+:/);
    assert.throws(() => parseYamlDocs('a: 1\nb: 2\na: 3\n', 'dup.yaml'), /dup\.yaml:3:1: DUPLICATE_KEY/);
    assert.throws(() => parseYamlDocs('kind: Service\n---\nkind: Service\nkind: Deployment\n', 'multi.yaml'), /multi\.yaml:4:1: DUPLICATE_KEY/);
  });

  test('host config: bad enum, unknown key, bad duration, missing command, duplicate name', () => {
    const [cfg] = parseYamlDocs(hostText, 'deploy/host.yaml');
    const broken = structuredClone(cfg);
    broken.services[0].restart = 'sometimes';
    broken.manager.drain_timout = '15s';
    broken.manager.request_timeout = '15 s';
    delete broken.services[1].command;
    broken.services[2].name = broken.services[0].name;
    const problems = checkHostConfig(broken).join('\n');
    assert.match(problems, /services\[0\]\.restart: invalid value "sometimes"/);
    assert.match(problems, /manager: unknown key drain_timout/);
    assert.match(problems, /manager\.request_timeout: invalid value "15 s"/);
    assert.match(problems, /services\[1\]: command is required/);
    assert.match(problems, /services\[2\]: duplicate name demo/);
    assert.deepEqual(checkHostConfig(parseYamlDocs(breakRestart(hostText).text, 'x')[0]), ['services[0].restart: invalid value "sometimes"']);
  });

  test('k8s: each broken link between the objects is reported', () => {
    const good = loadK8sObjects();
    const mutate = (fn) => {
      const objs = structuredClone(good);
      fn({
        configMap: objs.find((o) => o.kind === 'ConfigMap'),
        manager: objs.find((o) => o.kind === 'Deployment' && roleOf(o) === 'manager'),
        runtime: objs.find((o) => o.kind === 'Deployment' && roleOf(o) === 'runtime'),
        service: objs.find((o) => o.kind === 'Service'),
      });
      return checkK8s(objs.filter((o) => !o.__drop)).join('\n');
    };
    const mc = (o) => o.manager.spec.template.spec.containers[0];
    const cases = [
      [(o) => (mc(o).readinessProbe.httpGet.path = '/ready'), /readinessProbe path is \/ready/],
      [(o) => (mc(o).livenessProbe.httpGet.port = 'reflection'), /livenessProbe port reflection is not the http port/],
      [(o) => (mc(o).livenessProbe.httpGet.port = 3100), /livenessProbe port 3100 is not the http port/],
      [(o) => (o.service.spec.selector = { 'app.kubernetes.io/component': 'runtime' }), /selector does not select the manager pods/],
      [(o) => (o.service.spec.selector = { 'app.kubernetes.io/name': 'actor-host' }), /selector also selects the runtime pods/],
      [(o) => (o.service.spec.ports[0].targetPort = 9999), /port 3100 targets no container port/],
      [(o) => (o.manager.spec.template.spec.terminationGracePeriodSeconds = 15), /terminationGracePeriodSeconds 15 must exceed/],
      [(o) => (o.configMap.data['host.yaml'] = o.configMap.data['host.yaml'].replace('drain_timeout: 15s', 'drain_timeout: 45s')), /terminationGracePeriodSeconds 30 must exceed .* 45s/],
      [(o) => (o.configMap.data['host.yaml'] = o.configMap.data['host.yaml'].replace('bind: 0.0.0.0', 'bind: 127.0.0.1')), /bind is 127\.0\.0\.1/],
      [(o) => (o.configMap.data['host.yaml'] += '  - [\n'), /data\.host\.yaml:\d+/],
      [(o) => (o.runtime.spec.template.spec.containers[0].env[0].value = 'ws://actor-host:3100'), /does not name the Service actor-host-manager/],
      [(o) => (o.runtime.spec.template.spec.containers[0].env[0].value = 'ws://actor-host-manager:4100'), /does not reach the manager's reflection port/],
      [(o) => (o.runtime.spec.template.spec.containers[0].env[1] = { name: 'GENKIT_RUNTIME_ID', value: 'x' }), /GENKIT_RUNTIME_ID does not come from metadata\.name/],
      [(o) => (mc(o).volumeMounts[0].mountPath = '/etc/config'), /mounted at \/etc\/config/],
      [(o) => delete mc(o).resources.limits, /lacks resources\.limits/],
      [(o) => (o.configMap.__drop = true), /expected 1 ConfigMap, found 0/],
    ];
    for (const [fn, re] of cases) assert.match(mutate(fn), re, `mutation ${fn} not caught`);
  });

  test('systemd: wrong stop settings and ExecStart are reported', () => {
    const [hostCfg] = parseYamlDocs(hostText, 'deploy/host.yaml');
    const managerText = fs.readFileSync(path.join(SYSTEMD, 'actor-host-manager.service'), 'utf8');
    const runtimeText = fs.readFileSync(path.join(SYSTEMD, 'actor-host-runtime@.service'), 'utf8');
    const runtimeEnv = fs.readFileSync(path.join(SYSTEMD, 'runtime.env'), 'utf8');
    const m = (from, to) => checkManagerUnit(managerText.replace(from, to), hostCfg).join('\n');
    assert.match(m(/^KillMode=mixed$/m, 'KillMode=control-group'), /KillMode=control-group, not mixed/);
    assert.match(m(/^TimeoutStopSec=.*$/m, 'TimeoutStopSec=20s'), /TimeoutStopSec=20s must exceed/);
    assert.match(m(/^ProtectSystem=strict$/m, 'ProtectSystem=full'), /ProtectSystem=full/);
    assert.match(m(/^ExecStart=.*$/m, 'ExecStart=/usr/bin/actor-host --role manager'), /ExecStart=\/usr\/bin\/actor-host/);
    assert.match(m('#Environment=ACTOR_HOST_LOG_LEVEL=debug', '#Environment=ACTOR_HOST_LOGLEVEL=debug'), /ACTOR_HOST_LOGLEVEL overrides no manager key/);
    assert.throws(() => parseUnit('[Service]\nExecStart /bin/true\n'), /line 2/);
    const r = (from, to, env = runtimeEnv) => checkRuntimeUnit(runtimeText.replace(from, to), hostCfg, env).join('\n');
    assert.match(r(/^Restart=always$/m, 'Restart=on-failure'), /Restart=on-failure, not always/);
    assert.match(r(/^EnvironmentFile=-\/etc\/actor-host\/runtime\.env$/m, ''), /no EnvironmentFile=-\/etc\/actor-host\/runtime\.env/);
    assert.match(r('', '', runtimeEnv.replace(':3100', ':3200')), /runtime\.env sets GENKIT_REFLECTION_V2_SERVER=ws:\/\/127\.0\.0\.1:3200/);
  });

  test('systemd-analyze verify reports a bad value and an unknown key in a unit', (t) => {
    if (!haveSystemdAnalyze()) return t.skip('systemd-analyze not found');
    const text = fs.readFileSync(path.join(SYSTEMD, 'actor-host-runtime@.service'), 'utf8');
    const badValue = systemdVerify(text.replace(/^KillMode=mixed$/m, 'KillMode=bogus'), 'actor-host-runtime@.service');
    assert.match(badValue.problems.join('\n'), /kill mode.*bogus/i);
    const unknownKey = systemdVerify(text.replace(/^LimitNOFILE=/m, 'LimitNOFILES='), 'actor-host-runtime@.service');
    assert.match(unknownKey.problems.join('\n'), /Unknown key.*LimitNOFILES/i);
    const noExec = systemdVerify(text.replace(/^ExecStart=.*$/m, ''), 'actor-host-runtime@.service');
    assert.notDeepEqual(noExec.problems, []);
  });
});
