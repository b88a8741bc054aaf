#pragma once

// The fixture of the services and failover hold suites: a directory, a
// probe as the caller, and runtimes registered as replicas of a service.

#include "test_support.hpp"

namespace actor_host::testing {

struct services_fixture : actor_fixture {
  directory_actor dir = spawn_directory();
  caf::actor caller = spawn_probe();
  std::vector<fake_transport_ptr> transports;
  std::vector<connection_actor> conns;

  /// A runtime `id` registered under `name` (its service). With
  /// `actions`, the manager lists them (as it does outside these tests) and
  /// the runtime answers with that listActions result.
  connection_actor add_replica(const std::string& id, const std::string& name,
                               const std::string& actions = {}) {
    auto t = make_fake_transport("127.0.0.1:" + std::to_string(41000 + transports.size()));
    auto opts = default_connection_options();
    opts.learn_actions = !actions.empty();
    auto c = spawn_connection(t, dir, opts);
    send_frame(c, register_frame(id, R"("1")", "4242", name));
    CAF_REQUIRE_EQUAL(t->size(), actions.empty() ? 1u : 2u);
    CAF_CHECK_EQUAL(member(t->frame(0), {"result"}), "{}");
    if (!actions.empty()) {
      CAF_CHECK_EQUAL(member_str(t->frame(1), {"method"}), "listActions");
      send_frame(c, R"({"jsonrpc":"2.0","result":)" + actions + R"(,"id":)"
                      + member(t->frame(1), {"id"}) + "}");
    }
    t->clear();
    transports.push_back(t);
    conns.push_back(c);
    return c;
  }

  call_request run(std::string name = {}, std::string id = {}, caf::timespan timeout = {}) {
    auto c = make_call(0, "runAction", R"({"key":"/flow/x"})", timeout);
    c.runtime_name = std::move(name);
    c.runtime_id = std::move(id);
    return c;
  }

  call_route route_of(const call_request& req) {
    return route_call(*board->current(), req);
  }

  std::string services() {
    return std::get<0>(ask<std::string>(dir, services_atom_v));
  }

  void finish() {
    stop(caller);
    for (auto& c : conns)
      stop(c, caf::exit_reason::user_shutdown);
    stop(dir);
    check_no_leaks();
  }
};

} // namespace actor_host::testing
