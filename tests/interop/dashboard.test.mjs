// The dashboard (GET / on the API port) in a real browser: Debian's chromium,
// headless, driven by puppeteer-core (lib/dashboard.mjs), against the manager
// with its demo runtime and the real Genkit JS runtime: the page, its live
// views (runtimes, iii workers, services, health, the cluster), the token,
// the keyboard and a narrow window, and a page on another origin. Running
// actions and traces from the page: dashboard-runs.test.mjs. Screenshots of
// each state go to INTEROP_LOG_DIR/dashboard/ (test artifacts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { startIiiPeer, startIiiWorker, startManager } from './lib/harness.mjs';
import { firstCells, newPage, openAction, openDashboard, runUntilShown, shot, shown, startWithDemo, text, tmp, useBrowser } from './lib/dashboard.mjs';

useBrowser();

test('the page loads without console errors and shows the demo runtime, its service and live counts', async () => {
  const manager = await startWithDemo();
  const res = await manager.get('/');
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'], /^text\/html/);
  assert.match(res.headers['content-security-policy'], /default-src 'none'/);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  const page = await openDashboard(manager);
  // No token is configured: no token box; nothing runs: no bidi box.
  assert.equal(await page.$eval('#token-form', (e) => getComputedStyle(e).display), 'none');
  assert.equal(await page.$eval('#bidi-form', (e) => getComputedStyle(e).display), 'none');
  await page.waitForFunction(() => [...document.querySelectorAll('#runtimes tbody tr')].some((r) => r.cells[0].textContent === 'demo'));
  await page.waitForFunction(() => [...document.querySelectorAll('#services tbody tr')].some((r) => r.cells[2].textContent === 'ready'));
  const row = await page.$$eval('#runtimes tbody tr', (rows) => [...rows[0].cells].map((c) => c.textContent));
  const info = (await manager.runtimes())[0];
  assert.equal(row[0], 'demo');
  assert.equal(row[2], info.genkitVersion);
  assert.equal(row[3], String(info.pid));
  await shot(page, '1-overview');
  await page.click('.tab[data-view="health"]');
  // Calls made elsewhere show in the next samples (every 2 s), with the live actors.
  for (let i = 0; i < 20; i++) assert.equal((await manager.post('/api/runAction', { key: '/flow/echo', input: i })).status, 200);
  await page.waitForFunction(() => Number((/: (\d+) calls/.exec(document.getElementById('health-window').textContent) || [0, 0])[1]) >= 20, { timeout: 10000 });
  assert.match(await text(page, 'now-latency'), /peak p99 [0-9.]+ ms/);
  // A line once there are two samples, a dot for the first.
  assert.ok(await page.$('#chart-calls polyline, #chart-calls circle'), 'the calls chart shows the samples');
  assert.ok(Number(await page.$eval('[data-kind="runtime_connection"]', (e) => e.textContent)) >= 1);
  await shot(page, '2-health');
  assert.deepEqual(page.problems, []);
});

test('with a token the page asks for it and then works; its files are cacheable and nothing else is open', async () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'case-'));
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, 's3cret-dashboard-token\n', { mode: 0o600 });
  const manager = await startManager(['--demo', '--auth-token-file', tokenFile]);
  const auth = { headers: { Authorization: 'Bearer s3cret-dashboard-token' } };
  await manager.poll(() => manager.get('/api/runtimes', auth), (r) => r.status === 200 && r.json.length === 1, { what: 'demo registered' });
  // The page and its files need no token; the API does.
  const page1 = await manager.get('/');
  assert.equal(page1.status, 200);
  const etag = page1.headers.etag;
  assert.equal((await manager.get('/', { headers: { 'If-None-Match': etag } })).status, 304);
  assert.equal((await manager.get('/ui/app.js')).status, 200);
  assert.equal((await manager.get('/ui/nope.js')).status, 404); // open prefix, nothing there
  assert.equal((await manager.get('/api/runtimes')).status, 401);
  const page = await newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  await page.goto(`${manager.apiUrl}/`);
  await page.waitForSelector('#token-form:not([hidden])');
  await page.type('#token-input', 'wrong');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('token-error').textContent !== '');
  assert.equal(await text(page, 'token-error'), 'That token was refused.');
  await page.type('#token-input', 's3cret-dashboard-token');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('link').classList.contains('live'), { timeout: 10000 });
  await page.waitForFunction(() => [...document.querySelectorAll('#runtimes tbody tr')].some((r) => r.cells[0].textContent === 'demo'));
  assert.equal(await page.$eval('#token-form', (e) => e.hidden), true);
  assert.deepEqual(page.problems, []);
});

