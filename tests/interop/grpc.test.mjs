// The gRPC front door (--grpc-port) with clients no one here wrote:
// @grpc/grpc-js, the grpc-js-reflection-client reflection client and
// protobufjs, against the manager with our C++ demo runtime, over real
// sockets. Services are discovered through server reflection only (no
// .proto files), then called: unary, server-streaming, bidi, deadline,
// cancel, errors, bad input; the catalog follows runtimes that come and go
// while a reflection stream is open; health per service; and nothing is
// left behind. The door's limits are in grpc-limits.test.mjs, the
// differential test against the gRPC project's own Node reflection server
// in grpc-reflection-diff.test.mjs, TLS in grpc-tls.test.mjs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanup, pollUntil } from './lib/harness.mjs';
import {
  collect,
  decodeFile,
  grpc,
  GrpcReflection,
  healthClient,
  LOADER_OPTIONS,
  packageFromFiles,
  reflectionClient,
  reflectionStream,
  startGrpcManager,
  toValue,
  unary,
  waitForService,
} from './lib/grpc.mjs';

const BUILTIN = ['grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'];

const ORDER = {
  customer: { name: 'Ada', email: 'ada@example.com', address: { street: '1 Main St', city: 'Springfield', zip: '12345' } },
  items: [{ sku: 'a', qty: 2, unitPrice: 1.25 }, { sku: 'b', qty: 1, unitPrice: 3 }],
  priority: 'high',
  tags: ['x', 'y'],
};

