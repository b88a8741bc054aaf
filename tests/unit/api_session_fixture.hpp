#pragma once

// What the api_session suites share: a registered runtime connection and an
// /api/ws session on fake sockets (api_session_test.cpp, api_session_calls_test.cpp).

#include "runtime_frames.hpp"
#include "test_support.hpp"

#include <string>
#include <string_view>

namespace actor_host::testing {

struct session_fixture : actor_fixture {
  fake_transport_ptr rt = make_fake_transport("127.0.0.1:40001");  // runtime socket
  fake_transport_ptr api = make_fake_transport("127.0.0.1:50001"); // caller socket
  directory_actor dir = spawn_directory();
  connection_actor conn = spawn_connection(rt, dir);
  api_session_actor sess = spawn_session(api, dir);

  session_fixture() {
    send_frame(conn, register_frame("rt1"));
    CAF_REQUIRE_EQUAL(rt->size(), 1u);
    rt->clear();
  }

  api_session_state& session_state() {
    return deref<std::remove_pointer_t<api_session_ptr>>(sess).state;
  }

  /// The runtime side: a frame from the runtime to the manager.
  void from_runtime(std::string text) {
    send_frame(conn, std::move(text));
  }

  /// The caller side: a frame from the program to the manager.
  void from_caller(std::string text) {
    send_frame(sess, std::move(text));
  }

  void finish() {
    stop(sess, caf::exit_reason::user_shutdown);
    stop(conn, caf::exit_reason::user_shutdown);
    stop(dir);
    check_no_leaks();
  }
};

inline std::string chunk(std::string_view request_id, std::string_view raw) {
  return R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":)"
         + std::string{request_id} + R"(,"chunk":)" + std::string{raw} + "}}";
}

} // namespace actor_host::testing
