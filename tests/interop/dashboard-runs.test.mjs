// Running actions from the dashboard in a real browser (lib/dashboard.mjs),
// against the manager with its demo runtime and the real Genkit JS runtime:
// the JSON editor, the form built from an input schema, streaming chunks,
// cancel, bidi, errors, and a run's trace (with and without a trace store).
// The page and its live views: dashboard.test.mjs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { startManager } from './lib/harness.mjs';
import { openAction, openDashboard, runUntilShown, shot, shown, startWithDemo, text, tmp, useBrowser } from './lib/dashboard.mjs';

useBrowser();

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
