// Managers joined into a cluster over CAF's BASP (issue 14): three manager
// processes on loopback, the real Genkit JS runtime at a, our C++ runtime at
// b; listings and calls through every node, streams in order, cancel,
// 64 concurrent cross-node calls, a node SIGKILLed and SIGSTOPped
// mid-stream, a restart that rejoins, mTLS with certificates made here by
// the openssl CLI, a name clash, and no leak on any node after each test.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, test } from 'node:test';
import { ACTOR_HOST_BIN, cleanup, freePort, sdkCall, startIiiWorker, TRACE_ID_RE, withTimeout } from './lib/harness.mjs';
import { NOTHING_LEFT, runAction, startNode, waitForListed, waitForMembers } from './lib/cluster.mjs';

afterEach(cleanup);
after(cleanup);

const fdCount = (m) => fs.readdirSync(`/proc/${m.child.pid}/fd`).length;

/**
 * Connects to `m`'s cluster port as a peer that is not a node: sends
 * `payload` (null: closes its side at once; undefined: nothing) and keeps its
 * side open (`allowHalfOpen`), so only the node can end the connection.
 * Resolves when it does; fails after 6 s.
 */
function misbehave(m, payload, sockets) {
  const i = m.clusterAddress.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: m.clusterAddress.slice(0, i), port: Number(m.clusterAddress.slice(i + 1)), allowHalfOpen: true }, () => {
      if (payload === null) s.end();
      else if (payload !== undefined) s.write(payload);
    });
    sockets.push(s);
    s.resume(); // read what the node sends, and see the end
    const timer = setTimeout(() => reject(new Error('the node kept a connection of a non-node open')), 6000);
    const closed = () => {
      clearTimeout(timer);
      resolve();
    };
    s.on('error', closed);
    s.on('end', closed);
    s.on('close', closed);
  });
}


