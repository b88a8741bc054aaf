// gRPC clients for the interop tests: @grpc/grpc-js, a reflection client no
// one here wrote (grpc-js-reflection-client), and raw reflection / health
// streams through protobufjs and @grpc/proto-loader (the reflection .proto
// files come from @grpc/reflection, the health one from grpc_door/proto).
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { INTEROP_NODE_DIR, pollUntil, startManager } from './harness.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(INTEROP_NODE_DIR, 'package.json'));
export const grpc = require('@grpc/grpc-js');
export const protoLoader = require('@grpc/proto-loader');
export const { GrpcReflection } = require('grpc-js-reflection-client');
export const { ReflectionService } = require('@grpc/reflection');
export const protobuf = require('protobufjs');
require('protobufjs/ext/descriptor');

const REFLECTION_PROTO_DIR = path.join(INTEROP_NODE_DIR, 'node_modules', '@grpc', 'reflection', 'build', 'proto');
const HEALTH_PROTO_DIR = path.resolve(here, '..', '..', '..', 'grpc_door', 'proto');

/** How the tests load descriptors: field names as written, int64 as numbers, enums by name. */
export const LOADER_OPTIONS = { keepCase: true, longs: Number, enums: String, defaults: false, oneofs: true };

/** A manager with a gRPC front door; resolves with {manager, grpcPort, address}. */
export async function startGrpcManager(extraArgs = [], opts = {}) {
  const manager = await startManager(['--grpc-port', '0', ...extraArgs], opts);
  const m = await manager.child.waitForLine(/Starting gRPC front door: \S+:(\d+)/, 10000);
  const grpcPort = Number(m[1]);
  return { manager, grpcPort, address: `127.0.0.1:${grpcPort}` };
}

function loadService(dir, file, name) {
  const def = protoLoader.loadSync(path.join(dir, file), { ...LOADER_OPTIONS, includeDirs: [dir] });
  return name.split('.').reduce((o, k) => o[k], grpc.loadPackageDefinition(def));
}

/** A raw reflection client (`version` v1 or v1alpha). */
export function reflectionClient(address, creds = grpc.credentials.createInsecure(), version = 'v1') {
  const Service = loadService(REFLECTION_PROTO_DIR, `grpc/reflection/${version}/reflection.proto`,
    `grpc.reflection.${version}.ServerReflection`);
  return new Service(address, creds);
}

/** A health client. */
export function healthClient(address, creds = grpc.credentials.createInsecure()) {
  const Service = loadService(HEALTH_PROTO_DIR, 'grpc/health/v1/health.proto', 'grpc.health.v1.Health');
  return new Service(address, creds);
}

/**
 * One reflection stream: ask(request) resolves with the next response, in
 * order. Keeps the stream open until end().
 */
export function reflectionStream(client, metadata = new grpc.Metadata()) {
  const call = client.ServerReflectionInfo(metadata);
  const waiting = [];
  const early = [];
  let failure = null;
  call.on('data', (r) => (waiting.length ? waiting.shift().resolve(r) : early.push(r)));
  call.on('error', (e) => {
    failure = e;
    while (waiting.length) waiting.shift().reject(e);
  });
  return {
    call,
    ask(req) {
      call.write(req);
      if (early.length) return Promise.resolve(early.shift());
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    end() {
      call.end();
      return new Promise((resolve) => {
        call.on('status', resolve);
        call.on('error', () => resolve(null));
      });
    },
  };
}

/** FileDescriptorProto bytes -> a plain object (protobufjs's descriptor types). */
export function decodeFile(bytes) {
  return protobuf.descriptor.FileDescriptorProto.decode(bytes);
}

/** A client of every service in the files of `descriptorResponse` (reflection's bytes). */
export function packageFromFiles(fileBytes) {
  const set = protobuf.descriptor.FileDescriptorSet.encode({ file: fileBytes.map(decodeFile) }).finish();
  const def = protoLoader.loadFileDescriptorSetFromBuffer(Buffer.from(set), LOADER_OPTIONS);
  return { def, pkg: grpc.loadPackageDefinition(def) };
}

/** Promisified unary call. */
export function unary(client, method, req, { metadata = new grpc.Metadata(), deadline, onMetadata } = {}) {
  return new Promise((resolve, reject) => {
    const opts = deadline ? { deadline } : {};
    const call = client[method](req, metadata, opts, (err, res) => (err ? reject(err) : resolve(res)));
    if (onMetadata) call.on('metadata', onMetadata);
  });
}

/** All messages of a server-streaming call, then its status. */
export function collect(call) {
  return new Promise((resolve, reject) => {
    const messages = [];
    call.on('data', (m) => messages.push(m));
    call.on('error', (e) => reject(Object.assign(e, { messages })));
    call.on('status', (s) => s.code === 0 && resolve({ messages, status: s }));
  });
}

/** A JS value as google.protobuf.Value (proto-loader's object form, field names as written). */
export function toValue(v) {
  if (v === null) return { null_value: 'NULL_VALUE' };
  if (typeof v === 'number') return { number_value: v };
  if (typeof v === 'string') return { string_value: v };
  if (typeof v === 'boolean') return { bool_value: v };
  if (Array.isArray(v)) return { list_value: { values: v.map(toValue) } };
  // The reflection client turns map fields into their repeated entries.
  return { struct_value: { fields: Object.entries(v).map(([key, x]) => ({ key, value: toValue(x) })) } };
}

/** Waits until reflection on `address` lists `service`. */
export function waitForService(address, service, present = true) {
  const r = new GrpcReflection(address, grpc.credentials.createInsecure());
  return pollUntil(() => r.listServices().catch(() => []), (list) => list.includes(service) === present,
    { timeoutMs: 15000, intervalMs: 100, what: `${service} ${present ? 'listed' : 'gone'}` });
}
