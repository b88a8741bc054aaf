// The validators of deploy.test.mjs (lib/deploy.mjs, lib/deploy-systemd.mjs)
// against broken copies of the recipes in deploy/: each check must fail on
// what it is there to catch, so a check that cannot fail would show.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { breakRestart, checkHostConfig, checkK8s, hostText, loadK8sObjects, parseYamlDocs, roleOf, SYSTEMD } from './lib/deploy.mjs';
import { checkManagerUnit, checkRuntimeUnit, haveSystemdAnalyze, parseUnit, systemdVerify } from './lib/deploy-systemd.mjs';

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