describe('a cluster of three', () => {
  test('forms, lists every runtime on every node and calls them through every node', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    const t0 = Date.now();
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    assert.ok(Date.now() - t0 < 2000, `membership took ${Date.now() - t0} ms`);
    const cluster = await c.json('/api/cluster');
    assert.equal(cluster.self, 'c');
    for (const n of cluster.nodes) assert.match(n.address, /^127\.0\.0\.1:\d+$/);

    const js = await a.startRuntime('js-a', { kind: 'genkit' });
    const cpp = await b.startRuntime('cpp-b', { kind: 'cpp' });
    assert.ok(js.running && cpp.running);
    for (const m of [a, b, c]) {
      const rts = await waitForListed(m, ['a/js-a', 'b/cpp-b']);
      const jsInfo = rts.find((r) => r.qualifiedId === 'a/js-a');
      assert.equal(jsInfo.id, 'js-a');
      assert.equal(jsInfo.node, 'a');
    }
    const counts = await c.json('/api/cluster');
    assert.equal(counts.nodes.find((n) => n.name === 'a').runtimes, 1);

    // Unary in every direction, by id and by node/id.
    for (const m of [a, b, c]) {
      for (const id of ['js-a', 'b/cpp-b']) {
        const r = await runAction(m, id, '/flow/echo', { from: m.name, to: id });
        assert.equal(r.status, 200, `${m.name} -> ${id}: ${r.text}`);
        assert.deepEqual(r.json.result, { from: m.name, to: id });
        assert.match(r.headers['x-genkit-trace-id'] ?? r.json.telemetry?.traceId ?? '', TRACE_ID_RE);
      }
    }
    // Streaming from another node keeps the order.
    const s = await c.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 50 }, runtimeId: 'js-a' });
    assert.equal(s.status, 200);
    const lines = await s.lines.drain(10000);
    assert.deepEqual(lines.slice(0, -1).map((l) => l.i), Array.from({ length: 50 }, (_, i) => i));
    assert.deepEqual(lines.at(-1).result, { count: 50, sum: 1225 });

    // /api/ws at b: trace id early, then a cross-node cancel by node/id.
    const api = await b.api();
    const run = api.request('runAction', { key: '/flow/slow', input: { ms: 30000 }, runtimeId: 'a/js-a' }, { id: 'slow', timeoutMs: 20000 });
    const state = await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === 'slow', 10000, 'runActionState');
    assert.match(state.params.state.traceId, TRACE_ID_RE);
    assert.deepEqual(await api.call('cancelAction', { traceId: state.params.state.traceId, runtimeId: 'a/js-a' }), { message: 'Action cancelled' });
    assert.equal((await withTimeout(run, 5000, 'cancelled run')).error?.data?.code, 1);
    // Bidi input crosses in order (b -> a's Genkit runtime).
    const bidi = api.request('runAction', { key: '/flow/bidiSum', stream: true, streamInput: true, runtimeId: 'js-a' }, { id: 'bidi' });
    await api.waitFor((m) => m.method === 'runActionState' && m.params?.requestId === 'bidi', 10000, 'bidi runActionState');
    for (const x of [1, 2, 3, 4]) api.notify('sendInputStreamChunk', { requestId: 'bidi', chunk: x });
    api.notify('endInputStream', { requestId: 'bidi' });
    const bidiReply = await withTimeout(bidi, 10000, 'bidi reply');
    assert.deepEqual(bidiReply.result?.result, { total: 10, count: 4 }, JSON.stringify(bidiReply));
    assert.deepEqual(api.notificationsFor('streamChunk', 'bidi').map((m) => m.params.chunk), [1, 3, 6, 10].map((t) => ({ runningTotal: t })));
    const listed = await api.call('listRuntimes');
    assert.equal(listed.runtimes.length, 2);
    assert.ok((await api.call('getCluster')).nodes.length === 3);
    await api.close();

    // Context reaches the other node's action; the caller's timeout holds there.
    const who = await runAction(c, 'cpp-b', '/flow/whoami', { q: 1 }, { context: { auth: { uid: 'u1' } } });
    assert.equal(who.status, 200, who.text);
    assert.deepEqual(who.json.result, { input: { q: 1 }, context: { auth: { uid: 'u1' } } });
    const late = await runAction(c, 'js-a', '/flow/slow', { ms: 5000 }, { timeoutMs: 300 });
    assert.equal(late.json?.error?.data?.code, 4, late.text);
        // 64 concurrent cross-node calls without mix-ups.
    const calls = Array.from({ length: 64 }, (_, i) => {
      const entry = [a, b, c][i % 3];
      const target = i % 2 ? 'js-a' : 'cpp-b';
      return runAction(entry, target, '/flow/echo', { i, target }).then((r) => [i, target, r]);
    });
    for (const [i, target, r] of await Promise.all(calls)) {
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.result, { i, target });
    }
    for (const m of [a, b, c]) await m.waitForStats(NOTHING_LEFT);

    // A runtime that leaves is unlisted everywhere.
    await js.stop();
    for (const m of [a, b, c]) await m.poll(() => m.runtimes(), (rts) => !rts.some((r) => r.id === 'js-a'), { what: 'js-a gone' });
  });

  test('iii: a function of a worker at c is called from a and b, and workers call Genkit actions anywhere', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const worker = startIiiWorker(c.workerUrl);
    await b.startRuntime('cpp-b', { kind: 'cpp' });
    await waitForListed(a, ['b/cpp-b']);
    // The front door at a runs the worker's function through c.
    const front = await a.poll(
      () => runAction(a, undefined, '/iii/greet', { name: 'front' }),
      (r) => r.status === 200,
      { timeoutMs: 10000, what: 'greet callable at a' }
    );
    assert.equal(front.json.result.greeting, 'Hello, front!', front.text);
    // An SDK worker connected at b calls it (b -> c), and calls a Genkit action at b from a.
    const viaB = await sdkCall(b.workerUrl, 'greet', { name: 'sdk' });
    assert.equal(viaB.result?.greeting, 'Hello, sdk!', viaB.line);
    const genkit = await sdkCall(a.workerUrl, 'genkit::cpp-b::/flow/echo', { hello: 'cluster' });
    assert.deepEqual(genkit.result, { hello: 'cluster' }, genkit.line);
    // The worker leaves: its function is gone everywhere.
    await worker.stop();
    const gone = await a.poll(
      () => runAction(a, undefined, '/iii/greet', { name: 'x' }),
      (r) => r.status === 404,
      { timeoutMs: 5000, what: 'greet gone at a' }
    );
    assert.match(gone.text, /not found/);
    for (const m of [a, b, c]) await m.waitForStats({ ...NOTHING_LEFT, 'actors.invocation': 0 });
  });

  test('replicas of one name on two nodes share the calls of a third; a lost node fails only what its replica held', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const replica = async (m, id) => {
      const rt = await m.fakeRuntime(id);
      rt.held = 0;
      rt.handlers.runAction = async (params) => {
        rt.held += 1;
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (params.input === 'hold') await rt.gate;
        rt.held -= 1;
        return { result: { result: id, telemetry: { traceId: 'a'.repeat(32) } } };
      };
      // The register answer lists the other nodes, where runtimes can move.
      const others = [a, b, c].filter((n) => n !== m).map((n) => n.reflectionUrl).sort();
      assert.deepEqual((await rt.register(id, { name: 'svc' })).result.managerUrls.sort(), others);
      return rt;
    };
    const ra = await replica(a, 'svc-a');
    const rb = await replica(b, 'svc-b');
    await waitForListed(c, ['a/svc-a', 'b/svc-b']);
    const body = { key: '/flow/x', input: 1, runtimeName: 'svc' };
    const results = [];
    let killedAt = 0;
    const loop = async (count) => {
      for (let i = 0; i < count; i++) {
        const started = Date.now();
        results.push({ started, r: await c.post('/api/runAction', body) });
      }
    };
    await Promise.all(Array.from({ length: 8 }, () => loop(25)));
    const n = {};
    for (const { r } of results) {
      assert.equal(r.status, 200, r.text);
      n[r.json.result] = (n[r.json.result] ?? 0) + 1;
    }
    assert.ok(n['svc-a'] >= 50 && n['svc-b'] >= 50, JSON.stringify(n));
    const listed = (await c.json('/api/services')).find((x) => x.name === 'svc');
    assert.deepEqual(listed.replicas.map((x) => `${x.node}/${x.id}`).sort(), ['a/svc-a', 'b/svc-b']);
    // Calls made at a hold svc-a (c has none there): a reports them with its
    // membership beat, and c sends its calls to svc-b.
    let release;
    ra.gate = new Promise((resolve) => (release = resolve));
    const holds = Array.from({ length: 6 }, () =>
      a.post('/api/runAction', { key: '/flow/x', input: 'hold', runtimeId: 'svc-a' })
    );
    const reported = async () =>
      (await c.json('/api/services')).find((x) => x.name === 'svc').replicas.find((x) => x.id === 'svc-a')
        .inFlightReported;
    await c.poll(reported, (v) => v >= 6, { what: "a's figure for svc-a (6 calls) at c" });
    const picked = [];
    for (let i = 0; i < 20; i++) picked.push((await c.post('/api/runAction', body)).json.result);
    assert.deepEqual([...new Set(picked)], ['svc-b'], picked.join(','));
    release();
    for (const r of await Promise.all(holds)) assert.equal(r.status, 200, r.text);
    // b dies under load: only the calls its replica held fail.
    results.length = 0;
    const load = Promise.all(Array.from({ length: 8 }, () => loop(40)));
    await c.poll(async () => rb.held, (h) => h > 0, { what: 'svc-b holding calls' });
    const held = rb.held;
    killedAt = Date.now();
    b.child.kill('SIGKILL');
    await load;
    const failed = results.filter((x) => x.r.status !== 200);
    for (const f of failed) assert.equal(f.r.json.error.code, 14, f.r.text);
    assert.ok(failed.length <= held + 8, `${failed.length} failed, svc-b held ${held}`);
    assert.ok(failed.every((x) => x.started < killedAt + 300), 'a call started 300 ms after the loss failed');
    assert.ok(results.some((x) => x.started >= killedAt + 300), 'no call started after the loss');
    for (const m of [a, c]) await m.waitForStats(NOTHING_LEFT);
  });

  test('SIGKILL of a node mid-stream: its callers get UNAVAILABLE within 2 s; its runtime moves to a live node; it rejoins when restarted', async () => {
    const a = await startNode('a');
    const bClusterPort = await freePort();
    const bPort = await freePort();
    let b = await startNode('b', { seeds: [a], clusterPort: bClusterPort, port: bPort });
    const c = await startNode('c', { seeds: [a] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const cpp = await b.startRuntime('cpp-b', { kind: 'cpp' });
    await waitForListed(a, ['b/cpp-b']);
    await waitForListed(c, ['b/cpp-b']);

    const s = await a.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 100000, delayMs: 2 }, runtimeId: 'cpp-b' });
    for (let i = 0; i < 5; i++) assert.deepEqual((await s.lines.next(10000, `chunk ${i}`)).value, { i });
    b.child.kill('SIGKILL');
    const t0 = Date.now();
    const rest = await s.lines.drain(5000, 'end of the stream');
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 2000, `the stream ended ${elapsed} ms after the kill`);
    const last = rest.at(-1);
    assert.equal(last.error?.data?.code, 14, JSON.stringify(last));
    assert.match(last.error.message, /node b is unreachable/);
    assert.ok(rest.slice(0, -1).every((x, k) => x.i === k + 5), 'chunks before the error stay in order');
    // Given b's URL only, the runtime learned a's and c's from b's register
    // answer: it registers at one of them, and is listed there alone.
    for (const m of [a, c]) {
      await m.poll(() => m.runtimes(), (rts) => rts.length === 1 && /^[ac]\/cpp-b$/.test(rts[0].qualifiedId),
        { timeoutMs: 2000, what: `${m.name}: cpp-b moved off b` });
      await m.poll(() => m.json('/api/cluster'), (cl) => cl.nodes.find((n) => n.name === 'b')?.status !== 'up', { timeoutMs: 2000, what: 'b not up' });
      await m.waitForStats(NOTHING_LEFT);
    }
    const metrics = await a.get('/metrics');
    assert.match(metrics.text, /actor_host_remote_calls_lost_total [1-9]/);

    // b comes back on the same ports and rejoins; the runtime stays where it moved.
    b = await startNode('b', { seeds: [a], clusterPort: bClusterPort, port: bPort });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c'], { timeoutMs: 10000 });
    await b.poll(() => b.runtimes(), (rts) => rts.length === 1 && /^[ac]\/cpp-b$/.test(rts[0].qualifiedId),
      { timeoutMs: 5000, what: 'b: cpp-b listed at its new node' });
    const r = await runAction(c, 'cpp-b', '/flow/echo', 'again');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, 'again');
    assert.ok(cpp.running);
  });

  test('an id registered at another node while its holder is live never takes the holder\'s calls', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const d = await startNode('d', { seeds: [a, b] });
    for (const m of [a, b, d]) await waitForMembers(m, ['a', 'b', 'd']);
    const answering = async (m, answer) => {
      const rt = await m.fakeRuntime('onB');
      rt.handlers.runAction = () => ({ result: { result: answer, telemetry: { traceId: 'd'.repeat(32) } } });
      await rt.register('onB');
    };
    await answering(b, 'the real one');
    await waitForListed(a, ['b/onB']);
    await answering(d, 'an impostor');
    await waitForListed(a, ['b/onB', 'd/onB']);
    for (let i = 0; i < 3; i++) assert.equal((await runAction(a, 'onB', '/flow/x', i)).json.result, 'the real one');
    assert.equal((await runAction(a, 'd/onB', '/flow/x', 0)).json.result, 'an impostor');
    for (const m of [a, b, d]) await m.waitForStats(NOTHING_LEFT);
  });

  test('SIGSTOP of a node: its callers get UNAVAILABLE within the heartbeat timeout', async () => {
    const hb = ['--cluster-heartbeat-timeout', '2s'];
    const a = await startNode('a', { args: hb });
    const b = await startNode('b', { seeds: [a], args: hb });
    await waitForMembers(a, ['b']);
    await b.startRuntime('cpp-b', { kind: 'cpp' });
    await waitForListed(a, ['b/cpp-b']);
    const s = await a.stream('/api/rpc/streamAction', { key: '/flow/streamCount', input: { n: 100000, delayMs: 2 }, runtimeId: 'cpp-b' });
    await s.lines.next(10000, 'first chunk');
    b.child.kill('SIGSTOP');
    try {
      const t0 = Date.now();
      const rest = await s.lines.drain(6000, 'end of the stream');
      const elapsed = Date.now() - t0;
      assert.ok(elapsed < 3500, `the stream ended ${elapsed} ms after the stop (timeout 2 s)`);
      assert.equal(rest.at(-1).error?.data?.code, 14, JSON.stringify(rest.at(-1)));
      const cl = await a.json('/api/cluster');
      assert.equal(cl.nodes.find((n) => n.name === 'b').status, 'unreachable');
      assert.deepEqual(await a.runtimes(), []);
      await a.waitForStats(NOTHING_LEFT);
    } finally {
      b.child.kill('SIGCONT');
    }
    // Back from the pause, it rejoins.
    await waitForMembers(a, ['b'], { timeoutMs: 10000 });
  });

  test('a seed that is down does not stop the others; a taken node name is refused', async () => {
    const deadSeed = `127.0.0.1:${await freePort()}`;
    const a = await startNode('a', { seeds: [deadSeed] });
    const b = await startNode('b', { seeds: [deadSeed, a] });
    await waitForMembers(a, ['b']);
    const ready = await b.poll(() => b.get('/readyz'), (r) => r.status === 200, { what: 'b ready' });
    assert.equal(ready.status, 200);
    const clash = await startNode('a', { seeds: [b] });
    await clash.child.waitForLine(/node name 'a' is in use by the live node at/, 5000);
    const notReady = await clash.get('/readyz');
    assert.equal(notReady.status, 503);
    assert.match(notReady.text, /in use/);
    const seen = await b.json('/api/cluster');
    assert.equal(seen.nodes.filter((n) => n.name === 'a').length, 1);
    assert.equal(seen.nodes.find((n) => n.name === 'a').address, a.clusterAddress);
  });

  test('garbage, another protocol and a silent scanner on the cluster port are dropped with a log line and a counter', async () => {
    const a = await startNode('a', { args: ['--cluster-heartbeat-timeout', '2s'] });
    const b = await startNode('b', { seeds: [a] });
    await waitForMembers(a, ['b']);
    // Each peer connects, reads CAF's server handshake, then misbehaves;
    // the node closes the connection.
    const before = fdCount(a);
    const sockets = [];
    const peer = (payload) => misbehave(a, payload, sockets);
    await peer(Buffer.alloc(64, 0xab));
    await peer('GET / HTTP/1.1\r\nHost: cluster.example\r\nUser-Agent: curl\r\n\r\n');
    await peer(null); // a scanner: connects and closes
    await Promise.all([peer('GET'), peer(undefined)]); // less than a header, or nothing: closed after the heartbeat timeout
    await a.poll(async () => fdCount(a), (n) => n <= before, { what: `node a's file descriptors back to ${before}` });
    for (const s of sockets) s.destroy();
    await a.child.waitForLine(/cluster: 127\.0\.0\.1:\d+ sent something other than a CAF handshake; dropped/, 5000);
    await a.child.waitForLine(/cluster: 127\.0\.0\.1:\d+ closed before sending a CAF handshake; dropped/, 5000);
    await a.child.waitForLine(/cluster: 127\.0\.0\.1:\d+ sent no CAF handshake in time; dropped/, 5000);
    const count = async () => Number((await a.get('/metrics')).text.match(/^actor_host_cluster_non_caf_peers_total (\d+)/m)?.[1] ?? -1);
    await a.poll(count, (n) => n === 5, { what: 'five non-CAF peers counted' });
    // The members are not disturbed, and a real node's link is not counted.
    const seen = await a.json('/api/cluster');
    assert.equal(seen.nodes.find((n) => n.name === 'b').status, 'up');
    assert.equal(Number((await b.get('/metrics')).text.match(/^actor_host_cluster_non_caf_peers_total (\d+)/m)?.[1]), 0);
  });

  test('a BASP header announcing a 2 GB payload closes the connection before any buffer is sized', async () => {
    const a = await startNode('a');
    const rssKb = () => Number(fs.readFileSync(`/proc/${a.child.pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1]);
    const before = rssKb();
    // A valid client handshake header (CAF 0.17 BASP, network byte order):
    // operation 0x01, flags 0, payload_len 2,000,000,000, the rest zero.
    const header = Buffer.alloc(32, 0);
    header[0] = 0x01;
    header.writeUInt32BE(2_000_000_000, 4);
    const sockets = [];
    await Promise.all([1, 2, 3].map(() => misbehave(a, header, sockets)));
    for (const s of sockets) s.destroy();
    await a.child.waitForLine(/cluster: 127\.0\.0\.1:\d+ announced a 2000000000-byte handshake \(at most 65536 bytes\); connection closed/, 5000);
    const count = async () => Number((await a.get('/metrics')).text.match(/^actor_host_cluster_oversized_messages_total (\d+)/m)?.[1] ?? -1);
    await a.poll(count, (n) => n === 3, { what: 'three oversized headers counted' });
    // CAF zero-filled 2 GB per such peer before: the node stays small.
    assert.ok(rssKb() - before < 100 * 1024, `RSS grew from ${before} to ${rssKb()} KiB`);
    // A real node still joins.
    const b = await startNode('b', { seeds: [a] });
    await waitForMembers(a, ['b']);
    assert.equal(Number((await b.get('/metrics')).text.match(/^actor_host_cluster_oversized_messages_total (\d+)/m)?.[1]), 0);
  });
});

describe('mTLS between nodes', () => {
  let dir;
  const file = (n) => path.join(dir, n);
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const makeCa = (name) =>
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`);
  const makeNodeCert = (name, ca) => {
    fs.writeFileSync(file(`${name}.ext`), 'extendedKeyUsage=serverAuth,clientAuth\n');
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`);
  };
  const tlsArgs = (name, ca = 'ca') => ['--cluster-tls-cert-file', file(`${name}.crt`), '--cluster-tls-key-file', file(`${name}.key`), '--cluster-tls-ca-file', file(`${ca}.crt`)];

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'actor-host-cluster-tls-'));
    makeCa('ca');
    makeCa('other-ca');
    for (const n of ['a', 'b']) makeNodeCert(n, 'ca');
    makeNodeCert('stranger', 'other-ca');
  });
  after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  test('nodes with certificates of the CA join and call; a plaintext node and a foreign certificate never join', async () => {
    const a = await startNode('a', { args: tlsArgs('a') });
    assert.match(a.child.tail(), /mTLS/);
    const b = await startNode('b', { seeds: [a], args: tlsArgs('b') });
    await waitForMembers(a, ['b']);
    await b.startRuntime('cpp-b', { kind: 'cpp' });
    await waitForListed(a, ['b/cpp-b']);
    const r = await runAction(a, 'cpp-b', '/flow/echo', 'over mTLS');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.result, 'over mTLS');

    const plain = await startNode('plain', { seeds: [a] });
    const stranger = await startNode('stranger', { seeds: [a], args: tlsArgs('stranger', 'other-ca') });
    await plain.child.waitForLine(/cannot reach/, 5000);
    await stranger.child.waitForLine(/cannot reach/, 5000);
    const seen = await a.json('/api/cluster');
    assert.deepEqual(seen.nodes.map((n) => n.name).sort(), ['a', 'b']);
    assert.ok(a.child.running && b.child.running);
  });

  test('a peer that never speaks TLS is dropped after the heartbeat timeout, with a log line and a counter', async () => {
    const a = await startNode('a', { args: [...tlsArgs('a'), '--cluster-heartbeat-timeout', '2s'] });
    const b = await startNode('b', { seeds: [a], args: tlsArgs('b') });
    await waitForMembers(a, ['b']);
    const before = fdCount(a);
    const sockets = [];
    // Two silent peers, held until the node drops them; garbage, which
    // caf-openssl's handshake closes at once (not counted).
    await Promise.all([misbehave(a, undefined, sockets), misbehave(a, 'hello', sockets), misbehave(a, undefined, sockets)]);
    await a.child.waitForLine(/cluster: 127\.0\.0\.1:\d+ sent no TLS handshake in time \(\d+ bytes\); dropped/, 5000);
    const count = async () => Number((await a.get('/metrics')).text.match(/^actor_host_cluster_non_caf_peers_total (\d+)/m)?.[1] ?? -1);
    await a.poll(count, (n) => n === 2, { what: 'two silent peers counted' });
    await a.poll(async () => fdCount(a), (n) => n <= before, { what: `node a's file descriptors back to ${before}` });
    for (const s of sockets) s.destroy();
    // The node's own link is not touched.
    assert.equal((await a.json('/api/cluster')).nodes.find((n) => n.name === 'b').status, 'up');
  });

  test('bad cluster settings are refused at start with the way out', async () => {
    const run = (args) =>
      new Promise((resolve) =>
        execFile(ACTOR_HOST_BIN, ['--role', 'manager', '--http-port', '0', '--worker-port', '0', '--trace-store', 'none', ...args], { timeout: 20000 }, (err, stdout, stderr) =>
          resolve({ code: err ? err.code : 0, stderr })
        )
      );
    let r = await run(['--cluster-port', '0', '--cluster-bind', '0.0.0.0']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /refusing to start a plaintext cluster endpoint on 0\.0\.0\.0.*--cluster-insecure/s);
    r = await run(['--cluster-port', '0', '--node-name', 'a/b']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /not a valid node name/);
    r = await run(['--cluster-port', '0', '--cluster-tls-cert-file', file('a.crt')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /needs all of cluster_tls_cert_file, cluster_tls_key_file and cluster_tls_ca_file/);
    r = await run(['--cluster-port', '0', ...tlsArgs('a', 'missing-ca')]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /cluster TLS/);
    r = await run(['--cluster-port', '0', '--cluster-seeds', 'nohost']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /'nohost' is not host:port/);
  });
});
