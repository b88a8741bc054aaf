#define CAF_SUITE stream_sink

#include "test_support.hpp"

#include "actors/call/stream_sink.hpp"
#include "actors/dispatch/stream_splices.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

using namespace actor_host;
using namespace actor_host::testing;

namespace {

/// What was written, in order; "!" marks the first event.
class recording_sink : public stream_sink {
public:
  std::string log() {
    std::lock_guard<std::mutex> g{mtx_};
    std::string out;
    for (auto& e : events_)
      out += (out.empty() ? "" : " | ") + e;
    return out;
  }

protected:
  void write_trace(const std::string& id, bool first) override {
    add(std::string{first ? "!" : ""} + "trace " + id);
  }
  void write_chunk(std::string chunk, bool first) override {
    add(std::string{first ? "!" : ""} + "chunk " + chunk);
  }

private:
  void add(std::string e) {
    std::lock_guard<std::mutex> g{mtx_};
    events_.push_back(std::move(e));
  }
  std::mutex mtx_;
  std::vector<std::string> events_;
};

struct sink_fixture : connection_fixture {
  /// Starts a streaming run with `sink` on `c` as `caller`; returns the sink.
  std::shared_ptr<recording_sink> start_stream(const connection_actor& c, std::uint64_t tag) {
    auto sink = std::make_shared<recording_sink>();
    auto req = make_call(tag, "runAction", R"({"key":"/flow/x","input":1,"stream":true})");
    req.stream = true;
    req.sink = sink;
    caf::send_as(caller, c, call_atom_v, std::move(req), caf::actor_cast<caller_actor>(caller));
    sched.run();
    CAF_REQUIRE_EQUAL(events(caller).size(), 1u);
    events(caller).clear(); // the pending_request
    return sink;
  }
};

} // namespace

CAF_TEST(the first trace id counts and nothing is written after close) {
  recording_sink s;
  s.chunk("1");
  s.trace("t-1");
  s.trace("t-2");
  s.chunk("2");
  CAF_CHECK(s.close());
  s.chunk("3");
  s.trace("t-3");
  CAF_CHECK_EQUAL(s.log(), "!chunk 1 | trace t-1 | chunk 2");
  recording_sink quiet;
  CAF_CHECK(!quiet.close()); // nothing was written: the caller answers alone
  quiet.chunk("1");
  CAF_CHECK_EQUAL(quiet.log(), "");
}

// The reader's thread writes chunks while the caller's closes the sink:
// once close() has returned, nothing more is written.
CAF_TEST(nothing is written after close whichever thread writes) {
  for (int round = 0; round < 20; ++round) {
    recording_sink s;
    std::atomic<bool> go{true};
    std::thread writer{[&] {
      while (go.load())
        s.chunk("c");
    }};
    while (s.log().empty())
      std::this_thread::yield();
    s.close();
    auto at_close = s.log();
    go = false;
    writer.join();
    CAF_CHECK_EQUAL(s.log(), at_close);
  }
}

CAF_TEST(the reader takes the chunks of spliced runs and nothing else) {
  stream_splices sp;
  auto chunk = [](const char* id, const char* c) {
    return std::string{R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":)"} + id
           + R"(,"chunk":)" + c + "}}";
  };
  auto state = [](const char* id, const char* trace) {
    return std::string{R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)"}
           + id + R"(,"state":{"traceId":")" + trace + R"("}}})";
  };
  auto f = chunk("\"1\"", "0");
  CAF_CHECK(!sp.take(f)); // nothing spliced
  auto sink = std::make_shared<recording_sink>();
  sp.add("\"1\"", sink);
  CAF_CHECK_EQUAL(sp.size(), 1u);
  auto bad_trace = state("\"1\"", "t\\u000d2");
  CAF_CHECK(!sp.take(bad_trace)); // not written: it would become a header
  CAF_CHECK_EQUAL(sink->log(), "");
  auto s1 = state("\"1\"", "t-1");
  CAF_CHECK(!sp.take(s1)); // written and handed on
  auto c1 = chunk("\"1\"", R"({"n":1})");
  CAF_CHECK(sp.take(c1));
  auto other = chunk("\"2\"", "5");
  CAF_CHECK(!sp.take(other)); // not spliced: the connection's
  auto broken = std::string{R"({"method":"streamChunk","params":{"requestId":"1","chunk":)"};
  CAF_CHECK(!sp.take(broken)); // the connection answers it
  auto answer = std::string{R"({"jsonrpc":"2.0","result":{"streamChunk":1},"id":"1"})"};
  CAF_CHECK(!sp.take(answer));
  auto no_chunk = std::string{R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1"}})"};
  CAF_CHECK(sp.take(no_chunk)); // dropped, as the connection drops it
  sp.remove("\"1\"");
  CAF_CHECK_EQUAL(sp.size(), 0u);
  auto late = chunk("\"1\"", "9");
  CAF_CHECK(!sp.take(late));
  CAF_CHECK_EQUAL(sink->log(), R"(!trace t-1 | chunk {"n":1})");
}

CAF_TEST_FIXTURE_SCOPE(stream_sink_tests, sink_fixture)

// With a sink, the connection writes a streaming run's chunks and trace id
// itself: the caller hears the trace id (for its own state) and the end,
// no chunk; nothing is written once the call has left the connection.
CAF_TEST(the connection writes a streaming run to the caller sink) {
  send_frame(conn, register_frame("rt1"));
  rt->clear();
  auto sink = start_stream(conn, 5);
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":0}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-1"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":{"n":1}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-2"}}})");
  send_frame(conn, R"({"jsonrpc":"2.0","result":{"result":3},"id":"1"})");
  send_frame(conn, R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":4}})");
  CAF_CHECK_EQUAL(sink->log(), R"(!chunk 0 | trace t-1 | chunk {"n":1})");
  CAF_CHECK_EQUAL(render(events(caller)), R"(trace 5 t-1 | done 5 ok {"result":3})");
  finish();
}

// The whole path from the socket: the connection splices the run before
// its request goes out; the bridge writes its chunks on the reader's
// thread, the connection gets the rest; the run leaves the splices with
// its answer.
CAF_TEST(a spliced run goes from the socket reader to the sink) {
  auto opts = default_connection_options();
  opts.splices = std::make_shared<stream_splices>();
  auto rt2 = make_fake_transport("127.0.0.1:40002");
  auto conn2 = spawn_connection(rt2, dir, opts);
  frame_bridge bridge{caf::actor_cast<socket_owner_actor>(conn2), nullptr, nullptr,
                      opts.splices};
  bridge.on_text(register_frame("rt2"));
  sched.run();
  rt2->clear();
  auto sink = start_stream(conn2, 7);
  CAF_CHECK_EQUAL(opts.splices->size(), 1u);
  bridge.on_text(R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":"1","state":{"traceId":"t-7"}}})");
  bridge.on_text(R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":1}})");
  bridge.on_text(R"({"jsonrpc":"2.0","method":"streamChunk","params":{"requestId":"1","chunk":2}})");
  // Written before any actor ran.
  CAF_CHECK_EQUAL(sink->log(), "!trace t-7 | chunk 1 | chunk 2");
  bridge.on_text(R"({"jsonrpc":"2.0","result":{"result":3},"id":"1"})");
  sched.run();
  CAF_CHECK_EQUAL(render(events(caller)), R"(trace 7 t-7 | done 7 ok {"result":3})");
  CAF_CHECK_EQUAL(opts.splices->size(), 0u);
  bridge.on_closed("test over");
  sched.run();
  finish();
}

CAF_TEST_FIXTURE_SCOPE_END()
