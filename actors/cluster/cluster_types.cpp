#include "actors/cluster/cluster_types.hpp"

#include "actors/call/interfaces.hpp"

#include "actors/cluster/seed_resolver.hpp"
#include "registry/runtime_info.hpp"
#include "wire/jsonrpc.hpp"

#include <caf/actor_system_config.hpp>

#include <algorithm>
#include <cctype>

namespace actor_host {

namespace {

// A peer's RuntimeInfo or function metadata is listed to every caller here.
constexpr std::size_t max_info_bytes = 64 * 1024;
constexpr std::size_t max_address_bytes = 300;

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
  if (f.metadata.size() > max_info_bytes
      || (!f.metadata.empty() && !wire::jsonrpc::validate(f.metadata)))
    return "function metadata is not JSON of at most 64 KiB";
  return f.conn ? std::string{} : "no connection";
}

void add_cluster_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<member_card>("actor_host::member_card");
  cfg.add_message_type<runtime_record>("actor_host::runtime_record");
  cfg.add_message_type<function_record>("actor_host::function_record");
  cfg.add_message_type<call_request>("actor_host::call_request");
  cfg.add_message_type<invocation_request>("actor_host::invocation_request");
  cfg.add_message_type<caller_actor>("actor_host::caller_actor");
  cfg.add_message_type<call_actor>("actor_host::call_actor");
  cfg.add_message_type<gw_request>("actor_host::gw_request");
  cfg.add_message_type<gw_event>("actor_host::gw_event");
  cfg.add_message_type<std::vector<gw_request>>("std::vector<actor_host::gw_request>");
  cfg.add_message_type<std::vector<gw_event>>("std::vector<actor_host::gw_event>");
  // node_status: its runtimes' calls in flight, beside their ids.
  cfg.add_message_type<std::vector<std::int32_t>>("std::vector<int32_t>");
}

} // namespace actor_host
