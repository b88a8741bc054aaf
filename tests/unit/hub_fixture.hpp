#pragma once

// What the suites of the hubs (callers of many calls told apart by tag:
// grpc_caller, http_run_hub) share: one registered runtime on a fake
// transport beside the hub under test.

#include "test_support.hpp"

#include <string>
#include <utility>

namespace actor_host::testing {

template <class Hub>
struct hub_fixture_base : actor_fixture {
  fake_transport_ptr rt = make_fake_transport("127.0.0.1:40001");
  directory_actor dir = spawn_directory();
  connection_actor conn = spawn_connection(rt, dir);
  Hub hub; // spawned by the suite's fixture; a test that stops it sets it null

  hub_fixture_base() {
    send_frame(conn, register_frame("rt1"));
    rt->clear();
  }

  void from_runtime(std::string text) {
    send_frame(conn, std::move(text));
  }

  /// Stops the hub, the connection and the directory: nothing may be left.
  void finish() {
    if (hub)
      stop(hub, caf::exit_reason::user_shutdown);
    stop(conn, caf::exit_reason::user_shutdown);
    stop(dir);
    check_no_leaks();
  }
};

} // namespace actor_host::testing
