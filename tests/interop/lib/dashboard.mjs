// The dashboard (GET / on the API port) in a real browser, for the
// dashboard tests: Debian's chromium, headless, driven by puppeteer-core.
// Screenshots of each state go to INTEROP_LOG_DIR/dashboard/ (test artifacts).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before } from 'node:test';
import { cleanup, INTEROP_NODE_DIR, startManager } from './harness.mjs';

const puppeteer = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'))('puppeteer-core');
const CHROMIUM = process.env.CHROMIUM_BIN || '/usr/bin/chromium';
const SHOTS = path.join(process.env.INTEROP_LOG_DIR || path.join(os.tmpdir(), 'actor-host-interop-logs'), 'dashboard');

let browser;
let profile;
// Files of the tests (host configs, tokens, trace stores), removed at the end.
export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-dash-'));
const pages = [];

/** Registers the hooks of a dashboard test file: the browser, and cleanup after each test. */
export function useBrowser() {
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
}

/** A new page of the browser, closed after the test. */
export async function newPage() {
  const page = await browser.newPage();
  pages.push(page);
  return page;
}

/** A page on the manager's dashboard that records console errors and failed loads. */
export async function openDashboard(manager, hash = '') {
  const page = await newPage();
  await page.setViewport({ width: 1200, height: 860 });
  page.problems = [];
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  await page.goto(`${manager.apiUrl}/${hash}`, { waitUntil: 'load' });
  await page.waitForFunction(() => document.getElementById('link').classList.contains('live'), { timeout: 10000 });
  return page;
}

export const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

/** Texts of the first cells of a table's rows. */
export function firstCells(page, table) {
  return page.$$eval(`#${table} tbody tr`, (rows) => rows.map((r) => r.cells[0].textContent));
}

export async function startWithDemo() {
  const manager = await startManager(['--demo']);
  await manager.waitForRuntime('demo');
  return manager;
}

export async function openAction(page, key) {
  await page.click('.tab[data-view="actions"]');
  const sel = `#action-list button[data-key="${key}"]`;
  await page.waitForSelector(sel, { timeout: 10000 });
  await page.click(sel);
  await page.waitForFunction((k) => document.getElementById('action-key').textContent === k, {}, key);
}

export const text = (page, id) => page.$eval(`#${id}`, (e) => e.textContent);

/** Waits until the element `id` has text (a result, an error). */
export const shown = (page, id) =>
  page.waitForFunction((i) => document.getElementById(i).textContent !== '', { timeout: 10000 }, id);

/** Presses Run and waits for `id` (result or run-error) to show something. */
export async function runUntilShown(page, id) {
  await page.click('#run-button');
  await shown(page, id);
}
