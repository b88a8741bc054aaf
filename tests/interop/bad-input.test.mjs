// Malformed and hostile input on all three surfaces (reflection WebSocket,
// /api/ws, HTTP). Every test ends by checking the manager still serves and
// has nothing left pending.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, afterEach, test } from 'node:test';
import { cleanup, startManager, withTimeout } from './lib/harness.mjs';

afterEach(cleanup);
after(cleanup);

const isReply = (m) => !('method' in m);

/** Registers a fake runtime, so requests that need one get past routing. */
async function withFakeRuntime(manager, id = 'rt-fake') {
  const fake = await manager.fakeRuntime(id);
  fake.handlers.listActions = () => ({ result: { actions: { '/flow/x': { key: '/flow/x', name: 'x' } } } });
  fake.handlers.listValues = () => ({ result: { values: {} } });
  fake.handlers.runAction = () => ({ result: { result: 'ok', telemetry: { traceId: 'c'.repeat(32) } } });
  assert.deepEqual((await fake.register(id)).result, {});
  return fake;
}

// --- reflection port (we play a runtime) -----------------------------------

test('reflection: malformed JSON gets a -32700 reply with id null', async () => {
  const manager = await startManager();
  const rt = await manager.fakeRuntime();
  rt.sendRaw('{"jsonrpc":"2.0","id":"1","method":"register",');
  const reply = await rt.waitFor(isReply, 5000, 'parse error reply');
  assert.equal(reply.error?.code, -32700);
  assert.equal(reply.id, null);
  assert.ok(rt.isOpen, 'the socket stays open');
  await manager.assertHealthy();
});

test('reflection: a JSON array gets -32600', async () => {
  const manager = await startManager();
  const rt = await manager.fakeRuntime();
  rt.sendRaw('[{"jsonrpc":"2.0","id":"1","method":"register","params":{"id":"x","pid":1}}]');
  const reply = await rt.waitFor(isReply, 5000, 'invalid request reply');
  assert.equal(reply.error?.code, -32600);
  assert.equal(reply.id, null);
  assert.deepEqual(await manager.runtimes(), []);
  await manager.assertHealthy();
});

test('reflection: register with a non-numeric pid is -32602 and not listed', async () => {
  const manager = await startManager();
  const rt = await manager.fakeRuntime();
  const reply = await rt.register('rt-bad', { pid: 'x' }, 'bad-1');
  assert.equal(reply.id, 'bad-1');
  assert.equal(reply.error?.code, -32602);
  assert.deepEqual(await manager.runtimes(), []);

  // The same socket can still register properly.
  const ok = await rt.register('rt-good', {}, 'good-1');
  assert.equal(ok.id, 'good-1');
  assert.deepEqual(ok.result, {});
  assert.deepEqual((await manager.runtimes()).map((r) => r.id), ['rt-good']);
  await manager.assertHealthy();
});

test('reflection: a valid register is answered {} and listed', async () => {
  const manager = await startManager();
  const rt = await manager.fakeRuntime();
  const reply = await rt.register('rt-ok', { pid: 4242, name: 'fake' }, 'r-1');
  assert.deepEqual(reply, { jsonrpc: '2.0', result: {}, id: 'r-1' });
  const [info] = await manager.runtimes();
  assert.equal(info.id, 'rt-ok');
  assert.equal(info.pid, 4242);
  assert.equal(info.name, 'fake');
  await manager.assertHealthy();
});

test('reflection: an unknown method with an id is -32601; without an id no reply', async () => {
  const manager = await startManager();
  const rt = await manager.fakeRuntime();
  rt.notify('bogusNotification', {});
  const reply = await rt.request('bogusMethod', {}, { id: 'u-1' });
  assert.equal(reply.error?.code, -32601);
  assert.equal(reply.error?.message, 'Method not found: bogusMethod');
  // Replies come in order on one socket, so the notification had none.
  assert.deepEqual(rt.messages.filter(isReply), [reply]);
  await manager.assertHealthy();
});

test('reflection: a frame over --max-frame-bytes closes the socket with 1009', async () => {
  const manager = await startManager(['--max-frame-bytes', '65536']);
  const big = await manager.fakeRuntime('big');
  await big.register('rt-big');
  big.sendRaw(JSON.stringify({ jsonrpc: '2.0', method: 'streamChunk', params: { requestId: 'x', chunk: 'x'.repeat(100 * 1024) } }));
  const closed = await big.waitForClose(5000);
  assert.equal(closed.code, 1009);
  await manager.waitForRuntimeGone('rt-big');

  // Others are still served, frames under the limit included.
  const other = await manager.fakeRuntime('other');
  // 60 KiB under the limit; in an ignored key (name is capped at 256 bytes).
  assert.deepEqual((await other.register('rt-other', { padding: 'y'.repeat(60 * 1024) })).result, {});
  assert.deepEqual((await manager.runtimes()).map((r) => r.id), ['rt-other']);
  await manager.assertHealthy();
});

