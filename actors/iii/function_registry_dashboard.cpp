#include "actors/iii/function_registry_ops.hpp"

#include "registry/worker_rbac.hpp"
#include "wire/jsonrpc.hpp"

#include <map>

namespace actor_host::registry_ops {

namespace rpc = wire::jsonrpc;

std::string dashboard_json(self_ptr self) {
  auto& st = self->state;
  std::map<std::string, std::string> fns, trigs;
  for (auto& [id, f] : st.catalog.functions()) {
    if (!registry::may_see(st.opts.front_door.get(), id, &f.metadata))
      continue;
    auto& out = fns[f.owner];
    out += (out.empty() ? "" : ",") + std::string{R"({"id":)"} + rpc::quote(id)
           + R"(,"description":)" + rpc::quote(f.description) + "}";
  }
  for (auto& [id, b] : st.triggers) {
    auto& out = trigs[b.binder];
    out += (out.empty() ? "" : ",") + std::string{R"({"id":)"} + rpc::quote(id) + R"(,"type":)"
           + rpc::quote(b.trigger_type) + R"(,"function":)" + rpc::quote(b.function_id)
           + R"(,"active":)" + (b.active ? "true" : "false") + "}";
  }
  std::string out = R"({"workers":[)";
  bool first = true;
  for (auto& [id, w] : st.workers) {
    auto* rec = st.catalog.find_worker(id);
    if (!rec)
      continue;
    auto row = st.catalog.worker_row(*rec, 0);
    row.pop_back(); // the closing brace: functions and triggers go inside
    out += (first ? "" : ",") + row + R"(,"functions":[)" + fns[id] + R"(],"triggers":[)"
           + trigs[id] + "]}";
    first = false;
  }
  return out + "]}";
}

} // namespace actor_host::registry_ops