test('a runtime that connects or leaves shows up or disappears without a reload', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager);
  await page.evaluate(() => { window.notReloaded = true; });
  const genkit = await manager.startRuntime('gk', { kind: 'genkit' });
  await page.waitForFunction(() => [...document.querySelectorAll('#runtimes tbody tr')].some((r) => r.cells[0].textContent === 'gk'), { timeout: 10000 });
  assert.deepEqual((await firstCells(page, 'runtimes')).sort(), ['demo', 'gk']);
  await shot(page, '3-runtime-joined');
  await genkit.stop();
  await page.waitForFunction(() => ![...document.querySelectorAll('#runtimes tbody tr')].some((r) => r.cells[0].textContent === 'gk'), { timeout: 10000 });
  assert.deepEqual(await firstCells(page, 'runtimes'), ['demo']);
  assert.equal(await page.evaluate(() => window.notReloaded), true);
  assert.deepEqual(page.problems, []);
});

test('iii workers show with their functions and triggers, live, and their functions run from the page', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager);
  const worker = startIiiWorker(manager.workerUrl, { name: 'dash-worker' });
  const watcher = startIiiPeer('watcher', manager.workerUrl, [], { name: 'dash-watcher' });
  const row = (name) => page.waitForFunction((n) => {
    const r = [...document.querySelectorAll('#workers tbody tr')].find((x) => x.cells[0].textContent.startsWith(n));
    return r && [...r.cells].map((c) => c.textContent);
  }, { timeout: 15000 }, name).then((h) => h.jsonValue());
  await page.waitForFunction(() => [...document.querySelectorAll('#workers tbody tr')].some((r) => r.cells[2].textContent.includes('greet')), { timeout: 15000 });
  const w = await row('dash-worker');
  assert.match(w[2], /greet/);
  assert.match(w[2], /echo/);
  await page.waitForFunction(() => [...document.querySelectorAll('#workers tbody tr')].some((r) => r.cells[3].textContent.includes('engine::workers-available')), { timeout: 15000 });
  const wa = await row('dash-watcher');
  assert.match(wa[3], /engine::workers-available → watch::on_worker/);
  await shot(page, '3-workers');
  // Its functions are a catalog of their own ("iii functions"), run like actions.
  await page.click('.tab[data-view="actions"]');
  await page.select('#runtime-select', 'iii');
  await openAction(page, '/iii/greet');
  await page.type('#raw-input', '{"name":"dashboard"}');
  await runUntilShown(page, 'result');
  assert.equal(JSON.parse(await text(page, 'result')).greeting, 'Hello, dashboard!');
  // A worker that leaves disappears.
  await watcher.stop();
  await page.click('.tab[data-view="overview"]');
  await page.waitForFunction(() => ![...document.querySelectorAll('#workers tbody tr')].some((r) => r.cells[0].textContent.startsWith('dash-watcher')), { timeout: 10000 });
  await worker.stop();
  assert.deepEqual(page.problems, []);
});

test('a failing service shows its backoff, restarts and failure as they happen', async () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'case-'));
  const config = path.join(dir, 'host.yaml');
  fs.writeFileSync(config, [
    'services:',
    '  - name: flaky',
    '    command: [sh, -c, "sleep 0.5; exit 3"]',
    '    register: false',
    '    restart: on-failure',
    '    backoff: 1500ms',
    '    max_restarts: 2',
  ].join('\n') + '\n');
  const manager = await startManager(['--demo', '--config', config]);
  await manager.waitForRuntime('demo');
  const page = await openDashboard(manager);
  // Every state the row shows, in order, as the page receives it.
  await page.evaluate(() => {
    window.seen = [];
    const record = () => {
      const r = [...document.querySelectorAll('#services tbody tr')].find((x) => x.cells[0].textContent === 'flaky');
      const st = r && `${r.cells[2].textContent}/${r.cells[4].textContent}`;
      if (st && window.seen[window.seen.length - 1] !== st) window.seen.push(st);
    };
    record();
    new MutationObserver(record).observe(document.getElementById('services'), { subtree: true, childList: true, characterData: true });
  });
  await page.waitForFunction(() => window.seen.includes('failed/2'), { timeout: 20000 });
  const seen = await page.evaluate(() => window.seen);
  // From whatever it was at load: through a backoff and a restart, to failed.
  assert.ok(seen.includes('backoff/1') || seen.includes('backoff/0'), `states seen: ${seen}`);
  assert.ok(seen.includes('running/2'), `states seen: ${seen}`);
  assert.equal(seen[seen.length - 1], 'failed/2');
  await shot(page, '3-services');
  assert.deepEqual(page.problems, []);
});

test('the page works from the keyboard alone and reads in a narrow window', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager);
  await page.setViewport({ width: 380, height: 800 });
  // Tab to the Actions tab and press Enter; then to the first action; type; Enter runs.
  const focusOn = async (selector) => {
    for (let i = 0; i < 40; i++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate((sel) => document.activeElement?.matches(sel), selector)) return;
    }
    assert.fail(`Tab never reached ${selector}`);
  };
  await focusOn('.tab[data-view="actions"]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#action-list button[data-key="/flow/echo"]');
  await focusOn('#action-list button[data-key="/flow/echo"]');
  await page.keyboard.press('Enter');
  await focusOn('#raw-input');
  await page.keyboard.type('"typed"');
  await focusOn('#run-button');
  await page.keyboard.press('Enter');
  await shown(page, 'result');
  assert.equal(await text(page, 'result'), '"typed"');
  // Nothing wider than the window but the tables' own scroll boxes.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 380 px window`);
  await shot(page, '9-narrow');
  assert.deepEqual(page.problems, []);
});

