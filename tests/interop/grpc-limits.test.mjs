// The limits of the gRPC front door (--grpc-port): clients that do not read
// their responses (max_write_queue_bytes), concurrent streams per
// connection, compressed requests, long status messages, call slots per
// address and the first-message timeout, HTTP/2 rapid reset, a unary call
// with two messages, --max-body-bytes and --max-connections; each time the
// door goes on serving. The door's calls are in grpc.test.mjs.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { cleanup, httpRequest, pollUntil } from './lib/harness.mjs';
import {
  grpc,
  GrpcReflection,
  LOADER_OPTIONS,
  startGrpcManager,
  toValue,
  unary,
  waitForService,
} from './lib/grpc.mjs';

/**
 * A fake runtime whose /flow/<name> streams `count` copies of `chunk` as fast
 * as its socket drains, until the run is cancelled.
 */
async function streamingRuntime(m, id, name, chunk, count) {
  const fake = await m.fakeRuntime(id);
  fake.handlers.listActions = () => ({ result: { actions: { [`/flow/${name}`]: { key: `/flow/${name}`, name } } } });
  let cancelled = false;
  fake.handlers.runAction = (_params, msg) => {
    fake.notify('runActionState', { requestId: msg.id, state: { traceId: 'e'.repeat(32) } });
    const frame = `{"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":${JSON.stringify(msg.id)},"chunk":${JSON.stringify(chunk)}}}`;
    (async () => {
      for (let sent = 0; !cancelled && fake.isOpen && sent < count; ++sent) {
        while (fake.ws.bufferedAmount > 1024 * 1024 && !cancelled) await new Promise((r) => setTimeout(r, 5));
        fake.sendRaw(frame);
      }
    })();
    return undefined;
  };
  fake.cancelRunsOnRequest(() => {
    cancelled = true;
  });
  await fake.register(id);
  return fake;
}

