// The dashboard (GET / on the API port) in a real browser: Debian's chromium,
// headless, driven by puppeteer-core, against the manager with its demo
// runtime and the real Genkit JS runtime. Screenshots of each state go to
// INTEROP_LOG_DIR/dashboard/ (test artifacts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, test } from 'node:test';
import { cleanup, INTEROP_NODE_DIR, startIiiPeer, startIiiWorker, startManager } from './lib/harness.mjs';

const puppeteer = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'))('puppeteer-core');
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const SHOTS = path.join(process.env.INTEROP_LOG_DIR || path.join(os.tmpdir(), 'actor-host-interop-logs'), 'dashboard');

let browser;
let profile;
// Files of the tests (host configs, tokens, trace stores), removed at the end.
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-dash-'));
const pages = [];

before(async () => {
  assert.ok(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: scripts/install-deps.sh installs Debian's chromium`);
  fs.mkdirSync(SHOTS, { recursive: true });
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-chromium-'));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage',
      // A site that is not this machine, for the cross-origin test.
      '--host-resolver-rules=MAP evil.example 127.0.0.1',
    ],
  });
});

afterEach(async () => {
  for (const p of pages.splice(0)) await p.close().catch(() => {});
  await cleanup();
});

after(async () => {
  if (browser) await browser.close();
  if (profile) fs.rmSync(profile, { recursive: true, force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
  await cleanup();
});

/** A page on the manager's dashboard that records console errors and failed loads. */
async function openDashboard(manager, hash = '') {
  const page = await browser.newPage();
  pages.push(page);
  await page.setViewport({ width: 1200, height: 860 });
  page.problems = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(`${manager.apiUrl}/${hash}`, { waitUntil: 'load' });
  await page.waitForFunction(() => document.getElementById('link').classList.contains('live'), { timeout: 10000 });
  return page;
}

const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

/** Texts of the first cells of a table's rows. */
function firstCells(page, table) {
  return page.$$eval(`#${table} tbody tr`, (rows) => rows.map((r) => r.cells[0].textContent));
}

async function startWithDemo() {
  const manager = await startManager(['--demo']);
  await manager.waitForRuntime('demo');
  return manager;
}

async function openAction(page, key) {
  await page.click('.tab[data-view="actions"]');
  const sel = `#action-list button[data-key="${key}"]`;
  await page.waitForSelector(sel, { timeout: 10000 });
  await page.click(sel);
  await page.waitForFunction((k) => document.getElementById('action-key').textContent === k, {}, key);
}

const text = (page, id) => page.$eval(`#${id}`, (e) => e.textContent);

/** Waits until the element `id` has text (a result, an error). */
const shown = (page, id) =>
  page.waitForFunction((i) => document.getElementById(i).textContent !== '', { timeout: 10000 }, id);

/** Presses Run and waits for `id` (result or run-error) to show something. */
async function runUntilShown(page, id) {
  await page.click('#run-button');
  await shown(page, id);
}

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
  const page = await browser.newPage();
  pages.push(page);
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

test('running /flow/echo from the page shows the result', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager, '#actions');
  await openAction(page, '/flow/echo');
  // No input schema: the JSON editor.
  assert.equal(await page.$eval('#raw-input', (e) => e.hidden), false);
  await page.type('#raw-input', '{"hello":"dashboard"}');
  await runUntilShown(page, 'result');
  assert.deepEqual(JSON.parse(await text(page, 'result')), { hello: 'dashboard' });
  assert.match(await text(page, 'trace-id'), /^[0-9a-f]{32}$/);
  await shot(page, '4-echo');
  assert.deepEqual(page.problems, []);
});