test('in a cluster the page shows the nodes and every node\'s runtimes, and a lost node goes down', async () => {
  const node = async (name, seeds = []) => {
    const flags = ['--node-name', name, '--cluster-port', '0', '--cluster-heartbeat-interval', '500ms', '--demo'];
    if (seeds.length) flags.push('--cluster-seeds', seeds.join(','));
    const m = await startManager(flags);
    m.clusterAddress = (await m.child.waitForLine(/Cluster node \S+: listening on (\S+)/, 10000))[1];
    return m;
  };
  const a = await node('alpha');
  const b = await node('beta', [a.clusterAddress]);
  await a.waitForRuntime('demo');
  const page = await openDashboard(a);
  await page.waitForFunction(() => [...document.querySelectorAll('#cluster tbody tr')].some((r) => r.cells[0].textContent === 'beta' && r.cells[2].textContent === 'up'), { timeout: 15000 });
  assert.equal(await text(page, 'cluster-self'), 'This node: alpha');
  // Both nodes' demo runtimes, by qualified id, with their node.
  await page.waitForFunction(() => document.querySelectorAll('#runtimes tbody tr').length === 2, { timeout: 15000 });
  const rows = await page.$$eval('#runtimes tbody tr', (rs) => rs.map((r) => [r.cells[0].textContent, r.cells[4].textContent]));
  assert.deepEqual(rows.sort(), [['alpha/demo', 'alpha'], ['beta/demo', 'beta']]);
  await shot(page, '3-cluster');
  b.child.proc.kill('SIGKILL');
  b.child.killRequested = true;
  await page.waitForFunction(() => [...document.querySelectorAll('#cluster tbody tr')].some((r) => r.cells[0].textContent === 'beta' && r.cells[2].textContent !== 'up'), { timeout: 15000 });
  await page.waitForFunction(() => document.querySelectorAll('#runtimes tbody tr').length === 1, { timeout: 15000 });
  assert.deepEqual(page.problems, []);
});

test('a page on another origin cannot run an action or open the live feed', async () => {
  const manager = await startWithDemo();
  const runsBefore = await runCount(manager);
  // The attacker's page, served from http://evil.example:<port>/.
  const evil = http.createServer((req, res) => {
    res.setHeader('Content-Type', 'text/html');
    res.end(`<!doctype html><script>
      const api = ${JSON.stringify(manager.apiUrl.replace('127.0.0.1', 'localhost'))};
      window.results = {};
      const t0 = performance.now();
      const mark = (k, v) => { window.results[k] = v; window.results[k + 'Ms'] = Math.round(performance.now() - t0); };
      const body = JSON.stringify({ key: '/flow/echo', input: 'pwned' });
      fetch(api + '/api/runAction', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body })
        .then((r) => mark('json', 'status ' + r.status), () => mark('json', 'blocked'));
      fetch(api + '/api/runAction', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body })
        .then(() => mark('plain', 'sent'), () => mark('plain', 'blocked'));
      const ws = new WebSocket(api.replace('http', 'ws') + '/api/ws');
      ws.onopen = () => { window.results.ws = 'open'; ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'runAction', params: { key: '/flow/echo', input: 'pwned' } })); };
      ws.onmessage = (m) => { window.results.wsReply = m.data; };
      ws.onclose = () => mark('ws', window.results.ws || 'refused');
    </script>`);
  });
  await new Promise((resolve) => evil.listen(0, '127.0.0.1', resolve));
  try {
    const page = await newPage();
    await page.goto(`http://evil.example:${evil.address().port}/`);
    await page.waitForFunction(() => window.results.json && window.results.plain && window.results.ws, { timeout: 10000 });
    const results = await page.evaluate(() => window.results);
    assert.equal(results.json, 'blocked');     // preflight refused: the Origin is not admitted
    assert.equal(results.ws, 'refused');       // 403 on the upgrade
    assert.equal(results.wsReply, undefined);
    // The no-cors text/plain POST reached the manager and was refused there (403/415).
    const after = await runCount(manager);
    assert.equal(after, runsBefore, 'no run was made from the other origin');
    const refused = await manager.get('/metrics');
    assert.match(refused.text, /actor_host_access_refused_total\{listener="api"\} [1-9]/);
  } finally {
    // The browser keeps its connection alive: close it, or close() waits for it.
    evil.closeAllConnections();
    await new Promise((resolve) => evil.close(resolve));
  }
});

/** runAction requests the manager has sent to runtimes, any outcome. */
async function runCount(manager) {
  const res = await manager.get('/metrics');
  let n = 0;
  for (const line of res.text.split('\n')) {
    const m = line.match(/^actor_host_requests_total\{method="run_action",[^}]*\} (\d+)/);
    if (m) n += Number(m[1]);
  }
  return n;
}
