#include "actors/cluster/cluster_types.hpp"

#include "actors/manager/interfaces.hpp"

#include <caf/actor_system_config.hpp>

namespace actor_host {

void add_cluster_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<member_card>("actor_host::member_card");
  cfg.add_message_type<runtime_record>("actor_host::runtime_record");
  cfg.add_message_type<function_record>("actor_host::function_record");
  cfg.add_message_type<call_request>("actor_host::call_request");
  cfg.add_message_type<invocation_request>("actor_host::invocation_request");
  cfg.add_message_type<caller_actor>("actor_host::caller_actor");
  cfg.add_message_type<call_actor>("actor_host::call_actor");
}

} // namespace actor_host