test('reflection: an answer or a chunk over --max-frame-bytes fails its own call; the runtime stays for the others', async () => {
  const manager = await startManager(['--max-frame-bytes', '65536']);
  const rt = await manager.fakeRuntime('loud');
  rt.handlers.runAction = async (params, msg) => {
    if (params.input === 'huge') return { result: { result: 'x'.repeat(100 * 1024) } };
    if (params.input === 'huge-chunk') {
      rt.notify('runActionState', { requestId: msg.id, state: { traceId: 'c'.repeat(32) } });
      rt.notify('streamChunk', { requestId: msg.id, chunk: 'y'.repeat(100 * 1024) });
      return undefined; // cancelled below
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { result: { result: params.input } };
  };
  let cancelled = null;
  rt.handlers.cancelAction = (params) => {
    cancelled = params.traceId;
    return { result: { message: 'Action cancelled' } };
  };
  await rt.register('rt-loud');
  // A slow call on the same link while the others meet the cap.
  const slow = manager.post('/api/runAction', { key: '/flow/x', input: 'fine' });
  const huge = await manager.post('/api/runAction', { key: '/flow/x', input: 'huge' });
  assert.equal(huge.status, 429, huge.text);
  assert.equal(huge.json.error.code, 8, huge.text);
  assert.match(huge.json.error.message, /over the manager's max_frame_bytes \(65536\)/);
  const chunk = await manager.post('/api/runAction', { key: '/flow/x', input: 'huge-chunk' });
  assert.equal(chunk.status, 429, chunk.text);
  await manager.poll(async () => cancelled, (c) => c === 'c'.repeat(32), { what: 'the run of the dropped chunk cancelled' });
  const fine = await slow;
  assert.equal(fine.status, 200, fine.text);
  assert.equal(fine.json.result, 'fine');
  assert.deepEqual((await manager.runtimes()).map((r) => r.id), ['rt-loud']);
  await manager.child.waitForLine(/runtime rt-loud: its \d+ byte answer to request "\d+" is over max_frame_bytes; failing that call/, 1000);
  await manager.assertHealthy();
});

test('a call that came back through managers too often is refused as a loop; below the cap the count goes on', async () => {
  const manager = await startManager();
  const rt = await manager.fakeRuntime('hops');
  let seen = null;
  rt.handlers.runAction = (params) => {
    seen = params;
    return { result: { result: 1 } };
  };
  await rt.register('rt-hops');
  // Our V1 link sends X-Actor-Host-Hops; the door puts the count in the params for the next hop.
  const ok = await manager.post('/api/runAction', { key: '/flow/x', input: 1 }, { headers: { 'X-Actor-Host-Hops': '3' } });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(seen.actorHostHops, 3);
  seen = null;
  const loop = await manager.post('/api/runAction', { key: '/flow/x', input: 1 }, { headers: { 'X-Actor-Host-Hops': '8' } });
  assert.equal(loop.status, 400, loop.text);
  assert.equal(loop.json.error.code, 9, loop.text);
  assert.match(loop.json.error.message, /came back through a manager 8 times: .*a call loop/);
  assert.equal(seen, null, 'the looping call never reached the runtime');
  const bad = await manager.post('/api/runAction', { key: '/flow/x', input: 1 }, { headers: { 'X-Actor-Host-Hops': 'many' } });
  assert.equal(bad.status, 400, bad.text);
  await manager.assertHealthy();
});

test('reflection: a ping is answered with a pong', async () => {
  const manager = await startManager();
  const rt = await manager.fakeRuntime();
  const pong = new Promise((resolve) => rt.ws.once('pong', (data) => resolve(data.toString())));
  rt.ws.ping('are-you-there');
  assert.equal(await pong, 'are-you-there');
  await manager.assertHealthy();
});

// --- /api/ws (we play a caller) -------------------------------------------

test('api/ws: malformed JSON is -32700', async () => {
  const manager = await startManager();
  const api = await manager.api();
  api.sendRaw('{"jsonrpc":"2.0","id":1,"method":');
  const reply = await api.waitFor(isReply, 5000, 'parse error reply');
  assert.equal(reply.error?.code, -32700);
  assert.equal(reply.id, null);
  assert.ok(api.isOpen);
  assert.deepEqual(await api.call('listRuntimes'), { runtimes: [] });
  await manager.assertHealthy();
});

test('api/ws: unknown method is -32601', async () => {
  const manager = await startManager();
  const api = await manager.api();
  const reply = await api.request('noSuchMethod', {}, { id: 'm-1' });
  assert.equal(reply.id, 'm-1');
  assert.equal(reply.error?.code, -32601);
  assert.equal(reply.error?.message, 'Method not found: noSuchMethod');
  await manager.assertHealthy();
});

test('api/ws: runAction without key is -32602', async () => {
  const manager = await startManager();
  await withFakeRuntime(manager);
  const api = await manager.api();
  const reply = await api.request('runAction', { input: 1 }, { id: 5 });
  assert.equal(reply.id, 5);
  assert.equal(reply.error?.code, -32602);
  assert.match(reply.error?.message ?? '', /^Invalid params/);
  await manager.assertHealthy();
});

test('api/ws: params that are not an object are -32602', async () => {
  const manager = await startManager();
  await withFakeRuntime(manager);
  const api = await manager.api();
  for (const params of [['/flow/x'], 'runAction', 42]) {
    const reply = await api.request('runAction', params);
    assert.equal(reply.error?.code, -32602, `params ${JSON.stringify(params)}: ${JSON.stringify(reply)}`);
  }
  await manager.assertHealthy();
});

test('api/ws: ids keep their JSON type', async () => {
  const manager = await startManager();
  const api = await manager.api();
  assert.equal((await api.request('listRuntimes', undefined, { id: 17 })).id, 17);
  assert.equal((await api.request('listRuntimes', undefined, { id: '17' })).id, '17');
  await manager.assertHealthy();
});

// --- HTTP ------------------------------------------------------------------

test('http: malformed JSON body is 400 / -32700', async () => {
  const manager = await startManager();
  await withFakeRuntime(manager);
  const res = await manager.post('/api/rpc/runAction', '{"key": "/flow/x", ');
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.error.code, -32700);
  assert.match(res.json.error.message, /^Parse error/);
  await manager.assertHealthy();
});

test('http: runAction without key is 400 / -32602', async () => {
  const manager = await startManager();
  await withFakeRuntime(manager);
  const res = await manager.post('/api/rpc/runAction', { input: 1 });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.json.error.code, -32602);
  await manager.assertHealthy();
});

