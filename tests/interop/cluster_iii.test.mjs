// One iii engine across the cluster (issue 37): the real iii SDK harness
// (tests/interop/iii: worker.mjs at one node, caller.mjs at another) across
// two and three nodes, the engine's lists answering for the whole cluster
// with each entry's node, and a lost node's entries leaving them.
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { cleanup, IiiClient, openChannelSocket, runIiiCaller, sdkCall, startIiiWorker } from './lib/harness.mjs';
import { NOTHING_LEFT, startNode, waitForMembers } from './lib/cluster.mjs';

afterEach(cleanup);
after(cleanup);

// The whole caller.mjs suite (the mock-only cases skip themselves, as
// against one manager).
const ALL = ['ready', 'greet', 'caller_worker_id_injected', 'metadata', 'non_object_payloads',
  'undefined_result', 'large_payload', 'unknown_function', 'fail', 'fail_string', 'timeout', 'slow_ok',
  'void', 'concurrency', 'nested', 'functions_list', 'trigger_type', 'trigger_rejected', 'channel'];

/** `fn`'s result at `m` (through an SDK worker connected there) once `ok` holds. */
async function sdkPoll(m, fn, payload, ok, what) {
  return m.poll(
    async () => (await sdkCall(m.workerUrl, fn, payload)).result,
    (r) => r !== undefined && ok(r),
    { timeoutMs: 15000, intervalMs: 100, what }
  );
}

async function runSuite(callerNode, workerNode) {
  const { exit, results, summary, child } = await runIiiCaller(callerNode.workerUrl);
  assert.ok(summary, `no summary line from the caller: ${child.describe()}`);
  assert.equal(summary.failed, 0, `caller failures:\n${child.tail(80)}`);
  assert.equal(exit.code, 0);
  for (const name of ALL)
    assert.equal(results[name], 'PASS', `${name} (worker at ${workerNode.name}, caller at ${callerNode.name}): ${results[name]}`);
  assert.equal(summary.passed, ALL.length);
}

