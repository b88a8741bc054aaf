#pragma once

// The iii side of the manager on the deterministic scheduler: a directory
// and a function registry, workers spawned on fake transports, and the
// live-count check that no iii actor outlives a test.

#include "actors/iii/function_registry.hpp"
#include "actors/iii/worker_connection.hpp"
#include "test_support.hpp"

namespace actor_host::testing {

/// "a b c ": the `key` members of the objects in the JSON array `array`.
inline std::string ids_in(const std::string& array, std::string_view key) {
  auto v = parse_json(array);
  std::string out;
  if (auto* a = v.if_array())
    for (auto& e : *a)
      if (auto* o = e.if_object(); o && o->if_contains(key) && o->at(key).is_string())
        out += std::string{o->at(key).as_string().c_str()} + " ";
  return out;
}

struct iii_fixture : actor_fixture {
  static constexpr auto iii_kinds
    = std::array{actor_kind::function_registry, actor_kind::worker_connection,
                 actor_kind::invocation, actor_kind::trigger_binding, actor_kind::channel};
  std::array<std::int64_t, iii_kinds.size()> iii_at_start{};
  directory_actor dir = spawn_directory();
  caf::actor reg;

  iii_fixture() {
    for (std::size_t i = 0; i < iii_kinds.size(); ++i)
      iii_at_start[i] = live_actors(iii_kinds[i]);
    reg = caf::actor_cast<caf::actor>(sys.spawn(function_registry));
    sched.run();
  }

  /// Short deadlines, so that timeout tests need few clock advances.
  static worker_options opts() {
    worker_options o;
    o.invocation_timeout = std::chrono::seconds(2);
    return o;
  }

  worker_connection_actor spawn_worker(const fake_transport_ptr& t, worker_options o) {
    auto w = sys.spawn(worker_connection, net::transport_ptr{t},
                       caf::actor_cast<function_registry_actor>(reg), door(dir, {}, reg), o);
    sched.run();
    return w;
  }

  /// `w` (whose socket is `t`) invokes `fn` with `data`; returns the
  /// invocationresult frame it gets (or "<no answer>").
  std::string invoke(const worker_connection_actor& w, const fake_transport_ptr& t,
                     const std::string& fn, const std::string& data) {
    auto id = "c-" + std::to_string(next_invocation++);
    t->clear();
    send_frame(w, R"({"type":"invokefunction","invocation_id":")" + id + R"(","function_id":")"
                    + fn + R"(","data":)" + data + "}");
    for (auto& f : t->frames())
      if (member_str(f, {"type"}) == "invocationresult" && member_str(f, {"invocation_id"}) == id)
        return f;
    return "<no answer>";
  }

  /// The invokefunction frames `t` received (and forgets everything it got).
  static std::vector<std::string> invocations(const fake_transport_ptr& t) {
    std::vector<std::string> out;
    for (auto& f : t->take())
      if (member_str(f, {"type"}) == "invokefunction")
        out.push_back(f);
    return out;
  }

  int next_invocation = 1;

  /// Stops the registry and the directory (the test stops its workers
  /// first), then checks that every actor, iii ones included, is gone.
  void stop_iii_and_check() {
    stop(reg, caf::exit_reason::user_shutdown);
    stop(dir);
    check_no_leaks();
    for (std::size_t i = 0; i < iii_kinds.size(); ++i) {
      CAF_MESSAGE("live " << actor_kind_name(iii_kinds[i]));
      CAF_CHECK_EQUAL(live_actors(iii_kinds[i]), iii_at_start[i]);
    }
  }
};

} // namespace actor_host::testing