test('the form built from the input schema runs /flow/streamCount and shows its chunks in order as they arrive', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager, '#actions');
  await openAction(page, '/flow/streamCount');
  // Fields from the schema: n (required integer), delayMs, yieldEvery.
  const labels = await page.$$eval('#schema-form label', (ls) => ls.map((l) => l.textContent));
  assert.deepEqual(labels, ['n *', 'delayMs', 'yieldEvery']);
  await page.type('#schema-form input[name="n"]', '5');
  await page.type('#schema-form input[name="delayMs"]', '150');
  await page.click('#run-button');
  // The first chunk is on the page while the run still goes on.
  await page.waitForFunction(() => document.querySelectorAll('#chunks li').length >= 1, { timeout: 10000 });
  assert.equal(await text(page, 'result'), '');
  await shown(page, 'result');
  const chunks = await page.$$eval('#chunks li', (ls) => ls.map((l) => JSON.parse(l.textContent)));
  assert.equal(chunks.length, 5);
  const result = JSON.parse(await text(page, 'result'));
  assert.equal(result.count, 5);
  // In order: every chunk is the one after the previous (as the runtime sent them).
  const direct = await manager.stream('/api/streamAction', { key: '/flow/streamCount', input: { n: 5 }, runtimeId: 'demo' });
  // NDJSON: a line per chunk, then the result line.
  const directChunks = (await direct.lines.drain()).slice(0, -1);
  assert.deepEqual(chunks, directChunks);
  await shot(page, '5-stream');
  assert.deepEqual(page.problems, []);
});

test('nested objects, enums and arrays in the form make the JSON the runtime validates', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager, '#actions');
  await openAction(page, '/flow/createOrder');
  // customer and its address are fieldsets; priority an enum; items JSON.
  const legends = await page.$$eval('#schema-form fieldset legend', (ls) => ls.map((l) => l.textContent));
  assert.deepEqual(legends, ['customer', 'address']);
  await page.type('#schema-form input[name="name"]', 'Ada');
  await page.type('#schema-form input[name="street"]', '1 Main St');
  await page.type('#schema-form input[name="city"]', 'Springfield');
  await page.type('#schema-form input[name="zip"]', '123');
  await page.type('#schema-form textarea[name="items"]', '[{"sku":"A-1","qty":2,"unitPrice":1.5}]');
  const high = await page.$eval('#schema-form select[name="priority"]', (e) => [...e.options].find((o) => o.textContent === 'high').value);
  await page.select('#schema-form select[name="priority"]', high);
  // The runtime refuses a bad ZIP: its message, readable.
  await runUntilShown(page, 'run-error');
  assert.match(await text(page, 'run-error'), /^INVALID_ARGUMENT: Schema validation failed/);
  // The JSON editor shows what the form makes; fixed, the run goes through.
  await page.click('#raw-toggle');
  const made = JSON.parse(await page.$eval('#raw-input', (e) => e.value));
  assert.deepEqual(made, {
    customer: { name: 'Ada', address: { street: '1 Main St', city: 'Springfield', zip: '123' } },
    items: [{ sku: 'A-1', qty: 2, unitPrice: 1.5 }],
    priority: 'high',
  });
  await page.click('#raw-toggle');
  await page.type('#schema-form input[name="zip"]', '45');
  await runUntilShown(page, 'result');
  const order = JSON.parse(await text(page, 'result'));
  assert.equal(order.total, 3);
  assert.equal(order.priority, 'high');
  assert.equal(await text(page, 'run-error'), '');
  await shot(page, '5-form');
  assert.deepEqual(page.problems, []);
});

test('cancelling /flow/slow shows CANCELLED', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager, '#actions');
  await openAction(page, '/flow/slow');
  await page.type('#schema-form input[name="ms"]', '60000');
  await page.click('#run-button');
  await page.waitForFunction(() => !document.getElementById('cancel-button').disabled, { timeout: 10000 });
  await page.click('#cancel-button');
  await shown(page, 'run-error');
  assert.match(await text(page, 'run-error'), /^CANCELLED: /);
  await shot(page, '6-cancelled');
  await manager.waitForStats({ 'actors.pending_request': 0 });
  assert.deepEqual(page.problems, []);
});

