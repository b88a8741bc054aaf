// Differential: actor-host's server reflection against the gRPC project's
// own Node reflection server (@grpc/reflection, pinned) serving the same
// descriptor set. The files come from actor-host (what its catalog
// generated for the demo runtime); both servers then get the same requests,
// each on a fresh stream, and their answers must agree request by request:
// the same error codes, the same files, and in each file the same
// messages, fields, enums and services.
//
// Where grpc-node and grpc-go (the reference) differ, actor-host follows
// grpc-go, and the test says so: AllExtensionNumbersOfType of a known type
// without extensions is an empty list (grpc-node: NOT_FOUND), a request that
// names no message_request is INVALID_ARGUMENT (grpc-node: UNIMPLEMENTED),
// and ListServices also names the well-known services actor-host serves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { cleanup, pollUntil } from './lib/harness.mjs';
import {
  decodeFile,
  grpc,
  protoLoader,
  protobuf,
  ReflectionService,
  reflectionClient,
  reflectionStream,
  startGrpcManager,
} from './lib/grpc.mjs';

const BUILTIN = new Set(['grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']);

/** A file as both servers must agree on it. */
function normalize(file) {
  // protobufjs writes the type names it can relative ('Chunk' for
  // '.genkit.flow.ChatResponse.Chunk'): the last name is what both share.
  const dot = (t) => (t ? t.split('.').pop() : '');
  const message = (m) => ({
    name: m.name,
    fields: (m.field || []).map((f) => [f.name, f.number, f.label, f.type, dot(f.typeName)]),
    nested: (m.nestedType || []).map(message),
    enums: (m.enumType || []).map((e) => [e.name, (e.value || []).map((v) => [v.name, v.number])]),
  });
  return {
    name: file.name,
    package: file.package || '',
    // Not `dependency`: @grpc/reflection rebuilds files from proto-loader's
    // definitions, which keep no import list; the files sent with the one
    // asked for are compared instead.
    messages: (file.messageType || []).map(message),
    enums: (file.enumType || []).map((e) => [e.name, (e.value || []).map((v) => [v.name, v.number])]),
    services: (file.service || []).map((s) => [s.name, (s.method || []).map((m) =>
      [m.name, dot(m.inputType), dot(m.outputType), !!m.clientStreaming, !!m.serverStreaming])]),
  };
}

/** The answer to one request, as comparable data. */
function summarize(res) {
  if (res.error_response) return { error: res.error_response.error_code };
  if (res.file_descriptor_response) {
    const files = res.file_descriptor_response.file_descriptor_proto.map((b) => normalize(decodeFile(b)));
    return { files: files.sort((a, b) => a.name.localeCompare(b.name)) };
  }
  if (res.list_services_response) return { services: res.list_services_response.service.map((s) => s.name).sort() };
  if (res.all_extension_numbers_response) return { extensions: res.all_extension_numbers_response };
  return { other: res.message_response };
}

async function ask(address, req) {
  const client = reflectionClient(address);
  const s = reflectionStream(client);
  try {
    return await s.ask(req);
  } finally {
    await s.end();
    client.close();
  }
}

