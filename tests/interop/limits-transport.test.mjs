// Transport caps (issue 11): bytes queued per HTTP response
// (max_write_queue_bytes), connections per listener (max_connections), and
// running out of file descriptors (EMFILE). Each cap bites with a clear
// answer, a log line that does not flood and a metric, and the manager
// keeps serving.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { after, afterEach, test } from 'node:test';
import { cleanup, startManager, withTimeout } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const MiB = 1 << 20;

function rssBytes(pid) {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  return Number(m[1]) * 1024;
}

function metric(text, name, listener) {
  const re = new RegExp(`^${name}\\{listener="${listener}"\\} (\\d+)$`, 'm');
  const m = text.match(re);
  return m ? Number(m[1]) : undefined;
}

/** Opens a TCP connection; resolves once connected, collecting what it receives. */
function rawConnect(port) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.received = '';
    sock.closedPromise = new Promise((r) => sock.once('close', r));
    sock.on('data', (d) => (sock.received += d.toString('latin1')));
    sock.on('error', (e) => (sock.lastError = e));
    sock.once('connect', () => resolve(sock));
    sock.once('error', reject);
  });
}

test('a streamAction caller that never reads: the response is capped, the run cancelled, memory bounded', async (t) => {
  const cap = 4 * MiB;
  // Settings through the environment: an older build ignores them and shows the unbounded behaviour.
  const manager = await startManager([], { env: { ACTOR_HOST_MAX_WRITE_QUEUE_BYTES: String(cap) } });
  const fake = await manager.fakeRuntime('rt-flood');
  const traceId = 'c'.repeat(32);
  const chunk = 'x'.repeat(256 * 1024);
  const budget = 1024 * MiB; // what an unbounded queue would take in
  let sent = 0;
  let cancelled = false;
  fake.handlers.runAction = (_params, msg) => {
    fake.notify('runActionState', { requestId: msg.id, state: { traceId } });
    const frame = `{"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":${JSON.stringify(msg.id)},"chunk":{"d":"${chunk}"}}}`;
    (async () => {
      while (!cancelled && sent < budget && fake.isOpen) {
        // Pace on our own socket so that node's memory stays flat.
        while (fake.ws.bufferedAmount > 8 * MiB && !cancelled) await new Promise((r) => setTimeout(r, 5));
        fake.sendRaw(frame);
        sent += frame.length;
        if (sent % (16 * MiB) < frame.length) await new Promise((r) => setImmediate(r));
      }
    })();
    return undefined;
  };
  fake.cancelRunsOnRequest(() => {
    cancelled = true;
  });
  await fake.register('rt-flood');

  const pid = manager.child.pid;
  const baseline = rssBytes(pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {}
  }, 20);
  // The caller sends its request and then never reads a byte.
  const caller = await rawConnect(manager.apiPort);
  const body = JSON.stringify({ key: '/flow/flood', input: {} });
  caller.write(`POST /api/streamAction HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  caller.pause();
  try {
    await fake.waitFor((m) => m.method === 'cancelAction', 60000, 'cancelAction (the flooded response aborted)');
  } finally {
    clearInterval(sampler);
  }
  const grew = peak - baseline;
  t.diagnostic(`RSS ${(baseline / MiB).toFixed(0)} MiB, peak +${(grew / MiB).toFixed(0)} MiB, ${(sent / MiB).toFixed(0)} MiB streamed before the cancel`);
  assert.ok(sent < budget, `the run was cancelled only after the whole ${budget / MiB} MiB budget`);
  assert.ok(grew < 160 * MiB, `manager RSS grew by ${(grew / MiB).toFixed(0)} MiB while ${(sent / MiB).toFixed(0)} MiB were streamed at a caller that does not read`);
  await manager.waitForStats({ 'actors.pending_request': 0 });
  await manager.child.waitForLine(/dropping HTTP client .* bytes of its response wait to be written \(max_write_queue_bytes 4194304\)/, 2000);
  const metrics = (await manager.get('/metrics')).text;
  assert.ok(metric(metrics, 'actor_host_write_queue_overflows_total', 'api') >= 1, 'overflow counted');
  // The caller leaves; nothing it caused stays.
  caller.destroy();
  const after = rssBytes(pid);
  assert.ok(after - baseline < 160 * MiB, `RSS after the caller left: +${((after - baseline) / MiB).toFixed(0)} MiB`);
  await manager.assertHealthy();
  await fake.close();
});

test('slow readers of big answers together hold at most max_response_bytes_total', async () => {
  const manager = await startManager(['--max-frame-bytes', String(64 * MiB), '--max-response-bytes-total', String(32 * MiB)]);
  const fake = await manager.fakeRuntime('rt-big');
  const big = 'x'.repeat(20 * MiB);
  fake.handlers.runAction = () => ({ result: { result: big } });
  await fake.register('rt-big');
  const body = JSON.stringify({ key: '/flow/big', input: {} });
  const ask = async () => {
    const sock = await rawConnect(manager.apiPort);
    sock.write(`POST /api/runAction HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    sock.pause(); // reads nothing for now
    return sock;
  };
  // The first slow reader's 20 MiB answer is held (counted until written) ...
  const first = await ask();
  await manager.poll(async () => metric((await manager.get('/metrics')).text, 'actor_host_response_bytes', 'api'),
    (v) => v >= 20 * MiB, { what: 'the first answer held for its reader' });
  // ... so the second one's would pass 32 MiB: that call is aborted and its client dropped.
  const second = await ask();
  await second.closedPromise;
  assert.equal(second.received, '');
  await manager.child.waitForLine(/dropping HTTP client .*: its response \(\d+ more bytes\) would pass the 33554432 bytes all responses of this listener may hold \(max_response_bytes_total\)/, 2000);
  assert.equal(metric((await manager.get('/metrics')).text, 'actor_host_response_budget_overflows_total', 'api'), 1);
  // The first reader reads at last and gets its whole answer.
  first.resume();
  await manager.poll(async () => first.received.length, (n) => n > 20 * MiB, { what: 'the first answer read whole', timeoutMs: 20000 });
  assert.match(first.received, /^HTTP\/1\.1 200 /);
  first.destroy();
  await manager.waitForStats({ 'actors.pending_request': 0 });
  await manager.assertHealthy();
  await fake.close();
});