describe('gRPC front door with the demo runtime', () => {
  let manager;
  let address;
  let flows;
  let tools;
  let root;
  before(async () => {
    ({ manager, address } = await startGrpcManager());
    await manager.startRuntime('rt', { kind: 'cpp' });
    await waitForService(address, 'genkit.flow.Flows');
    const reflection = new GrpcReflection(address, grpc.credentials.createInsecure());
    const descriptor = await reflection.getDescriptorBySymbol('genkit.flow.Flows');
    root = descriptor.getProtobufJsRoot();
    const pkg = descriptor.getPackageObject(LOADER_OPTIONS);
    flows = new pkg.genkit.flow.Flows(address, grpc.credentials.createInsecure());
    const toolDescriptor = await reflection.getDescriptorBySymbol('genkit.tool.Tools');
    tools = new (toolDescriptor.getPackageObject(LOADER_OPTIONS).genkit.tool.Tools)(address, grpc.credentials.createInsecure());
  });
  after(async () => {
    flows?.close();
    tools?.close();
    await cleanup();
  });

  test('reflection lists every action type as a service, and the well-known services', async () => {
    const list = await new GrpcReflection(address, grpc.credentials.createInsecure()).listServices();
    for (const s of ['genkit.flow.Flows', 'genkit.tool.Tools', ...BUILTIN]) assert.ok(list.includes(s), `${s} in ${list}`);
    const methods = await new GrpcReflection(address, grpc.credentials.createInsecure()).listMethods('genkit.flow.Flows');
    const names = methods.map((m) => m.name);
    for (const n of ['echo', 'streamCount', 'slow', 'fail', 'createOrder', 'bidiSum']) assert.ok(names.includes(n), `${n} in ${names}`);
  });

  test('messages follow the JSON Schemas: nested objects, arrays, enums, required and optional', () => {
    const req = root.lookupType('genkit.flow.CreateOrderRequest');
    const f = req.fields;
    assert.equal(f.customer.resolvedType.name, 'Customer');
    assert.equal(f.customer.resolvedType.fields.address.resolvedType.fields.zip.type, 'string');
    assert.equal(f.items.repeated, true);
    assert.equal(f.items.resolvedType.fields.qty.type, 'int64');
    assert.equal(f.items.resolvedType.fields.unitPrice.type, 'double');
    assert.ok(f.priority.resolvedType?.values, 'priority is an enum');
    assert.deepEqual(Object.keys(f.priority.resolvedType.values).sort(), ['high', 'low', 'normal']);
    assert.equal(f.tags.repeated, true);
    assert.equal(f.note.resolvedType.fullName, '.google.protobuf.Value', 'a union (["string","null"]) is a Value');
    // Scalars that are not required are proto3 optional (presence kept).
    assert.equal(f.priority.partOf?.name, '_priority');
    assert.equal(f.items.resolvedType.fields.qty.partOf, null, 'a required scalar has no presence oneof');
    // An action without schemas takes and returns a Value.
    const echo = root.lookupService('genkit.flow.Flows').methods.echo;
    assert.equal(echo.resolvedRequestType.fullName, '.google.protobuf.Value');
  });

  test('unary: the runtime gets the JSON HTTP would send, the output comes back typed, with its trace id', async () => {
    let traceId;
    const out = await unary(flows, 'createOrder', ORDER, {
      onMetadata: (md) => (traceId = md.get('x-genkit-trace-id')[0]),
    });
    const http = await manager.post('/api/runAction', { key: '/flow/createOrder', input: ORDER });
    assert.equal(http.status, 200, http.text);
    assert.deepEqual(out, http.json.result);
    assert.match(String(traceId), /^[0-9a-f]{32}$/);
    const sum = await unary(tools, 'add', { a: 2, b: 3.5 });
    assert.equal(sum.number_value, 5.5);
  });

  test('server-streaming: chunks in order, then the output', async () => {
    const { messages } = await collect(flows.streamCount({ n: 5 }));
    // proto3: a required number 0 is the default, not on the wire.
    assert.deepEqual(messages.slice(0, 5).map((m) => m.result === 'chunk' && (m.chunk.i ?? 0)), [0, 1, 2, 3, 4]);
    assert.equal(messages.length, 6);
    assert.deepEqual(messages[5].output, { count: 5, sum: 10 });
    // An action without a streamSchema has a streaming twin: here no chunks, then the output.
    const twin = await collect(flows.echo_stream({ string_value: 'hi' }));
    assert.equal(twin.messages.length, 1);
    assert.equal(twin.messages[0].output.string_value, 'hi');
  });

  test('bidi: every client message is input, chunks as they come, the output at the end', async () => {
    const call = flows.bidiSum();
    const done = collect(call);
    for (const n of [1, 2, 3]) call.write({ number_value: n });
    call.end();
    const { messages } = await done;
    assert.deepEqual(messages.filter((m) => m.chunk).map((m) => m.chunk.runningTotal), [1, 3, 6]);
    assert.deepEqual(messages.at(-1).output, { total: 6, count: 3 });
  });

  test('the deadline is the run timeout: DEADLINE_EXCEEDED and nothing left', async () => {
    await assert.rejects(unary(flows, 'slow', { ms: 5000 }, { deadline: Date.now() + 300 }),
      (e) => e.code === grpc.status.DEADLINE_EXCEEDED);
    await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 });
  });

  test('a client cancel cancels the run', async () => {
    const call = flows.slow({ ms: 10000 }, (err) => call.result = err);
    await manager.waitForStats({ 'actors.pending_request': 1 });
    call.cancel();
    await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 });
  });

  test('Status errors map to gRPC status codes', async () => {
    await assert.rejects(unary(flows, 'fail', toValue({ status: 'PERMISSION_DENIED', message: 'no' })),
      (e) => e.code === grpc.status.PERMISSION_DENIED && /no/.test(e.details));
    await assert.rejects(unary(flows, 'createOrder', { customer: { name: '', address: { street: 's', city: 'c', zip: 'bad' } }, items: [] }),
      (e) => e.code === grpc.status.INVALID_ARGUMENT && /Schema validation failed/.test(e.details));
    const md = new grpc.Metadata();
    md.set('runtime-id', 'nobody');
    await assert.rejects(unary(flows, 'createOrder', ORDER, { metadata: md }), (e) => e.code === grpc.status.NOT_FOUND);
    md.set('runtime-id', 'rt');
    assert.equal((await unary(flows, 'createOrder', ORDER, { metadata: md })).itemCount, 3);
    // runtime-name picks a service (its name: the runtime's own by default).
    const byName = new grpc.Metadata();
    byName.set('runtime-name', 'nobody');
    await assert.rejects(unary(flows, 'createOrder', ORDER, { metadata: byName }),
      (e) => e.code === grpc.status.NOT_FOUND && /No runtime named nobody/.test(e.details));
    byName.set('runtime-name', (await manager.runtimes())[0].name);
    assert.equal((await unary(flows, 'createOrder', ORDER, { metadata: byName })).itemCount, 3);
  });

  test('context comes from genkit-context metadata', async () => {
    const md = new grpc.Metadata();
    md.set('genkit-context', JSON.stringify({ auth: { uid: 'u1' } }));
    const who = await unary(flows, 'whoami', { null_value: 'NULL_VALUE' }, { metadata: md });
    assert.match(JSON.stringify(who), /u1/);
    md.set('genkit-context', '[1,');
    await assert.rejects(unary(flows, 'whoami', { null_value: 'NULL_VALUE' }, { metadata: md }),
      (e) => e.code === grpc.status.INVALID_ARGUMENT);
  });

  test('bad input: unknown method, a message that does not parse, garbage', async () => {
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    const raw = (method, bytes) => new Promise((resolve) => client.makeUnaryRequest(method, (b) => b, (b) => b, bytes, (err) => resolve(err)));
    const unknown = await raw('/genkit.flow.Flows/nope', Buffer.alloc(0));
    assert.equal(unknown?.code, grpc.status.UNIMPLEMENTED);
    assert.match(unknown.details, /unknown method \/genkit\.flow\.Flows\/nope/);
    const garbage = await raw('/genkit.flow.Flows/createOrder', Buffer.from([0xff, 0xff, 0xff, 0xff]));
    assert.equal(garbage?.code, grpc.status.INVALID_ARGUMENT);
    assert.match(garbage.details, /does not parse as genkit\.flow\.CreateOrderRequest/);
    const badHealth = await raw('/grpc.health.v1.Health/Check', Buffer.from([0x0a, 0xff]));
    assert.equal(badHealth?.code, grpc.status.INVALID_ARGUMENT);
    client.close();
    await manager.waitForStats({ 'actors.pending_request': 0, 'actors.caller_session': 0 });
  });

  test('reflection: each file once per stream, NotFound and InvalidArgument as error responses', async () => {
    const client = reflectionClient(address);
    const s = reflectionStream(client);
    const first = await s.ask({ file_containing_symbol: 'genkit.flow.Flows' });
    const names = first.file_descriptor_response.file_descriptor_proto.map((b) => decodeFile(b).name);
    assert.ok(names.includes('google/protobuf/struct.proto'), names.join());
    assert.equal(names[0], decodeFile(first.file_descriptor_response.file_descriptor_proto[0]).name);
    const again = await s.ask({ file_containing_symbol: 'genkit.flow.CreateOrderRequest' });
    assert.equal(again.file_descriptor_response.file_descriptor_proto.length, 1, 'dependencies already sent');
    const missing = await s.ask({ file_containing_symbol: 'genkit.flow.Nope' });
    assert.equal(missing.error_response.error_code, grpc.status.NOT_FOUND);
    const invalid = await s.ask({ host: 'h' });
    assert.equal(invalid.error_response.error_code, grpc.status.INVALID_ARGUMENT);
    const byName = await s.ask({ file_by_filename: names[0] });
    assert.equal(decodeFile(byName.file_descriptor_response.file_descriptor_proto[0]).name, names[0]);
    const exts = await s.ask({ all_extension_numbers_of_type: 'genkit.flow.CreateOrderRequest' });
    assert.deepEqual(exts.all_extension_numbers_response.extension_number ?? [], []);
    await s.end();
    client.close();
    // v1alpha: the same answers.
    const alpha = reflectionClient(address, undefined, 'v1alpha');
    const sa = reflectionStream(alpha);
    const list = await sa.ask({ list_services: '' });
    assert.ok(list.list_services_response.service.some((x) => x.name === 'genkit.flow.Flows'));
    await sa.end();
    alpha.close();
  });

  test('the files from reflection are enough to call (protobufjs + proto-loader)', async () => {
    const client = reflectionClient(address);
    const s = reflectionStream(client);
    const res = await s.ask({ file_containing_symbol: 'genkit.tool.Tools' });
    await s.end();
    client.close();
    const { pkg } = packageFromFiles(res.file_descriptor_response.file_descriptor_proto);
    const t = new pkg.genkit.tool.Tools(address, grpc.credentials.createInsecure());
    assert.equal((await unary(t, 'add', { a: 1, b: 2 })).number_value, 3);
    t.close();
  });

  test('the same self-description over HTTP and /api/ws: describe, refs resolved', async () => {
    const byKey = await manager.get('/api/describe?symbol=/flow/createOrder');
    assert.equal(byKey.status, 200, byKey.text);
    assert.equal(byKey.json.key, '/flow/createOrder');
    assert.deepEqual(byKey.json.inputSchema.required, ['customer', 'items']);
    const byGrpc = await manager.get(`/api/describe?symbol=${encodeURIComponent('genkit.flow.Flows/createOrder')}&runtimeId=rt`);
    assert.equal(byGrpc.status, 200, byGrpc.text);
    assert.deepEqual(byGrpc.json.inputSchema, byKey.json.inputSchema);
    assert.equal(byGrpc.json.runtimeId, 'rt');
    const missing = await manager.get('/api/describe?symbol=/flow/nope');
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.json.error.data.code, 5);
    for (const bad of ['', 'echo', 'a%20b']) {
      const r = await manager.get(`/api/describe?symbol=${bad}`);
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
    }
    const api = await manager.api();
    const ws = await api.call('describe', { symbol: 'genkit.tool.Tools.add' });
    assert.equal(ws.key, '/tool/add');
    assert.equal(ws.outputSchema.type, 'number');
    const wsMissing = await api.request('describe', { symbol: '/tool/nope' });
    assert.equal(wsMissing.error.data.code, 5);
    const wsBad = await api.request('describe', { symbol: 'nope' });
    assert.equal(wsBad.error.code, -32602);
    await api.close();
  });

  test('health: the listener, each service, unknown ones', async () => {
    const h = healthClient(address);
    const check = (service) => new Promise((resolve) => h.Check({ service }, (err, res) => resolve(err ?? res)));
    assert.equal((await check('')).status, 'SERVING');
    assert.equal((await check('genkit.flow.Flows')).status, 'SERVING');
    assert.equal((await check('grpc.reflection.v1.ServerReflection')).status, 'SERVING');
    assert.equal((await check('nope.Nope')).code, grpc.status.NOT_FOUND);
    h.close();
  });
});