test('a bidi run takes input from the page and streams back', async () => {
  const manager = await startWithDemo();
  const genkit = await manager.startRuntime('gk', { kind: 'genkit' });
  const page = await openDashboard(manager, '#actions');
  // The real Genkit runtime's bidi flow, chosen by runtime.
  await page.waitForFunction(() => [...document.querySelectorAll('#runtime-select option')].some((o) => o.value === 'gk'));
  await page.select('#runtime-select', 'gk');
  await openAction(page, '/flow/bidiSum');
  await page.click('#run-button');
  await page.waitForSelector('#bidi-form:not([hidden])');
  for (const n of ['2', '3', '10']) {
    await page.type('#bidi-input', n);
    await page.click('#bidi-send');
  }
  await page.waitForFunction(() => document.querySelectorAll('#chunks li').length === 3, { timeout: 10000 });
  await page.click('#bidi-end');
  await shown(page, 'result');
  const chunks = await page.$$eval('#chunks li', (ls) => ls.map((l) => JSON.parse(l.textContent)));
  assert.deepEqual(chunks, [{ runningTotal: 2 }, { runningTotal: 5 }, { runningTotal: 15 }]);
  assert.deepEqual(JSON.parse(await text(page, 'result')), { total: 15, count: 3 });
  await shot(page, '7-bidi');
  assert.deepEqual(page.problems, []);
  await genkit.stop();
});

test('a failing action shows its message, not raw JSON', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager, '#actions');
  await openAction(page, '/flow/fail');
  await runUntilShown(page, 'run-error');
  const shown = await text(page, 'run-error');
  const direct = await manager.post('/api/runAction', { key: '/flow/fail', runtimeId: 'demo' });
  const message = direct.json.error.message;
  assert.ok(shown.endsWith(message), `shown: ${shown}; the API's message: ${message}`);
  assert.match(shown, /^[A-Z_]+: /);
  // Bad JSON in the editor is the page's own readable error; nothing is sent.
  await openAction(page, '/flow/echo');
  await page.type('#raw-input', '{nope');
  await page.click('#run-button');
  assert.match(await text(page, 'run-error'), /^The input is not valid JSON/);
  await shot(page, '8-error');
  assert.deepEqual(page.problems, []);
});

test('with a trace store a run links to its trace: a waterfall of its spans with their input and output', async () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'case-'));
  const manager = await startManager(['--trace-store', path.join(dir, 'traces.sqlite')]);
  const genkit = await manager.startRuntime('gk', { kind: 'genkit' });
  const page = await openDashboard(manager, '#actions');
  await openAction(page, '/flow/echo');
  await page.type('#raw-input', '{"traced":true}');
  await page.click('#run-button');
  await page.waitForSelector('#trace-link:not([hidden])', { timeout: 10000 });
  const traceId = await text(page, 'trace-id');
  await page.click('#trace-link');
  // The runtime exports on its own schedule; the page waits for the root span.
  await page.waitForFunction(() => document.querySelector('#waterfall button') && document.getElementById('span-title').textContent.startsWith('echo'), { timeout: 15000 });
  assert.match(await text(page, 'trace-title'), new RegExp(`^echo · ${traceId}$`));
  assert.deepEqual(JSON.parse(await text(page, 'span-input')), { traced: true });
  assert.deepEqual(JSON.parse(await text(page, 'span-output')), { traced: true });
  await shot(page, '10-trace');
  // The list has it too.
  await page.click('#traces-refresh');
  await page.waitForFunction((id) => [...document.querySelectorAll('#traces tbody tr')].some((r) => r.cells[4].textContent === id), { timeout: 10000 }, traceId);
  assert.deepEqual(page.problems, []);
  await genkit.stop();
});

test('without a trace store the traces view says how to get one', async () => {
  const manager = await startWithDemo();
  const page = await openDashboard(manager, '#traces');
  await page.waitForFunction(() => document.getElementById('traces-error').textContent !== '', { timeout: 10000 });
  assert.match(await text(page, 'traces-error'), /start the manager with --trace-store/);
  // The failed fetch is the page's own 404, reported to the user, not a script error.
  assert.deepEqual(page.problems.filter((p) => !/404/.test(p)), []);
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
    const page = await browser.newPage();
    pages.push(page);
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
