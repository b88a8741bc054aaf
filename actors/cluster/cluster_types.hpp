#pragma once

#include "actors/call/call_end.hpp"
#include "actors/call/call_request.hpp"
#include "actors/call/invocation_request.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/meta/type_name.hpp>

#include <cstdint>
#include <string>
#include <vector>

// What crosses the wire between the managers of a cluster, besides the call
// path's own messages (docs/CLUSTER.md). Every type here is serialized by
// CAF's BASP; add_cluster_types() gives each its portable name.
namespace actor_host {

/// Bumped when the messages between nodes change incompatibly: a node of
/// another version is refused at hello, with both versions in the log.
inline constexpr std::uint32_t cluster_protocol_version = 6;

/// A node as the others know it.
struct member_card {
  std::string name;
  std::string address;           // "host:port" of its cluster endpoint
  std::uint64_t incarnation = 0; // new per process start: a restart replaces the old one
  std::uint32_t version = cluster_protocol_version;
  caf::actor node;               // its cluster_node
  caf::actor gateway;            // its cluster_gateway: where calls to it go
  // Where runtimes register at it (ws:// or wss://, no token): handed to the
  // runtimes registered at the other nodes, so they can move here.
  std::string reflection_url;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, member_card& x) {
  return f(caf::meta::type_name("member_card"), x.name, x.address, x.incarnation, x.version,
           x.node, x.gateway, x.reflection_url);
}

/// A runtime registered at one node, as the other nodes list and call it.
struct runtime_record {
  std::string id;
  std::string info_json; // RuntimeInfo
  caf::actor conn;       // its runtime_connection
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, runtime_record& x) {
  return f(caf::meta::type_name("runtime_record"), x.id, x.info_json, x.conn);
}

/// An iii function registered at one node, as the other nodes route to it
/// and list it (engine::functions::list answers for the whole cluster).
struct function_record {
  std::string id;
  std::string metadata; // raw JSON, "" when absent (RBAC filters read it)
  caf::actor conn;      // the owning worker_connection
  std::string owner;    // the owning worker's id
  std::string description;
  std::string request_format;  // raw JSON, "" when absent
  std::string response_format; // raw JSON, "" when absent
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, function_record& x) {
  return f(caf::meta::type_name("function_record"), x.id, x.metadata, x.conn, x.owner,
           x.description, x.request_format, x.response_format);
}

/// An iii worker connected to one node, as engine::workers::list shows it
/// at the others (registry::worker_record's fields).
struct worker_wire {
  std::string id, ip;
  std::int64_t connected_at_ms = 0;
  std::string name, description, runtime, version, os;
  std::string pid = "null";       // raw JSON
  std::string isolation = "null"; // raw JSON
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, worker_wire& x) {
  return f(caf::meta::type_name("worker_wire"), x.id, x.ip, x.connected_at_ms, x.name,
           x.description, x.runtime, x.version, x.os, x.pid, x.isolation);
}

/// A trigger type a worker at one node provides.
struct trigger_type_record {
  std::string id;
  std::string owner; // the providing worker's id
  std::string description;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, trigger_type_record& x) {
  return f(caf::meta::type_name("trigger_type_record"), x.id, x.owner, x.description);
}

/// Everything of one node's iii engine the other nodes route to or list:
/// sent whole on every change (`fnset`).
struct iii_node_set {
  std::vector<function_record> functions;
  std::vector<worker_wire> workers;
  std::vector<trigger_type_record> types;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, iii_node_set& x) {
  return f(caf::meta::type_name("iii_node_set"), x.functions, x.workers, x.types);
}

/// At most this many entries of each kind per node are kept; the rest of a
/// larger set is dropped (logged).
inline constexpr std::size_t max_iii_functions_per_node = 100000;
inline constexpr std::size_t max_iii_workers_per_node = 10000;
inline constexpr std::size_t max_iii_types_per_node = 10000;

/// One step of a call, from the entry node's gateway to the owner's
/// (actors/cluster/gateway.cpp). A batch of them is one BASP message.
struct gw_request {
  enum kind_t : std::uint8_t { call, exec, input, end_input, abort };
  std::uint8_t kind = call;
  std::uint64_t id = 0; // the call's id at the entry node (exec: 0 = no reply)
  std::string text;     // call: the target runtime's id; input: the chunk
  caf::actor conn;      // call, exec: the owner's connection
  call_request req;     // call
  invocation_request inv; // exec
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gw_request& x) {
  return f(caf::meta::type_name("gw_request"), x.kind, x.id, x.text, x.conn, x.req, x.inv);
}

/// One event of a call, from the owner's gateway to the entry node's.
struct gw_event {
  enum kind_t : std::uint8_t { trace, chunk, done_ok, done_failed };
  std::uint8_t kind = trace;
  std::uint64_t id = 0;
  std::string text;  // the trace id, the chunk or the result
  call_error error;  // done_failed: the error as the owner made or classified it
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, gw_event& x) {
  return f(caf::meta::type_name("gw_event"), x.kind, x.id, x.text, x.error);
}

/// One message of the iii engine between two nodes, beside the calls
/// (actors/cluster/gateway_iii.cpp): trigger bindings forwarded to the node
/// that offers their type, and the ends of channels whose socket is at
/// another node than the channel. A batch of them is one BASP message
/// (gw_requests_atom with a vector of these).
struct iii_wire {
  enum kind_t : std::uint8_t {
    bind,        // binder's node -> type's node: id, type, function_id, config, metadata
    unbind,      // binder's node -> type's node: id
    bind_result, // type's node -> binder's node: id, text = the provider's error ("" = ok)
    ch_open,     // socket's node -> channel's node: link, id = channel id, text = key, flag = writer
    ch_ready,    // channel's node -> socket's node: link, count = buffer (frames), bytes = byte cap
    ch_frame,    // either way: link, flag = binary, text = the frame
    ch_close,    // either way: link, flag = clean, code, text = reason
    ch_credit,   // link, count: frames the channel passed on (to a writer's node), or a
                 // reader's node handed to its socket (to the channel's node)
  };
  std::uint8_t kind = bind;
  std::uint64_t link = 0;  // a channel end's link: the id its socket's node gave it
  bool to_opener = false;  // ch_*: for the socket's node (else for the channel's)
  bool flag = false;
  std::uint16_t code = 0;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::string id, text;
  std::string type, function_id, config, metadata;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, iii_wire& x) {
  return f(caf::meta::type_name("iii_wire"), x.kind, x.link, x.to_opener, x.flag, x.code,
           x.count, x.bytes, x.id, x.text, x.type, x.function_id, x.config, x.metadata);
}

/// At most this many bindings of another node are kept per node, and this
/// many channel ends of another node are open here at once.
inline constexpr std::size_t max_iii_remote_bindings_per_node = 10000;
inline constexpr std::size_t max_iii_links_per_node = 10000;

// What a peer sends is checked before it is listed, logged or dialed: "" or
// why not.

/// Node names become log fields, JSON and `node/id` prefixes: DNS-label-like.
bool valid_node_name(const std::string& name);
/// Name, advertised address (host:port, printable, at most 300 bytes),
/// a cluster node handle and a gateway on the same node. (The version is the hello's to judge.)
std::string card_problem(const member_card& card);
/// Id as a runtime's own registration; RuntimeInfo a JSON object of at most
/// 64 KiB; a connection.
std::string record_problem(const runtime_record& record);
/// Id as a runtime id; metadata and formats JSON of at most 64 KiB each, a
/// description of at most 64 KiB, an owner as peer text; a connection.
std::string record_problem(const function_record& record);
std::string record_problem(const worker_wire& record);
std::string record_problem(const trigger_type_record& record);
/// A peer's call error, made fit for a front door: a Status code outside
/// 0..16 becomes UNKNOWN, an HTTP status outside 400..599 becomes 500, and
/// an error without an object gets the UNKNOWN Status object of its message.
void sanitize(call_error& error);
/// A binding's fields as peer text / JSON of at most 64 KiB (bind, unbind,
/// bind_result; an error object at most 64 KiB).
std::string wire_problem(const iii_wire& w);
/// Drops the entries that fail record_problem and those past the caps;
/// returns how many were dropped.
std::size_t sanitize(iii_node_set& set);

/// Registers every type that crosses nodes (these and the call path's:
/// call_request and the typed handles of callers and calls). Before the
/// actor system is made from `cfg`.
void add_cluster_types(caf::actor_system_config& cfg);

} // namespace actor_host