describe('the catalog follows runtimes while streams are open', () => {
  let manager;
  let address;
  before(async () => {
    ({ manager, address } = await startGrpcManager());
  });
  after(cleanup);

  test('a runtime that joins and leaves while a reflection stream and a health watch are open', async () => {
    const client = reflectionClient(address);
    const s = reflectionStream(client);
    const services = async () => (await s.ask({ list_services: '' })).list_services_response.service.map((x) => x.name);
    assert.ok(!(await services()).includes('genkit.flow.Flows'));
    const h = healthClient(address);
    const watch = h.Watch({ service: 'genkit.tool.Tools' });
    const statuses = [];
    watch.on('data', (r) => statuses.push(r.status));
    watch.on('error', () => {});
    await pollUntil(() => statuses.slice(), (st) => st[0] === 'SERVICE_UNKNOWN', { what: 'SERVICE_UNKNOWN first' });
    const rt = await manager.startRuntime('rt', { kind: 'cpp' });
    await pollUntil(services, (list) => list.includes('genkit.flow.Flows'), { timeoutMs: 15000, intervalMs: 100, what: 'Flows on the open stream' });
    await pollUntil(() => statuses.slice(), (st) => st.at(-1) === 'SERVING', { timeoutMs: 15000, what: 'SERVING on the watch' });
    const file = await s.ask({ file_containing_symbol: 'genkit.flow.Flows.echo' });
    assert.ok(file.file_descriptor_response, JSON.stringify(file.error_response));
    rt.kill('SIGKILL');
    await manager.waitForRuntimeGone('rt', 10000);
    await pollUntil(services, (list) => !list.includes('genkit.flow.Flows'), { timeoutMs: 15000, intervalMs: 100, what: 'Flows gone' });
    const gone = await s.ask({ file_containing_symbol: 'genkit.flow.Flows' });
    assert.equal(gone.error_response?.error_code, grpc.status.NOT_FOUND);
    await pollUntil(() => statuses.slice(), (st) => st.at(-1) === 'SERVICE_UNKNOWN', { timeoutMs: 15000, what: 'SERVICE_UNKNOWN again' });
    watch.cancel();
    await s.end();
    client.close();
    h.close();
    await manager.waitForStats({ 'actors.caller_session': 0 });
  });
});

