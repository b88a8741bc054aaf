// The checks of the operator recipes in deploy/ (deploy.test.mjs; tested
// against broken copies in deploy-validators.test.mjs): strict YAML, the host
// config format as specified for `actor-host config`, the Kubernetes objects
// taken together, and runs of `actor-host config`. The systemd units' checks
// are in deploy-systemd.mjs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import { ACTOR_HOST_BIN, INTEROP_NODE_DIR } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..', '..');
export const DEPLOY = path.join(repoRoot, 'deploy');
export const HOST_YAML = path.join(DEPLOY, 'host.yaml');
export const K8S = path.join(DEPLOY, 'k8s');
export const SYSTEMD = path.join(DEPLOY, 'systemd');

// ESM ignores NODE_PATH: load 'yaml' from the setup.sh directory.
const YAML = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'))('yaml');

export const tmpRoot = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'actor-host-deploy-'));
after(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

export const rel = (file) => path.relative(repoRoot, file);

// ---------------------------------------------------------------------------
// YAML

/**
 * Parses every document of `text` strictly (duplicate keys, unknown tags and
 * syntax errors all throw, with `where` and the line); empty documents are
 * dropped. Returns plain JS values.
 */
export function parseYamlDocs(text, where) {
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

export function parseYamlFile(file) {
  return parseYamlDocs(fs.readFileSync(file, 'utf8'), rel(file));
}

export function yamlFilesUnder(dir) {
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

export const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;

export const MANAGER_KEYS = {
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
export const SERVICE_KEYS = {
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
export function checkHostConfig(cfg) {
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
export function stopBudgetMs(cfg) {
  const drain = parseDuration(cfg?.manager?.drain_timeout ?? HOST_DEFAULTS.drain_timeout);
  const graces = (cfg?.services ?? []).map((s) => parseDuration(s.stop_grace ?? HOST_DEFAULTS.stop_grace));
  return drain + Math.max(0, ...graces);
}

// ---------------------------------------------------------------------------
// Kubernetes

export function loadK8sObjects() {
  const objects = [];
  for (const file of fs.readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')) {
    for (const obj of parseYamlFile(path.join(K8S, file))) objects.push({ ...obj, __file: file });
  }
  return objects;
}

function containerArgv(c) {
  return [...(c.command ?? []), ...(c.args ?? [])];
}

export function roleOf(deployment) {
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
export function checkK8s(objects) {
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
// actor-host config

export function runConfig(file, env = {}) {
  const r = spawnSync(ACTOR_HOST_BIN, ['config', '--config', file], {
    encoding: 'utf8',
    timeout: 15000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr ?? '', error: r.error };
}

export function describeRun(r) {
  const hint = /not expected|unknown|extraneous/i.test(r.stderr) && !/restart/.test(r.stderr)
    ? ` (does ${ACTOR_HOST_BIN} have the \`config\` subcommand yet?)`
    : '';
  return `exit ${r.code}${r.signal ? ` signal ${r.signal}` : ''}${hint}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
}

/** A copy of `text` with the first `restart:` value replaced: {text, line} (1-based). */
export function breakRestart(text) {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => /^\s*restart:\s*\S/.test(l));
  assert.ok(i >= 0, 'no restart: line to break');
  lines[i] = lines[i].replace(/restart:\s*[^\s#]+/, 'restart: sometimes');
  return { text: lines.join('\n'), line: i + 1 };
}

export function writeTmp(name, text) {
  const file = path.join(tmpRoot, name);
  fs.writeFileSync(file, text);
  return file;
}

export const hostText = fs.readFileSync(HOST_YAML, 'utf8');