test('an /api/ws caller that never reads a streaming run: dropped at the default cap, the run cancelled, memory bounded', async (t) => {
  // The default max_write_queue_bytes (16 MiB); older builds queued up to 256 MiB per socket.
  const manager = await startManager();
  const fake = await manager.fakeRuntime('rt-flood-ws');
  const chunk = 'y'.repeat(256 * 1024);
  let sent = 0;
  let cancelled = false;
  fake.handlers.runAction = (_params, msg) => {
    fake.notify('runActionState', { requestId: msg.id, state: { traceId: 'd'.repeat(32) } });
    const frame = `{"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":${JSON.stringify(msg.id)},"chunk":{"d":"${chunk}"}}}`;
    (async () => {
      while (!cancelled && sent < 1024 * MiB && fake.isOpen) {
        while (fake.ws.bufferedAmount > 8 * MiB && !cancelled) await new Promise((r) => setTimeout(r, 5));
        fake.sendRaw(frame);
        sent += frame.length;
        if (sent % (16 * MiB) < frame.length) await new Promise((r) => setImmediate(r));
      }
    })();
    return undefined;
  };
  fake.cancelRunsOnRequest(() => {
    cancelled = true;
  });
  await fake.register('rt-flood-ws');
  const pid = manager.child.pid;
  const baseline = rssBytes(pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {}
  }, 20);
  const api = await manager.api('never-reads');
  api.request('runAction', { key: '/flow/flood', input: {}, stream: true }, { id: 's1', timeoutMs: 60000 }).catch(() => {});
  await fake.waitFor((m) => m.method === 'runAction', 5000, 'runAction');
  api.ws.pause(); // from now on the caller reads nothing
  try {
    await fake.waitFor((m) => m.method === 'cancelAction', 60000, 'cancelAction (the flooded caller dropped)');
  } finally {
    clearInterval(sampler);
  }
  const grew = peak - baseline;
  t.diagnostic(`RSS ${(baseline / MiB).toFixed(0)} MiB, peak +${(grew / MiB).toFixed(0)} MiB, ${(sent / MiB).toFixed(0)} MiB streamed before the cancel`);
  assert.ok(grew < 160 * MiB, `manager RSS grew by ${(grew / MiB).toFixed(0)} MiB`);
  await manager.child.waitForLine(/dropping 127\.0\.0\.1:\d+: \d+ bytes wait to be written \(limit 16777216\)/, 2000);
  await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 });
  await api.terminate();
  await fake.close();
  await manager.assertHealthy();
});

