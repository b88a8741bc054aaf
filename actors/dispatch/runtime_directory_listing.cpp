// The directory's listings as JSON (GET /api/runtimes, /api/services):
// read-only views of its state, apart from the actor that changes it.
#include "actors/dispatch/runtime_directory_listing.hpp"

#include "wire/jsonrpc.hpp"

#include <algorithm>

namespace actor_host {

namespace {

namespace rpc = wire::jsonrpc;

// A RuntimeInfo object as a clustered listing shows it: with its node and
// `qualifiedId` ("node/id", which routes to that node's runtime even when
// other nodes hold the same id).
std::string listed_info(const std::string& info, const std::string& node, const std::string& id) {
  // info_json is our own RuntimeInfo serialization (registry/runtime_info),
  // or a peer node's checked on arrival: an object with members.
  std::string out = "{\"node\":" + rpc::quote(node)
                    + ",\"qualifiedId\":" + rpc::quote(node + "/" + id) + ",";
  out.append(info, 1, std::string::npos);
  return out;
}

} // namespace

std::string runtimes_json(const directory_state& st) {
  std::string out = "[";
  if (!st.cluster) {
    for (auto& e : st.entries) {
      if (out.size() > 1)
        out += ',';
      out += e.info_json;
    }
    return out += ']';
  }
  auto add = [&](const std::string& info, const std::string& node, const std::string& id) {
    if (out.size() > 1)
      out += ',';
    out += listed_info(info, node, id);
  };
  for (auto& e : st.entries)
    add(e.info_json, st.node_name, e.id);
  for (auto& e : st.remote)
    add(e.info_json, e.node, e.id);
  return out += ']';
}

// GET /api/services: each service (first registered first; `default`
// marks the one calls without runtimeId or runtimeName go to) with its
// replicas. Another node's replicas are listed with their node and the
// calls this node has in flight there.
std::string services_json(const directory_state& st) {
  std::vector<std::string> order;
  auto note = [&](const std::string& s) {
    if (std::find(order.begin(), order.end(), s) == order.end())
      order.push_back(s);
  };
  for (auto& e : st.entries)
    note(e.service);
  for (auto& e : st.remote)
    note(e.service);
  std::string fallback = !st.entries.empty()  ? st.entries.back().service
                         : !st.remote.empty() ? st.remote.back().service
                                              : std::string{};
  std::string out = "[";
  for (auto& name : order) {
    std::int64_t in_flight = 0;
    std::string replicas;
    std::vector<std::string> idempotent;
    for (auto& e : st.entries) {
      if (e.service != name)
        continue;
      idempotent.insert(idempotent.end(), e.idempotent.begin(), e.idempotent.end());
      auto n = e.load ? e.load->current() : 0;
      in_flight += n;
      const char* state = !e.load                                               ? "serving"
                          : e.load->draining.load(std::memory_order_relaxed)    ? "draining"
                          : e.load->ejected(replica_load::clock::now())         ? "ejected"
                                                                                 : "serving";
      replicas += (replicas.empty() ? "" : ",") + std::string{R"({"id":)"} + rpc::quote(e.id)
                  + (st.node_name.empty() ? "" : R"(,"node":)" + rpc::quote(st.node_name))
                  + R"(,"inFlight":)" + std::to_string(n) + R"(,"state":")" + state + "\"}";
    }
    for (auto& e : st.remote)
      if (e.service == name)
        replicas += (replicas.empty() ? "" : ",") + std::string{R"({"id":)"} + rpc::quote(e.id)
                    + R"(,"node":)" + rpc::quote(e.node) + R"(,"inFlightFromHere":)"
                    + std::to_string(e.load->current()) + R"(,"inFlightReported":)"
                    + std::to_string(e.load->reported.load(std::memory_order_relaxed))
                    + R"(,"state":"serving"})";
    std::sort(idempotent.begin(), idempotent.end());
    idempotent.erase(std::unique(idempotent.begin(), idempotent.end()), idempotent.end());
    std::string declared;
    for (auto& k : idempotent)
      declared += (declared.empty() ? "" : ",") + rpc::quote(k);
    auto q = st.services.find(name);
    auto queued = q == st.services.end() ? 0 : q->second.queued->load(std::memory_order_relaxed);
    if (out.size() > 1)
      out += ',';
    out += R"({"name":)" + rpc::quote(name) + R"(,"default":)"
           + (name == fallback ? "true" : "false") + R"(,"inFlight":)"
           + std::to_string(in_flight) + R"(,"queued":)" + std::to_string(queued)
           + R"(,"maxInFlightPerRuntime":)" + std::to_string(st.limits.cap_of(name))
           + R"(,"idempotentActions":[)" + declared + R"(],"replicas":[)" + replicas + "]}";
  }
  return out += ']';
}

} // namespace actor_host
