#include "actors/cluster/cluster_types.hpp"

#include "actors/call/interfaces.hpp"

#include "actors/cluster/seed_resolver.hpp"
#include "registry/runtime_info.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/status_error.hpp"

#include <caf/actor_system_config.hpp>

#include <algorithm>
#include <cctype>

namespace actor_host {

namespace {

// A peer's RuntimeInfo or function metadata is listed to every caller here.
constexpr std::size_t max_info_bytes = 64 * 1024;
constexpr std::size_t max_address_bytes = 300;

constexpr std::size_t max_raw_field_bytes = 4 * 1024;

bool json_or_empty(const std::string& raw) {
  return raw.empty() || (raw.size() <= max_info_bytes && wire::jsonrpc::validate(raw));
}

std::string id_problem(const std::string& id) {
  auto why = registry::peer_text_problem(id, registry::max_peer_text_bytes);
  return why.empty() ? why : "id: " + why;
}

} // namespace

bool valid_node_name(const std::string& n) {
  return !n.empty() && n.size() <= 63 && std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

std::string card_problem(const member_card& card) {
  if (!valid_node_name(card.name))
    return "invalid node name (1 to 63 of A-Z a-z 0-9 . _ -)";
  std::string host;
  std::uint16_t port = 0;
  if (!registry::peer_text_problem(card.address, max_address_bytes).empty()
      || !split_address(card.address, host, port))
    return "node " + card.name + " advertises an address that is not host:port";
  if (!card.reflection_url.empty()
      && (!registry::peer_text_problem(card.reflection_url, max_address_bytes).empty()
          || !(card.reflection_url.starts_with("ws://") || card.reflection_url.starts_with("wss://"))
          || card.reflection_url.find_first_of(" ?#@") != std::string::npos))
    return "node " + card.name + " advertises a reflection URL that is not ws://host:port";
  if (!card.node)
    return "no cluster node handle";
  // Calls go to the gateway: it must be the node's own, not another's.
  if (!card.gateway || card.gateway.node() != card.node.node())
    return "no cluster gateway of its own";
  return {};
}

std::string record_problem(const runtime_record& r) {
  if (auto why = id_problem(r.id); !why.empty())
    return "runtime " + why;
  if (r.info_json.size() > max_info_bytes)
    return "RuntimeInfo larger than 64 KiB";
  if (r.info_json.size() < 2 || r.info_json.front() != '{' || !wire::jsonrpc::validate(r.info_json))
    return "RuntimeInfo is not a JSON object";
  return r.conn ? std::string{} : "no connection";
}

std::string record_problem(const function_record& f) {
  if (auto why = id_problem(f.id); !why.empty())
    return "function " + why;
  for (auto* raw : {&f.metadata, &f.request_format, &f.response_format})
    if (!json_or_empty(*raw))
      return "function metadata or format is not JSON of at most 64 KiB";
  if (f.description.size() > max_info_bytes)
    return "function description larger than 64 KiB";
  if (auto why = id_problem(f.owner); !why.empty())
    return "function owner " + why;
  return f.conn ? std::string{} : "no connection";
}

std::string record_problem(const worker_wire& w) {
  if (auto why = id_problem(w.id); !why.empty())
    return "worker " + why;
  for (auto* text : {&w.ip, &w.name, &w.runtime, &w.version, &w.os})
    if (auto why = registry::peer_text_problem(*text, registry::max_peer_text_bytes);
        !why.empty())
      return "worker " + w.id + ": " + why;
  if (w.description.size() > max_info_bytes)
    return "worker " + w.id + ": description larger than 64 KiB";
  // Both are copied raw into the JSON of engine::workers::list.
  for (auto* raw : {&w.pid, &w.isolation})
    if (raw->empty() || raw->size() > max_raw_field_bytes || !wire::jsonrpc::validate(*raw))
      return "worker " + w.id + ": pid or isolation is not JSON of at most 4 KiB";
  return {};
}

std::string record_problem(const trigger_type_record& t) {
  if (auto why = id_problem(t.id); !why.empty())
    return "trigger type " + why;
  if (t.id.starts_with("engine::"))
    return "trigger type " + t.id + " is the engine's";
  if (auto why = id_problem(t.owner); !why.empty())
    return "trigger type owner " + why;
  if (t.description.size() > max_info_bytes)
    return "trigger type description larger than 64 KiB";
  return {};
}

std::string wire_problem(const iii_wire& w) {
  if (auto why = id_problem(w.id); !why.empty())
    return "trigger " + why;
  if (w.kind != iii_wire::bind)
    return json_or_empty(w.text) ? std::string{} : "error object is not JSON of at most 64 KiB";
  if (auto why = id_problem(w.type); !why.empty())
    return "trigger type " + why;
  if (auto why = id_problem(w.function_id); !why.empty())
    return "function " + why;
  if (w.config.empty() || !json_or_empty(w.config) || !json_or_empty(w.metadata))
    return "trigger config or metadata is not JSON of at most 64 KiB";
  return {};
}

std::size_t sanitize(iii_node_set& set) {
  std::size_t before = set.functions.size() + set.workers.size() + set.types.size();
  auto keep = [](auto& v, std::size_t cap) {
    std::erase_if(v, [](const auto& r) { return !record_problem(r).empty(); });
    if (v.size() > cap)
      v.resize(cap);
  };
  keep(set.functions, max_iii_functions_per_node);
  keep(set.workers, max_iii_workers_per_node);
  keep(set.types, max_iii_types_per_node);
  return before - (set.functions.size() + set.workers.size() + set.types.size());
}

void sanitize(call_error& error) {
  constexpr auto unknown = static_cast<std::int32_t>(wire::status_code::unknown);
  if (error.status < 0 || error.status > 16)
    error.status = unknown;
  if (error.http < 400 || error.http > 599)
    error.http = 500;
  if (error.object.empty())
    error.object = wire::status_error(static_cast<wire::status_code>(error.status), error.message);
}

void add_cluster_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<member_card>("actor_host::member_card");
  cfg.add_message_type<runtime_record>("actor_host::runtime_record");
  cfg.add_message_type<function_record>("actor_host::function_record");
  cfg.add_message_type<worker_wire>("actor_host::worker_wire");
  cfg.add_message_type<trigger_type_record>("actor_host::trigger_type_record");
  cfg.add_message_type<iii_node_set>("actor_host::iii_node_set");
  cfg.add_message_type<call_request>("actor_host::call_request");
  cfg.add_message_type<invocation_request>("actor_host::invocation_request");
  cfg.add_message_type<caller_actor>("actor_host::caller_actor");
  cfg.add_message_type<call_actor>("actor_host::call_actor");
  cfg.add_message_type<gw_request>("actor_host::gw_request");
  cfg.add_message_type<gw_event>("actor_host::gw_event");
  cfg.add_message_type<std::vector<gw_request>>("std::vector<actor_host::gw_request>");
  cfg.add_message_type<std::vector<gw_event>>("std::vector<actor_host::gw_event>");
  cfg.add_message_type<iii_wire>("actor_host::iii_wire");
  cfg.add_message_type<std::vector<iii_wire>>("std::vector<actor_host::iii_wire>");
  // node_status: its runtimes' calls in flight, beside their ids.
  cfg.add_message_type<std::vector<std::int32_t>>("std::vector<int32_t>");
}

} // namespace actor_host