test('http: a body over --max-body-bytes is 413', async () => {
  const manager = await startManager(['--max-body-bytes', '65536']);
  await withFakeRuntime(manager);
  const res = await manager.post('/api/rpc/runAction', { key: '/flow/x', input: 'z'.repeat(100 * 1024) });
  assert.equal(res.status, 413, res.text);
  // Just under the limit is fine.
  const ok = await manager.post('/api/rpc/runAction', { key: '/flow/x', input: 'z'.repeat(60 * 1024) });
  assert.equal(ok.status, 200, ok.text);
  await manager.assertHealthy();
});

test('http: an unknown path is 404', async () => {
  const manager = await startManager();
  const res = await manager.get('/api/no-such-endpoint');
  assert.equal(res.status, 404, res.text);
  assert.equal((await manager.post('/api/no-such-endpoint', {})).status, 404);
  await manager.assertHealthy();
});

test('http: GET /api/values without type is 400', async () => {
  const manager = await startManager();
  const fake = await withFakeRuntime(manager);
  const res = await manager.get('/api/values');
  assert.equal(res.status, 400, res.text);
  assert.ok(res.json.error, res.text);
  assert.equal(fake.messages.filter((m) => m.method === 'listValues').length, 0, 'not forwarded to the runtime');
  await manager.assertHealthy();
});

test('http: a request that is not HTTP does not hurt the manager', async () => {
  const manager = await startManager();
  const sock = net.connect(manager.apiPort, '127.0.0.1');
  sock.on('error', () => {}); // a reset is an acceptable answer
  sock.resume(); // read (and drop) whatever the manager answers, so 'close' can come
  try {
    await withTimeout(new Promise((resolve) => sock.once('connect', resolve)), 5000, 'connect');
    const closed = new Promise((resolve) => sock.once('close', resolve));
    sock.end('this is not http\r\n\r\n');
    await withTimeout(closed, 5000, 'the manager to close a garbage connection');
  } finally {
    sock.destroy();
  }
  await manager.assertHealthy();
});

test('http: a Host, Origin or Content-Type header sent twice is 400, not last-wins', async () => {
  const manager = await startManager();
  const raw = (head) =>
    new Promise((resolve, reject) => {
      const sock = net.connect(manager.apiPort, '127.0.0.1');
      let text = '';
      sock.on('data', (d) => (text += d));
      sock.on('error', reject);
      sock.on('close', () => resolve(text));
      sock.on('connect', () => sock.write(head));
    });
  const heads = [
    'GET /api/runtimes HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n',
    'GET /api/runtimes HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost\r\nOrigin: http://evil.example\r\nConnection: close\r\n\r\n',
    'POST /api/runAction HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\ncontent-type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
  ];
  for (const head of heads) {
    const answer = await withTimeout(raw(head), 5000, 'the answer');
    assert.match(answer, /^HTTP\/1\.1 400 /, answer);
    assert.match(answer, /header is sent more than once/);
  }
  const ok = await withTimeout(raw('GET /api/runtimes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'), 5000, 'the answer');
  assert.match(ok, /^HTTP\/1\.1 200 /);
  await manager.assertHealthy();
});
