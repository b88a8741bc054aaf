#define CAF_SUITE iii_channel

#include "iii_fixture.hpp"
#include "test_support.hpp"

#include "actors/iii/channel.hpp"
#include "actors/iii/function_registry.hpp"
#include "actors/iii/worker_connection.hpp"
#include "obs/metrics.hpp"

using namespace actor_host;
using namespace actor_host::testing;
using namespace std::chrono_literals;

namespace {

/// One socket end of a channel: the fake transport and the handler the
/// `/ws/channels/` factory made for it.
struct socket_end {
  fake_transport_ptr t;
  net::frame_handler_ptr h;
};

/// An iii worker (`owner`, transport `to`) on a registry; it creates
/// channels with `engine::channels::create`, and the test plays both
/// sockets through the real upgrade check and socket factory.
struct channel_fixture : iii_fixture {
  std::size_t table_at_start = channels().size();
  fake_transport_ptr to = make_fake_transport("127.0.0.1:42001");
  worker_connection_actor owner;
  std::string id;
  std::string key;
  int next_call = 1;

  channel_fixture() {
    owner = spawn_worker(to, worker_options{});
    to->clear();
  }

  /// `engine::channels::create` from the owner; returns its invocationresult.
  std::string create(const std::string& data = "{}") {
    auto call_id = "c-" + std::to_string(next_call++);
    send_frame(owner, R"({"type":"invokefunction","invocation_id":")" + call_id
                        + R"(","function_id":"engine::channels::create","data":)" + data + "}");
    auto answer = to->last();
    CAF_CHECK_EQUAL(member_str(answer, {"invocation_id"}), call_id);
    id = member_str(answer, {"result", "writer", "channel_id"});
    key = member_str(answer, {"result", "writer", "access_key"});
    return answer;
  }

  std::string target(const std::string& dir_, const std::string& k) const {
    return "/ws/channels/" + id + "?key=" + k + "&dir=" + dir_;
  }

  int check(const std::string& t) const {
    auto f = make_fake_transport();
    f->set_upgrade(t);
    return check_channel_upgrade(f->upgrade());
  }

  /// A socket for one end, accepted (the check passed) and handed over.
  socket_end open(const std::string& dir_) {
    socket_end e{make_fake_transport("127.0.0.1:43000"), nullptr};
    e.t->set_upgrade(target(dir_, key));
    CAF_CHECK_EQUAL(check_channel_upgrade(e.t->upgrade()), 0);
    e.h = open_channel_end(e.t);
    sched.run();
    return e;
  }

  void text(socket_end& e, std::string s) {
    e.h->on_text(std::move(s));
    sched.run();
  }

  void binary(socket_end& e, const std::string& s) {
    CAF_CHECK(e.h->on_binary(s));
    sched.run();
  }

  /// The peer closes with a close frame (`code`, `reason`).
  void peer_close(socket_end& e, std::uint16_t code, std::string reason) {
    e.h->on_peer_close(code, std::move(reason));
    e.h->on_closed("closed by peer");
    sched.run();
  }

  caf::actor channel_actor() const {
    return channels().find(id, key);
  }

  std::int64_t live_channels() const {
    return live_actors(actor_kind::channel) - iii_at_start[4];
  }

  void finish() {
    stop(owner, caf::exit_reason::user_shutdown);
    stop_iii_and_check();
    CAF_CHECK_EQUAL(channels().size(), table_at_start);
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(channel_tests, channel_fixture)

CAF_TEST(create answers two refs of one channel) {
  auto answer = create();
  CAF_CHECK_EQUAL(member_str(answer, {"type"}), "invocationresult");
  CAF_CHECK_EQUAL(id.size(), 36u);
  CAF_CHECK_EQUAL(key.size(), 36u);
  CAF_CHECK_EQUAL(member_str(answer, {"result", "reader", "channel_id"}), id);
  CAF_CHECK_EQUAL(member_str(answer, {"result", "reader", "access_key"}), key);
  CAF_CHECK_EQUAL(member_str(answer, {"result", "writer", "direction"}), "write");
  CAF_CHECK_EQUAL(member_str(answer, {"result", "reader", "direction"}), "read");
  CAF_CHECK_EQUAL(live_channels(), 1);
  CAF_REQUIRE(channel_actor() != nullptr);
  CAF_CHECK_EQUAL(deref<caf::stateful_actor<channel_state>>(channel_actor()).state.buffer_size,
                  channel_default_buffer);
  finish();
}

CAF_TEST(buffer_size is clamped to 1024 and must be a positive integer) {
  create(R"({"buffer_size":5000})");
  CAF_REQUIRE(channel_actor() != nullptr);
  CAF_CHECK_EQUAL(deref<caf::stateful_actor<channel_state>>(channel_actor()).state.buffer_size,
                  1024u);
  for (auto bad : {"0", "-1", "2.5", "\"8\""}) {
    auto answer = create(std::string{R"({"buffer_size":)"} + bad + "}");
    CAF_CHECK_EQUAL(member_str(answer, {"error", "code"}), "INVALID_ARGUMENTS");
  }
  CAF_CHECK_EQUAL(live_channels(), 1);
  finish();
}

CAF_TEST(the upgrade check refuses unknown ids wrong keys and bad directions) {
  create();
  CAF_CHECK_EQUAL(check(target("read", key)), 0);
  CAF_CHECK_EQUAL(check(target("write", key)), 0);
  CAF_CHECK_EQUAL(check(target("read", "not-the-key")), 404);
  CAF_CHECK_EQUAL(check("/ws/channels/00000000-0000-4000-8000-000000000000?key=" + key
                        + "&dir=read"),
                  404);
  CAF_CHECK_EQUAL(check("/ws/channels/?key=" + key + "&dir=read"), 404);
  CAF_CHECK_EQUAL(check(target("sideways", key)), 400);
  CAF_CHECK_EQUAL(check("/ws/channels/" + id + "?key=" + key), 400);
  finish();
}

CAF_TEST(frames reach an early reader in order with text and binary kept) {
  create();
  auto r = open("read");
  auto w = open("write");
  text(w, R"({"type":"hello"})");
  binary(w, "payload");
  text(w, "second");
  CAF_CHECK_EQUAL(r.t->frames(),
                  (std::vector<std::string>{R"({"type":"hello"})", "bin:payload", "second"}));
  CAF_CHECK_EQUAL(r.t->close_calls(), 0);
  peer_close(w, 1000, "stream_complete");
  CAF_CHECK_EQUAL(r.t->close_calls(), 1);
  CAF_CHECK_EQUAL(r.t->close_code(), 1000);
  CAF_CHECK_EQUAL(r.t->close_reason(), "stream_complete");
  CAF_CHECK_EQUAL(live_channels(), 0);
  finish();
}

CAF_TEST(frames written before the reader arrives are buffered then delivered) {
  create();
  auto w = open("write");
  text(w, "one");
  binary(w, "two");
  text(w, "three");
  CAF_CHECK_EQUAL(w.t->paused(), false);
  auto r = open("read");
  CAF_CHECK_EQUAL(r.t->frames(), (std::vector<std::string>{"one", "bin:two", "three"}));
  binary(w, "four");
  CAF_CHECK_EQUAL(r.t->last(), "bin:four");
  finish();
}

CAF_TEST(a writer close passes to a late reader after the buffered frames) {
  create();
  auto w = open("write");
  text(w, "a");
  binary(w, "b");
  peer_close(w, 1000, "channel_close");
  CAF_CHECK_EQUAL(live_channels(), 1); // the frames wait for the reader
  auto r = open("read");
  CAF_CHECK_EQUAL(r.t->frames(), (std::vector<std::string>{"a", "bin:b"}));
  CAF_CHECK_EQUAL(r.t->close_calls(), 1);
  CAF_CHECK_EQUAL(r.t->close_reason(), "channel_close");
  CAF_CHECK_EQUAL(r.t->dropped(), 0u);
  CAF_CHECK_EQUAL(live_channels(), 0);
  finish();
}

CAF_TEST(a writer lost without a close frame closes the reader with 1001) {
  create();
  auto r = open("read");
  auto w = open("write");
  text(w, "a");
  w.h->on_closed("End of file");
  sched.run();
  CAF_CHECK_EQUAL(r.t->frames(), (std::vector<std::string>{"a"}));
  CAF_CHECK_EQUAL(r.t->close_code(), 1001);
  CAF_CHECK_EQUAL(live_channels(), 0);
  finish();
}

CAF_TEST(a second socket for a taken end is closed at once) {
  create();
  auto r = open("read");
  auto r2 = open("read");
  CAF_CHECK(r2.h == nullptr);
  CAF_CHECK_EQUAL(r2.t->close_calls(), 1);
  CAF_CHECK_EQUAL(r2.t->close_code(), 1008);
  auto w = open("write");
  auto w2 = open("write");
  CAF_CHECK_EQUAL(w2.t->close_calls(), 1);
  // The first pair still works.
  text(w, "x");
  CAF_CHECK_EQUAL(r.t->frames(), (std::vector<std::string>{"x"}));
  CAF_CHECK_EQUAL(r.t->close_calls(), 0);
  CAF_CHECK_EQUAL(w.t->close_calls(), 0);
  finish();
}

CAF_TEST(a reader that leaves closes the writer) {
  create();
  auto r = open("read");
  auto w = open("write");
  peer_close(r, 1000, "channel_close");
  CAF_CHECK_EQUAL(w.t->close_calls(), 1);
  CAF_CHECK_EQUAL(w.t->close_code(), 1001);
  CAF_CHECK_EQUAL(live_channels(), 0);
  CAF_CHECK_EQUAL(check(target("write", key)), 404);
  finish();
}

CAF_TEST(a full buffer pauses the writer until the reader comes) {
  create(R"({"buffer_size":2})");
  auto w = open("write");
  text(w, "1");
  CAF_CHECK_EQUAL(w.t->paused(), false);
  text(w, "2");
  CAF_CHECK_EQUAL(w.t->paused(), true);
  text(w, "3"); // a transport that did not stop at once: still taken
  auto r = open("read");
  CAF_CHECK_EQUAL(w.t->paused(), false);
  CAF_CHECK_EQUAL(r.t->frames(), (std::vector<std::string>{"1", "2", "3"}));
  // With the reader there, frames pass straight on: no pause however many.
  for (auto s : {"4", "5", "6", "7"})
    text(w, s);
  CAF_CHECK_EQUAL(w.t->paused(), false);
  CAF_CHECK_EQUAL(r.t->size(), 7u);
  finish();
}

CAF_TEST(a writer that overruns twice the buffer ends the channel) {
  auto before = obs::global().channel_overflows.load();
  create(R"({"buffer_size":2})");
  auto w = open("write");
  for (auto s : {"1", "2", "3"})
    text(w, s);
  CAF_CHECK_EQUAL(live_channels(), 1);
  text(w, "4");
  CAF_CHECK_EQUAL(w.t->close_calls(), 1);
  CAF_CHECK_EQUAL(w.t->close_code(), 1008);
  CAF_CHECK_EQUAL(w.t->close_reason(), "channel buffer full");
  CAF_CHECK_EQUAL(obs::global().channel_overflows.load(), before + 1);
  CAF_CHECK_EQUAL(live_channels(), 0);
  CAF_CHECK_EQUAL(check(target("read", key)), 404);
  finish();
}

CAF_TEST(a channel not fully used is swept after five minutes) {
  auto before = obs::global().channels_swept.load();
  create();
  auto w = open("write");
  CAF_CHECK_EQUAL(advance_time(5min - 1ms), 0u);
  CAF_CHECK_EQUAL(live_channels(), 1);
  CAF_CHECK_EQUAL(advance_time(1ms), 1u);
  sched.run();
  CAF_CHECK_EQUAL(live_channels(), 0);
  CAF_CHECK_EQUAL(w.t->close_calls(), 1);
  CAF_CHECK_EQUAL(w.t->close_reason(), "channel expired");
  CAF_CHECK_EQUAL(obs::global().channels_swept.load(), before + 1);
  CAF_CHECK_EQUAL(check(target("read", key)), 404);
  finish();
}

CAF_TEST(a channel in use is not swept) {
  create();
  auto r = open("read");
  auto w = open("write");
  advance_time(5min);
  sched.run();
  CAF_CHECK_EQUAL(live_channels(), 1);
  text(w, "late");
  CAF_CHECK_EQUAL(r.t->frames(), (std::vector<std::string>{"late"}));
  peer_close(w, 1000, "stream_complete");
  CAF_CHECK_EQUAL(live_channels(), 0);
  finish();
}

CAF_TEST(the owner disconnecting removes its channels not fully used) {
  create();
  auto w = open("write");
  auto first = std::make_pair(id, key);
  create(); // a second channel, never opened
  auto second = std::make_pair(id, key);
  CAF_CHECK_EQUAL(live_channels(), 2);
  caf::anon_send(owner, closed_atom_v, std::string{"closed by peer"});
  sched.run();
  CAF_CHECK_EQUAL(live_channels(), 0);
  CAF_CHECK_EQUAL(w.t->close_calls(), 1);
  CAF_CHECK_EQUAL(w.t->close_reason(), "channel owner disconnected");
  CAF_CHECK(channels().find(first.first, first.second) == nullptr);
  CAF_CHECK(channels().find(second.first, second.second) == nullptr);
  finish();
}

CAF_TEST(a stream between two connected ends outlives the owner) {
  create();
  auto r = open("read");
  auto w = open("write");
  caf::anon_send(owner, closed_atom_v, std::string{"closed by peer"});
  sched.run();
  CAF_CHECK_EQUAL(live_channels(), 1);
  binary(w, "still");
  peer_close(w, 1000, "stream_complete");
  CAF_CHECK_EQUAL(r.t->frames(), (std::vector<std::string>{"bin:still"}));
  CAF_CHECK_EQUAL(r.t->close_reason(), "stream_complete");
  CAF_CHECK_EQUAL(live_channels(), 0);
  finish();
}

CAF_TEST(channels end with the registry) {
  create();
  auto r = open("read");
  stop(reg, caf::exit_reason::user_shutdown);
  CAF_CHECK_EQUAL(live_channels(), 0);
  CAF_CHECK_EQUAL(r.t->close_calls(), 1);
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
