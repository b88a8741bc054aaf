// The operator recipes in deploy/: every YAML file parses; the example host
// config and the one inside the Kubernetes ConfigMap follow the host config
// format and pass `actor-host config`; the Kubernetes objects fit together
// (probes, Service selector and ports, the runtime's manager URL, the grace
// period against drain_timeout); the systemd units say what deploy/README.md
// promises and pass `systemd-analyze verify`. The validators (lib/deploy.mjs,
// lib/deploy-systemd.mjs) are tested against broken copies too, in
// deploy-validators.test.mjs, so a check that cannot fail would show.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  breakRestart,
  checkHostConfig,
  checkK8s,
  DEPLOY,
  describeRun,
  HOST_YAML,
  hostText,
  isMap,
  K8S,
  loadK8sObjects,
  MANAGER_KEYS,
  parseYamlDocs,
  parseYamlFile,
  rel,
  runConfig,
  SERVICE_KEYS,
  SYSTEMD,
  writeTmp,
  yamlFilesUnder,
} from './lib/deploy.mjs';
import { checkManagerUnit, checkRuntimeUnit, haveSystemdAnalyze, systemdVerify } from './lib/deploy-systemd.mjs';

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
