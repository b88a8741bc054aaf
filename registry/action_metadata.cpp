#include "registry/action_metadata.hpp"

#include "wire/jsonrpc.hpp"

namespace actor_host::registry {

namespace rpc = wire::jsonrpc;

std::vector<std::string> idempotent_actions(const std::string& list_actions_result) {
  std::vector<std::string> out;
  auto result = rpc::split_object(list_actions_result);
  auto* listed = result ? result->find("actions") : nullptr;
  if (!listed)
    return out;
  auto actions = rpc::split_object(*listed);
  if (!actions)
    return out;
  for (auto& [key, descriptor] : actions->members) {
    std::string_view meta[1];
    std::string_view retry[1];
    std::string value;
    if (rpc::find_members(descriptor, {"metadata"}, meta) && !meta[0].empty()
        && meta[0].front() == '{' && rpc::find_members(descriptor, meta[0], {"retry"}, retry)
        && !retry[0].empty() && rpc::string_value(retry[0], value) && value == "idempotent"
        && !key.empty() && key.size() <= 1024) {
      out.push_back(key);
      if (out.size() == max_declared)
        break;
    }
  }
  return out;
}

} // namespace actor_host::registry
