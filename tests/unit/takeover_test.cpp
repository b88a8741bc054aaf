#define CAF_SUITE register_takeover

#include "test_support.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

// A second `register` of a live runtime id must not reroute that runtime's
// callers: the directory pings the holder's socket and refuses the claimant
// when it answers, and hands the id over at once when it does not (a runtime
// that reconnected around a dead link).

namespace {

struct takeover_fixture : actor_fixture {
  directory_actor dir = spawn_directory();
  fake_transport_ptr holder_t = make_fake_transport("127.0.0.1:40001");
  connection_actor holder = spawn_connection(holder_t, dir);
  fake_transport_ptr claimant_t = make_fake_transport("127.0.0.1:40002");
  connection_actor claimant = spawn_connection(claimant_t, dir);

  takeover_fixture() {
    send_frame(holder, register_frame("rt1"));
    CAF_REQUIRE_EQUAL(holder_t->last(), R"({"jsonrpc":"2.0","result":{},"id":"1"})");
  }

  caf::actor route_to(const std::string& id) {
    return std::get<1>(route(id));
  }

  void finish() {
    stop(holder, caf::exit_reason::user_shutdown);
    stop(claimant, caf::exit_reason::user_shutdown);
    stop(dir);
    check_no_leaks();
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(takeover_tests, takeover_fixture)

CAF_TEST(a live holder keeps its id and the claimant gets a JSON-RPC error) {
  send_frame(claimant, register_frame("rt1", R"("7")"));
  // The directory asked the holder, which pinged its socket; no answer yet.
  CAF_CHECK_EQUAL(holder_t->pings(), 1);
  CAF_CHECK_EQUAL(claimant_t->size(), 0u);
  holder_t->answer_pings();
  sched.run();
  CAF_REQUIRE_EQUAL(claimant_t->size(), 1u);
  auto reply = claimant_t->last();
  CAF_CHECK_EQUAL(member(reply, {"id"}), R"("7")");
  CAF_CHECK_EQUAL(member(reply, {"error", "code"}), "-32602");
  CAF_CHECK(contains(member_str(reply, {"error", "message"}), "in use by a live connection"));
  CAF_CHECK(route_to("rt1") == holder);
  CAF_CHECK_EQUAL(holder_t->close_calls(), 0);
  CAF_CHECK_EQUAL(deref<connection_actor::stateful_base<connection_state>>(claimant).state.runtime_id, "");
  // The deadline passing later changes nothing.
  advance_time(5s);
  sched.run();
  CAF_CHECK(route_to("rt1") == holder);
  finish();
}

CAF_TEST(a holder that does not answer within the deadline loses the id at once) {
  send_frame(claimant, register_frame("rt1", R"("7")"));
  CAF_CHECK_EQUAL(holder_t->pings(), 1);
  CAF_CHECK_EQUAL(claimant_t->size(), 0u);
  CAF_CHECK_EQUAL(advance_time(2s), 1u);
  sched.run();
  CAF_CHECK_EQUAL(claimant_t->last(), R"({"jsonrpc":"2.0","result":{},"id":"7"})");
  CAF_CHECK(route_to("rt1") == claimant);
  // The dead holder is closed; its death does not take the id with it.
  CAF_CHECK_EQUAL(holder_t->close_calls(), 1);
  CAF_CHECK(route_to("rt1") == claimant);
  CAF_CHECK_EQUAL(registered_runtimes.load(), 1);
  // A pong that arrives too late changes nothing.
  holder_t->answer_pings();
  sched.run();
  CAF_CHECK(route_to("rt1") == claimant);
  finish();
}

CAF_TEST(a holder whose socket already closed loses the id without a probe delay) {
  caf::anon_send(holder, closed_atom_v, std::string{"connection reset"});
  sched.run();
  send_frame(claimant, register_frame("rt1", R"("7")"));
  CAF_CHECK_EQUAL(claimant_t->last(), R"({"jsonrpc":"2.0","result":{},"id":"7"})");
  CAF_CHECK(route_to("rt1") == claimant);
  finish();
}

CAF_TEST(a third claimant during the probe is refused at once) {
  auto third_t = make_fake_transport("127.0.0.1:40003");
  auto third = spawn_connection(third_t, dir);
  send_frame(claimant, register_frame("rt1", R"("7")"));
  send_frame(third, register_frame("rt1", R"("8")"));
  CAF_CHECK_EQUAL(member(third_t->last(), {"error", "code"}), "-32602");
  holder_t->answer_pings();
  sched.run();
  CAF_CHECK_EQUAL(member(claimant_t->last(), {"error", "code"}), "-32602");
  CAF_CHECK(route_to("rt1") == holder);
  stop(third, caf::exit_reason::user_shutdown);
  finish();
}

CAF_TEST(the holder re-registering on its own socket needs no probe) {
  send_frame(holder, register_frame("rt1", R"("2")"));
  CAF_CHECK_EQUAL(holder_t->pings(), 0);
  CAF_CHECK_EQUAL(holder_t->last(), R"({"jsonrpc":"2.0","result":{},"id":"2"})");
  finish();
}

CAF_TEST(peer strings are capped and control characters refused) {
  send_frame(claimant, register_frame(std::string(300, 'x'), R"("3")"));
  CAF_CHECK_EQUAL(member(claimant_t->last(), {"error", "code"}), "-32602");
  CAF_CHECK(contains(member_str(claimant_t->last(), {"error", "message"}), "at most 256"));
  send_frame(claimant, register_frame("evil\\ninjected", R"("4")"));
  CAF_CHECK(contains(member_str(claimant_t->last(), {"error", "message"}), "control character"));
  send_frame(claimant, register_frame("\\u001b[31mred", R"("5")"));
  CAF_CHECK(contains(member_str(claimant_t->last(), {"error", "message"}), "control character"));
  CAF_CHECK_EQUAL(registered_runtimes.load(), 1);
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