describe('the iii engine across nodes', () => {
  test('two nodes: the SDK suite passes with the worker at a and the caller at b; the lists show a s entries with their node', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    for (const m of [a, b]) await waitForMembers(m, ['a', 'b']);
    const worker = startIiiWorker(a.workerUrl);
    await runSuite(b, a);
    // engine::functions::list, workers::list and triggers::list at b.
    const fns = await sdkPoll(b, 'engine::functions::list', {}, (r) => r.functions?.some((f) => f.function_id === 'greet'), 'greet listed at b');
    const greet = fns.functions.find((f) => f.function_id === 'greet');
    assert.equal(greet.node, 'a', JSON.stringify(greet));
    assert.equal(greet.worker_name, 'harness-worker', JSON.stringify(greet));
    const workers = (await sdkCall(b.workerUrl, 'engine::workers::list', {})).result.workers;
    const w = workers.find((x) => x.name === 'harness-worker');
    assert.ok(w, JSON.stringify(workers));
    assert.equal(w.node, 'a');
    assert.ok(workers.filter((x) => x.node === 'b').length >= 1, 'the listing SDK worker itself, at b');
    const types = (await sdkCall(b.workerUrl, 'engine::triggers::list', {})).result.triggers;
    assert.deepEqual(types.find((t) => t.id === 'harness::tick')?.node, 'a', JSON.stringify(types));
    const info = (await sdkCall(b.workerUrl, 'engine::functions::info', { function_id: 'greet' })).result;
    assert.equal(info.node, 'a', JSON.stringify(info));
    // The worker leaves: it is gone from b's lists.
    await worker.stop();
    await sdkPoll(b, 'engine::workers::list', {}, (r) => !r.workers.some((x) => x.name === 'harness-worker'), 'the worker unlisted at b');
    // The other direction: the worker at b, the caller at a.
    const back = startIiiWorker(b.workerUrl);
    await sdkPoll(a, 'engine::functions::list', {}, (r) => r.functions?.some((f) => f.function_id === 'greet' && f.node === 'b'), 'greet of b listed at a');
    await runSuite(a, b);
    await back.stop();
    for (const m of [a, b]) await m.waitForStats({ ...NOTHING_LEFT, 'actors.invocation': 0, 'actors.channel': 0 });
  });

  test('three nodes: the suite passes from c against a worker at a; a node s loss takes its worker and functions off the others lists', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    startIiiWorker(a.workerUrl);
    await runSuite(c, a);
    for (const m of [b, c])
      await sdkPoll(m, 'engine::functions::list', {}, (r) => r.functions.some((f) => f.function_id === 'greet' && f.node === 'a'), `greet listed at ${m.name}`);
    a.child.kill('SIGKILL');
    for (const m of [b, c]) {
      await sdkPoll(m, 'engine::functions::list', {}, (r) => !r.functions.some((f) => f.function_id === 'greet'), `greet unlisted at ${m.name}`);
      const workers = (await sdkCall(m.workerUrl, 'engine::workers::list', {})).result.workers;
      assert.ok(!workers.some((x) => x.node === 'a'), JSON.stringify(workers));
    }
    for (const m of [b, c]) await m.waitForStats({ ...NOTHING_LEFT, 'actors.invocation': 0 });
  });

  test('a node killed mid-channel ends the channel for the other side with a clear error; order and backpressure hold across nodes', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    const ownerB = await IiiClient.connect(b.workerUrl);
    await ownerB.registered();
    const ownerA = await IiiClient.connect(a.workerUrl);
    await ownerA.registered();
    const refs = async (owner, data) => (await owner.call('engine::channels::create', data)).result;
    const url = (m, ref, dir) => `${m.workerUrl}/ws/channels/${ref.channel_id}?key=${encodeURIComponent(ref.access_key)}&dir=${dir}`;
    // Backpressure: a channel of b (2 frames) written at a before its reader
    // connects: the writer is held at a, nothing is dropped, order holds.
    const z = await refs(ownerB, { buffer_size: 2 });
    assert.match(z.writer.channel_id, /~b$/);
    const wz = (await openChannelSocket(url(a, z.writer, 'write'))).ws;
    const sent = Array.from({ length: 50 }, (_, i) => `z${i}`);
    for (const m of sent) wz.send(m);
    // A wrong key at a is refused by b once the link is up.
    const stranger = await openChannelSocket(url(a, { ...z.reader, access_key: 'nope' }, 'read'));
    assert.equal((await stranger.closed).code, 1008);
    const rz = await openChannelSocket(url(b, z.reader, 'read'));
    await b.poll(async () => rz.got.length, (n) => n === sent.length, { timeoutMs: 10000, intervalMs: 20, what: 'z delivered' });
    assert.deepEqual(rz.got, sent);
    wz.close(1000, 'stream_complete');
    assert.deepEqual(await rz.closed, { code: 1000, reason: 'stream_complete' });
    // Mid-stream: x of b written at a and read at b; y of a written at a and read at c.
    const x = await refs(ownerB, { buffer_size: 4 });
    const wx = (await openChannelSocket(url(a, x.writer, 'write'))).ws;
    const rx = await openChannelSocket(url(b, x.reader, 'read'));
    const y = await refs(ownerA, {});
    const wy = (await openChannelSocket(url(a, y.writer, 'write'))).ws;
    const ry = await openChannelSocket(url(c, y.reader, 'read'));
    wx.send('x1');
    wy.send('y1');
    await b.poll(async () => rx.got.length + ry.got.length, (n) => n === 2, { timeoutMs: 10000, intervalMs: 20, what: 'x1 and y1 delivered' });
    assert.deepEqual([rx.got, ry.got], [['x1'], ['y1']]);
    a.child.kill('SIGKILL');
    assert.deepEqual(await rx.closed, { code: 1011, reason: "channel writer's node a is unreachable" });
    assert.deepEqual(await ry.closed, { code: 1011, reason: "channel's node a is unreachable" });
    for (const m of [b, c]) await m.waitForStats({ 'actors.channel': 0 }, 10000);
  });

  test('a node killed mid-trigger: the binding is kept and re-offered to a provider of its type at another node', async () => {
    const a = await startNode('a');
    const b = await startNode('b', { seeds: [a] });
    const c = await startNode('c', { seeds: [a, b] });
    for (const m of [a, b, c]) await waitForMembers(m, ['a', 'b', 'c']);
    startIiiWorker(a.workerUrl);
    await sdkPoll(b, 'engine::triggers::list', {}, (r) => r.triggers?.some((t) => t.id === 'harness::tick' && t.node === 'a'), 'harness::tick of a listed at b');
    // The binder at b, its function at b.
    const binder = await IiiClient.connect(b.workerUrl);
    await binder.registered();
    const ticks = [];
    binder.register('probe::on_tick', async (data) => { ticks.push(data); return null; });
    binder.send({ type: 'registertrigger', id: 't-kill', trigger_type: 'harness::tick', function_id: 'probe::on_tick', config: { count: 100000, interval_ms: 50 } });
    await b.poll(async () => ticks.length, (n) => n >= 2, { timeoutMs: 10000, intervalMs: 20, what: 'ticks from the provider at a' });
    a.child.kill('SIGKILL');
    await sdkPoll(b, 'engine::triggers::list', {}, (r) => !r.triggers?.some((t) => t.id === 'harness::tick'), 'harness::tick unlisted at b');
    // The binding is still b's (parked): a provider of the type at c gets it.
    const before = ticks.length;
    const provider = startIiiWorker(c.workerUrl);
    await b.poll(async () => ticks.length, (n) => n >= before + 2, { timeoutMs: 15000, intervalMs: 20, what: 'ticks from the provider at c' });
    assert.ok(ticks.slice(before).every((t) => t.trigger_id === 't-kill'), JSON.stringify(ticks.slice(before)));
    // Unbinding reaches c's provider.
    binder.send({ type: 'unregistertrigger', id: 't-kill' });
    await provider.waitForLine(/unregisterTrigger t-kill/, 10000);
  });
});