describe('gRPC front door on SIGTERM', () => {
  after(cleanup);

  test('calls, streams and watches still open end, and the manager exits 0', async () => {
    const { manager, address } = await startGrpcManager(['--drain-timeout', '300ms']);
    await manager.startRuntime('rt', { kind: 'cpp' });
    await waitForService(address, 'genkit.flow.Flows');
    const reflection = new GrpcReflection(address, grpc.credentials.createInsecure());
    const pkg = (await reflection.getDescriptorBySymbol('genkit.flow.Flows')).getPackageObject(LOADER_OPTIONS);
    const flows = new pkg.genkit.flow.Flows(address, grpc.credentials.createInsecure());
    // A run the drain time cancels (its caller is told so), a reflection
    // stream and a health watch that only the shutdown ends.
    const slow = unary(flows, 'slow', { ms: 20000 }).then(() => 'ok', (e) => e);
    const client = reflectionClient(address);
    const s = reflectionStream(client);
    assert.ok((await s.ask({ list_services: '' })).list_services_response);
    const streamEnd = new Promise((resolve) => s.call.on('error', (e) => resolve(e.code)).on('status', (st) => resolve(st.code)));
    const h = healthClient(address);
    const watch = h.Watch({ service: '' });
    const first = new Promise((resolve) => watch.once('data', (r) => resolve(r.status)));
    const watchEnd = new Promise((resolve) => watch.on('error', (e) => resolve(e.code)).on('end', () => resolve('end')));
    assert.equal(await first, 'SERVING');
    await manager.waitForStats({ 'actors.pending_request': 1 });
    const t0 = Date.now();
    const exit = await manager.child.stop({ graceMs: 10000 });
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: 0, signal: null });
    assert.ok(Date.now() - t0 < 8000, `exit took ${Date.now() - t0} ms`);
    const ended = await slow;
    assert.equal(ended.code, grpc.status.CANCELLED, `slow call ended with ${ended.code} ${ended.details}`);
    assert.match(ended.details, /shutting down and the drain timeout passed/);
    assert.notEqual(await watchEnd, 'end', 'the watch ends with an error status');
    assert.notEqual(await streamEnd, grpc.status.OK, 'the reflection stream ends with an error status');
    flows.close();
    client.close();
    h.close();
  });
});