describe('server reflection: actor-host against @grpc/reflection on the same descriptors', () => {
  let ours;
  let theirs;
  let server;
  const files = new Map(); // name -> FileDescriptorProto bytes
  let services = [];
  let symbols = [];
  before(async () => {
    const { manager, address } = await startGrpcManager();
    ours = address;
    await manager.startRuntime('rt', { kind: 'cpp' });
    await pollUntil(() => ask(ours, { list_services: '' }),
      (r) => r.list_services_response?.service.some((s) => s.name === 'genkit.flow.Flows'),
      { timeoutMs: 15000, intervalMs: 100, what: 'genkit.flow.Flows listed' });
    services = (await ask(ours, { list_services: '' })).list_services_response.service.map((s) => s.name)
      .filter((s) => !BUILTIN.has(s));
    for (const svc of services) {
      const res = await ask(ours, { file_containing_symbol: svc });
      for (const b of res.file_descriptor_response.file_descriptor_proto) files.set(decodeFile(b).name, b);
    }
    // Every symbol of the catalog's files: services, methods, messages (nested too), enums.
    for (const b of files.values()) {
      const f = decodeFile(b);
      if (f.name.startsWith('google/')) continue;
      const pkg = f.package;
      for (const s of f.service || []) {
        symbols.push(`${pkg}.${s.name}`);
        for (const m of s.method || []) symbols.push(`${pkg}.${s.name}.${m.name}`);
      }
      const walk = (prefix, m) => {
        symbols.push(`${prefix}.${m.name}`);
        for (const e of m.enumType || []) symbols.push(`${prefix}.${m.name}.${e.name}`);
        for (const n of m.nestedType || []) walk(`${prefix}.${m.name}`, n);
      };
      for (const m of f.messageType || []) walk(pkg, m);
    }
    const set = protobuf.descriptor.FileDescriptorSet.encode({ file: [...files.values()].map(decodeFile) }).finish();
    const def = protoLoader.loadFileDescriptorSetFromBuffer(Buffer.from(set), { keepCase: true });
    server = new grpc.Server();
    new ReflectionService(def).addToServer(server);
    const port = await new Promise((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    theirs = `127.0.0.1:${port}`;
  });
  after(async () => {
    await new Promise((resolve) => (server ? server.tryShutdown(resolve) : resolve()));
    await cleanup();
  });

  test('the catalog has the demo runtime\'s services and files', () => {
    assert.ok(services.includes('genkit.flow.Flows') && services.includes('genkit.tool.Tools'), services.join());
    assert.ok(files.has('google/protobuf/struct.proto'));
    assert.ok(symbols.length > 20, `${symbols.length} symbols`);
  });

  test('ListServices: the same services (actor-host adds the well-known ones it serves)', async () => {
    const [a, b] = await Promise.all([ask(ours, { list_services: '*' }), ask(theirs, { list_services: '*' })]);
    const mine = summarize(a).services.filter((s) => !BUILTIN.has(s));
    assert.deepEqual(mine, summarize(b).services);
    for (const s of BUILTIN) assert.ok(summarize(a).services.includes(s));
  });

  test('FileContainingSymbol: every symbol, the same file and dependencies', async () => {
    for (const symbol of symbols) {
      const [a, b] = await Promise.all([ask(ours, { file_containing_symbol: symbol }), ask(theirs, { file_containing_symbol: symbol })]);
      assert.deepEqual(summarize(a), summarize(b), symbol);
    }
  });

  test('FileByFilename: every file', async () => {
    for (const name of files.keys()) {
      const [a, b] = await Promise.all([ask(ours, { file_by_filename: name }), ask(theirs, { file_by_filename: name })]);
      assert.deepEqual(summarize(a), summarize(b), name);
    }
  });

  test('unknown symbols, files and extensions: NOT_FOUND from both', async () => {
    for (const req of [
      { file_containing_symbol: 'genkit.flow.Nope' },
      { file_containing_symbol: 'nope' },
      { file_by_filename: 'nope.proto' },
      { file_containing_extension: { containing_type: 'genkit.flow.CreateOrderRequest', extension_number: 100 } },
      { file_containing_extension: { containing_type: 'nope.Nope', extension_number: 1 } },
      { all_extension_numbers_of_type: 'nope.Nope' },
    ]) {
      const [a, b] = await Promise.all([ask(ours, req), ask(theirs, req)]);
      assert.deepEqual(summarize(a), summarize(b), JSON.stringify(req));
      assert.equal(summarize(a).error, grpc.status.NOT_FOUND);
    }
  });

  test('where grpc-go and grpc-node differ, actor-host answers as grpc-go does', async () => {
    const known = { all_extension_numbers_of_type: 'genkit.flow.CreateOrderRequest' };
    const [a, b] = await Promise.all([ask(ours, known), ask(theirs, known)]);
    assert.ok(a.all_extension_numbers_response, JSON.stringify(a));
    assert.deepEqual(a.all_extension_numbers_response.extension_number ?? [], []);
    assert.equal(b.error_response?.error_code, grpc.status.NOT_FOUND);
    const empty = { host: 'x' };
    const [c, d] = await Promise.all([ask(ours, empty), ask(theirs, empty)]);
    assert.equal(c.error_response?.error_code, grpc.status.INVALID_ARGUMENT);
    assert.equal(d.error_response?.error_code, grpc.status.UNIMPLEMENTED);
  });
});