describe('gRPC front door limits', () => {
  let manager;
  let address;
  let flows;
  let root;
  before(async () => {
    ({ manager, address } = await startGrpcManager(
      ['--max-write-queue-bytes', '1048576', '--max-body-bytes', '262144', '--max-connections', '8']));
    await manager.startRuntime('rt', { kind: 'cpp' });
    await waitForService(address, 'genkit.flow.Flows');
    const reflection = new GrpcReflection(address, grpc.credentials.createInsecure());
    const descriptor = await reflection.getDescriptorBySymbol('genkit.flow.Flows');
    root = descriptor.getProtobufJsRoot();
    flows = new (descriptor.getPackageObject(LOADER_OPTIONS).genkit.flow.Flows)(address, grpc.credentials.createInsecure());
  });
  after(async () => {
    flows?.close();
    await cleanup();
  });

  test('a streaming client that does not read: RESOURCE_EXHAUSTED at max_write_queue_bytes, the run cancelled', async () => {
    // A runtime that streams 64 KiB chunks as fast as its socket drains, and
    // a client on node's own HTTP/2 (grpc-js reads whatever comes), which
    // stops granting flow-control window once a paused stream's buffer is
    // full: the door's queue grows behind the window.
    const { manager: m, address: a } = await startGrpcManager(['--max-write-queue-bytes', '1048576']);
    const fake = await streamingRuntime(m, 'rt-flood', 'flood', 'z'.repeat(64 * 1024), 256);
    await waitForService(a, 'genkit.flow.Flows');
    const session = http2.connect(`http://${a}`);
    try {
      const req = session.request({ ':method': 'POST', ':path': '/genkit.flow.Flows/flood_stream',
        'content-type': 'application/grpc', te: 'trailers' });
      const trailers = new Promise((resolve) => req.on('trailers', resolve));
      req.end(Buffer.from([0, 0, 0, 0, 0])); // google.protobuf.Value {}
      req.pause();
      await m.child.waitForLine(
        /gRPC client \S+: \d+ bytes of responses wait to be written \(max_write_queue_bytes 1048576\)/, 20000);
      await fake.waitFor((x) => x.method === 'cancelAction', 10000, 'cancelAction (the run of the stalled call)');
      await m.waitForStats({ 'actors.pending_request': 0 });
      const metrics = await httpRequest(`${m.apiUrl}/metrics`);
      assert.match(metrics.text, /^actor_host_grpc_write_queue_overflows_total 1$/m);
      req.on('data', () => {});
      req.resume(); // reading again: what was sent, then the status
      const t = await trailers;
      assert.equal(Number(t['grpc-status']), grpc.status.RESOURCE_EXHAUSTED);
      assert.match(decodeURIComponent(t['grpc-message']), /does not read its responses: over 1048576 bytes queued/);
    } finally {
      session.destroy();
      await fake.close();
    }
  });

  test('small chunks to a client that does not read count what they hold, not their 3 bytes', async () => {
    // 50,000 one-letter chunks are ~150 KB of protobuf but held ~17 MB in
    // the door: with a 1 MiB cap the call must end RESOURCE_EXHAUSTED.
    const { manager: m, address: a } = await startGrpcManager(['--max-write-queue-bytes', '1048576']);
    const fake = await streamingRuntime(m, 'rt-small', 'small', 'z', 50000);
    await waitForService(a, 'genkit.flow.Flows');
    const session = http2.connect(`http://${a}`);
    try {
      const req = session.request({ ':method': 'POST', ':path': '/genkit.flow.Flows/small_stream',
        'content-type': 'application/grpc', te: 'trailers' });
      req.end(Buffer.from([0, 0, 0, 0, 0]));
      req.pause();
      await m.child.waitForLine(
        /gRPC client \S+: \d+ bytes of responses wait to be written \(max_write_queue_bytes 1048576\)/, 20000);
      await fake.waitFor((x) => x.method === 'cancelAction', 10000, 'cancelAction (the run of the stalled call)');
    } finally {
      session.destroy();
      await fake.close();
    }
  });

  test('one connection may open at most 100 streams at once (the server says so in its SETTINGS)', async () => {
    const session = http2.connect(`http://${address}`);
    try {
      const settings = await new Promise((resolve, reject) => {
        session.once('remoteSettings', resolve);
        session.once('error', reject);
      });
      assert.equal(settings.maxConcurrentStreams, 100);
    } finally {
      session.destroy();
    }
  });

  test('a compressed request is refused before it is inflated (a gzip bomb costs nothing)', async () => {
    // 64 MiB of zeros as one length-delimited field: ~64 KiB of gzip.
    const inflated = Buffer.alloc(64 << 20);
    const body = zlib.gzipSync(inflated);
    const frame = Buffer.alloc(5);
    frame[0] = 1; // compressed
    frame.writeUInt32BE(body.length, 1);
    const session = http2.connect(`http://${address}`);
    try {
      const req = session.request({ ':method': 'POST', ':path': '/genkit.flow.Flows/echo',
        'content-type': 'application/grpc', te: 'trailers', 'grpc-encoding': 'gzip', 'grpc-accept-encoding': 'identity,gzip' });
      req.on('data', () => {});
      const status = new Promise((resolve) => {
        req.on('trailers', (t) => resolve(t));
        req.on('response', (h) => h['grpc-status'] !== undefined && resolve(h));
      });
      req.end(Buffer.concat([frame, body]));
      const t = await status;
      assert.equal(Number(t['grpc-status']), grpc.status.UNIMPLEMENTED, JSON.stringify(t));
    } finally {
      session.destroy();
    }
    const res = await unary(flows, 'echo', toValue('after'));
    assert.equal(res.string_value, 'after');
  });

  test('a status message of 100 KiB arrives cut to 4 KiB (it used to never arrive)', async () => {
    const { manager: m, address: a } = await startGrpcManager();
    const fake = await m.fakeRuntime('rt-loud');
    fake.handlers.listActions = () => ({ result: { actions: { '/flow/loud': { key: '/flow/loud', name: 'loud' } } } });
    const big = 'e'.repeat(100 * 1024);
    fake.handlers.runAction = () => ({ error: { code: -32000, message: big, data: { code: 13, message: big } } });
    await fake.register('rt-loud');
    await waitForService(a, 'genkit.flow.Flows');
    const reflection = new GrpcReflection(a, grpc.credentials.createInsecure());
    const descriptor = await reflection.getDescriptorBySymbol('genkit.flow.Flows');
    const client = new (descriptor.getPackageObject(LOADER_OPTIONS).genkit.flow.Flows)(a, grpc.credentials.createInsecure());
    try {
      await assert.rejects(unary(client, 'loud', toValue(null), { deadline: Date.now() + 10000 }),
        (e) => e.code === grpc.status.INTERNAL && e.details.length <= 4096 && /\(\d+ bytes\)$/.test(e.details));
      await m.child.waitForLine(/gRPC status message of \d+ bytes truncated to 4096/, 5000);
    } finally {
      client.close();
      await fake.close();
    }
  });

  test('one peer cannot hold every call slot: a cap per address, and calls without a first message end', async () => {
    const { manager: m, address: a } = await startGrpcManager(['--max-calls-per-caller', '3', '--first-message-timeout', '1s']);
    await m.startRuntime('rt-peer', { kind: 'cpp' });
    await waitForService(a, 'genkit.flow.Flows');
    const reflection = new GrpcReflection(a, grpc.credentials.createInsecure());
    const descriptor = await reflection.getDescriptorBySymbol('genkit.flow.Flows');
    const client = new (descriptor.getPackageObject(LOADER_OPTIONS).genkit.flow.Flows)(a, grpc.credentials.createInsecure());
    const session = http2.connect(`http://${a}`);
    try {
      // Three calls that never send their request message hold this address's slots.
      const silent = Array.from({ length: 3 }, () => {
        const req = session.request({ ':method': 'POST', ':path': '/genkit.flow.Flows/echo',
          'content-type': 'application/grpc', te: 'trailers' });
        req.on('data', () => {});
        return new Promise((resolve) => {
          req.on('trailers', (t) => resolve(t));
          req.on('response', (h) => h['grpc-status'] !== undefined && resolve(h));
        });
      });
      await m.waitForStats({ 'grpc.open_calls': 3 });
      await assert.rejects(unary(client, 'echo', toValue('a fourth')),
        (e) => e.code === grpc.status.RESOURCE_EXHAUSTED && /too many calls open from your address \(max_calls_per_caller\)/.test(e.details));
      // first_message_timeout ends them; then the address has its slots back.
      for (const t of await Promise.all(silent)) {
        assert.equal(Number(t['grpc-status']), grpc.status.DEADLINE_EXCEEDED, JSON.stringify(t));
        assert.match(decodeURIComponent(t['grpc-message']), /no request message came within 1000 ms/);
      }
      await m.child.waitForLine(/no request message within 1000 ms of the call to \/flow\/echo/, 1000);
      assert.equal((await unary(client, 'echo', toValue('after'))).string_value, 'after');
      const metrics = (await m.get('/metrics')).text;
      assert.match(metrics, /actor_host_grpc_first_message_timeouts_total 3/);
    } finally {
      session.destroy();
      client.close();
    }
  });

  test('a client that resets calls as fast as it opens them loses its connection (HTTP/2 rapid reset); one that cancels some keeps it', async () => {
    const { manager: m, address: a } = await startGrpcManager(['--max-client-resets', '20']);
    await m.startRuntime('rt-reset', { kind: 'cpp' });
    await waitForService(a, 'genkit.flow.Flows');
    const reflection = new GrpcReflection(a, grpc.credentials.createInsecure());
    const descriptor = await reflection.getDescriptorBySymbol('genkit.flow.Flows');
    const client = new (descriptor.getPackageObject(LOADER_OPTIONS).genkit.flow.Flows)(a, grpc.credentials.createInsecure());
    const session = http2.connect(`http://${a}`);
    session.on('error', () => {});
    const settled = new Promise((resolve, reject) => {
      session.once('remoteSettings', resolve);
      session.once('error', reject);
    });
    try {
      // One call in two cancelled by its client, 50 rounds (more cancels
      // than the cap of 20): the calls that finish pay for the cancels, the
      // connection stays. (grpc-js sends no RST_STREAM for a call cancelled
      // before its stream is open: each cancel waits for the run.)
      for (let i = 0; i < 50; i++) {
        const slow = client.slow({ ms: 30000 }, () => {});
        await m.waitForStats({ 'actors.pending_request': 1 });
        slow.cancel();
        await m.waitForStats({ 'actors.pending_request': 0 });
        assert.equal((await unary(client, 'echo', toValue(`round ${i}`))).string_value, `round ${i}`);
      }
      assert.match((await m.get('/metrics')).text, /actor_host_grpc_reset_closures_total 0/);
      await m.waitForStats({ 'grpc.open_calls': 0, 'actors.pending_request': 0 });
      // HEADERS, DATA, RST_STREAM in a loop on one connection.
      await settled;
      let gone = false;
      session.once('close', () => {
        gone = true;
      });
      const message = Buffer.from([0, 0, 0, 0, 2, 0x1a, 0]); // a Value with string_value ''
      let opened = 0;
      const until = Date.now() + 20000;
      while (!gone && !session.destroyed && Date.now() < until) {
        for (let i = 0; i < 100 && !gone; i++) {
          try {
            const req = session.request({ ':method': 'POST', ':path': '/genkit.flow.Flows/echo',
              'content-type': 'application/grpc', te: 'trailers' });
            req.on('error', () => {});
            req.write(message);
            req.close(http2.constants.NGHTTP2_CANCEL);
            ++opened;
          } catch {
            gone = true; // the session is closing
          }
        }
        await new Promise((r) => setImmediate(r));
      }
      await pollUntil(async () => gone, (g) => g, { timeoutMs: 5000, intervalMs: 50, what: `the connection closed by the server (${opened} calls reset)` });
      await m.child.waitForLine(/gRPC: closed the connection from ipv4:127\.0\.0\.1:\d+: its client cancelled more than 20 calls/, 5000);
      assert.match((await m.get('/metrics')).text, /actor_host_grpc_reset_closures_total 1/);
      // The other client was never cut off.
      assert.equal((await unary(client, 'echo', toValue('after'))).string_value, 'after');
      await m.waitForStats({ 'grpc.open_calls': 0, 'actors.pending_request': 0 });
    } finally {
      session.destroy();
      client.close();
    }
  });

  test('a unary call with two request messages is INVALID_ARGUMENT, and the next call runs', async () => {
    // slow: the run is still going when the second message is read.
    const method = root.lookupService('genkit.flow.Flows').methods.slow;
    method.resolve();
    const body = method.resolvedRequestType.encode({ ms: 5000 }).finish();
    const message = Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), Buffer.from(body)]);
    const session = http2.connect(`http://${address}`);
    try {
      const req = session.request({ ':method': 'POST', ':path': '/genkit.flow.Flows/slow',
        'content-type': 'application/grpc', te: 'trailers' });
      req.on('data', () => {});
      const status = new Promise((resolve) => {
        req.on('trailers', (t) => resolve(t));
        req.on('response', (h) => h['grpc-status'] !== undefined && resolve(h));
      });
      req.end(Buffer.concat([message, message]));
      const t = await status;
      assert.equal(Number(t['grpc-status']), grpc.status.INVALID_ARGUMENT, JSON.stringify(t));
      assert.match(decodeURIComponent(t['grpc-message']), /takes one request message/);
    } finally {
      session.destroy();
    }
    const res = await unary(flows, 'echo', toValue('one'));
    assert.equal(res.string_value, 'one');
    await manager.waitForStats({ 'actors.pending_request': 0, 'grpc.open_calls': 0 });
  });

  test('a request over --max-body-bytes is RESOURCE_EXHAUSTED, and the next call runs', async () => {
    await assert.rejects(unary(flows, 'echo', toValue('x'.repeat(300000))),
      (e) => e.code === grpc.status.RESOURCE_EXHAUSTED && /larger than max/.test(e.details));
    const res = await unary(flows, 'echo', toValue('ok'));
    assert.equal(res.string_value, 'ok');
  });

  test('calls open over --max-connections are refused with RESOURCE_EXHAUSTED', async () => {
    const open = [];
    for (let i = 0; i < 8; i++) {
      const call = flows.slow({ ms: 30000 }, () => {});
      open.push(call);
    }
    await manager.waitForStats({ 'actors.pending_request': 8 });
    await assert.rejects(unary(flows, 'echo', toValue('one too many')),
      (e) => e.code === grpc.status.RESOURCE_EXHAUSTED && /too many calls open on this listener \(max_connections\)/.test(e.details));
    for (const call of open) call.cancel();
    await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 });
    const res = await unary(flows, 'echo', toValue('after'));
    assert.equal(res.string_value, 'after');
  });
});