test('max_connections: over the cap a connection gets 503, other listeners and later calls still work, the log is not flooded', async () => {
  const manager = await startManager([], { env: { ACTOR_HOST_MAX_CONNECTIONS: '20' } });
  const flood = [];
  for (let i = 0; i < 80; i++) flood.push(await rawConnect(manager.apiPort));
  // The refused ones are answered and closed by the manager.
  await manager.poll(
    async () => flood.filter((s) => s.received.startsWith('HTTP/1.1 503')).length,
    (n) => n >= 60,
    { timeoutMs: 5000, what: '60 refusals' }
  );
  const refused = flood.filter((s) => s.received.startsWith('HTTP/1.1 503'));
  assert.equal(refused.length, 60);
  assert.match(refused[0].received, /Too many connections \(max_connections 20 on this port\)/);
  await Promise.all(refused.map((s) => withTimeout(s.closedPromise, 5000, 'refused connection closed')));

  // Another listener is not affected: a runtime registers on the reflection port.
  const fake = await manager.fakeRuntime('rt-ok');
  const reg = await fake.register('rt-ok');
  assert.equal(reg.error, undefined, JSON.stringify(reg));

  // The flood leaves: the API port serves again.
  for (const s of flood) s.destroy();
  const health = await manager.poll(() => manager.get('/api/__health'), (r) => r.status === 200, { timeoutMs: 5000, what: 'health after the flood' });
  assert.equal(health.text.trim(), 'OK');
  const metrics = (await manager.get('/metrics')).text;
  assert.ok(metric(metrics, 'actor_host_connections_refused_total', 'api') >= 60, 'refusals counted');
  const lines = manager.child.lines.filter((l) => /refusing connections on port/.test(l));
  assert.ok(lines.length >= 1 && lines.length <= 2, `refusal log lines: ${lines.length}`);
  await fake.close();
  await manager.assertHealthy();
});

test('out of file descriptors (EMFILE): connections are shed with 503, warnings are rate-limited, service resumes', async () => {
  // A descriptor limit far below the connection cap: EMFILE comes first.
  const manager = await startManager([], {
    launcher: ['sh', '-c', 'ulimit -n 96 && exec "$@"', 'sh'],
  });
  const flood = [];
  for (let i = 0; i < 150; i++) flood.push(await rawConnect(manager.apiPort));
  await manager.poll(
    async () => flood.filter((s) => s.received.includes('out of file descriptors')).length,
    (n) => n >= 10,
    { timeoutMs: 5000, what: 'connections shed with 503 under EMFILE' }
  );
  // Two seconds at EMFILE: old builds logged ten warnings a second.
  await new Promise((r) => setTimeout(r, 2000));
  const warnings = manager.child.lines.filter((l) => /accept on port \d+ failed/.test(l));
  assert.ok(warnings.length >= 1 && warnings.length <= 2, `accept warnings in 2 s: ${warnings.length}\n${warnings.join('\n')}`);
  assert.match(warnings[0], /Too many open files \(\d+ time\(s\) in 5 s\)/);
  for (const s of flood) s.destroy();
  const health = await manager.poll(() => manager.get('/api/__health'), (r) => r.status === 200, { timeoutMs: 5000, what: 'health after the flood' });
  assert.equal(health.text.trim(), 'OK');
  const metrics = (await manager.get('/metrics')).text;
  assert.ok(metric(metrics, 'actor_host_accept_errors_total', 'api') >= 1, 'accept errors counted');
  await manager.assertHealthy();
});
