#define CAF_SUITE v1_link

#include <caf/test/unit_test.hpp>

#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "net/v1_runtime_link.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

// v1_runtime_link against a V1 runtime over real sockets: a net::server
// answering the V1 routes as the JS runtime does (REFLECTION_V1.md). Real
// sockets and I/O threads, hence an `integration` suite; every wait is on a
// condition with a deadline, never a sleep.

using namespace actor_host::net;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// What the link hands its owner, in order.
struct recorder : frame_handler {
  std::mutex mtx;
  std::condition_variable cv;
  std::deque<std::string> frames;
  std::optional<std::string> closed;

  void on_text(std::string frame) override {
    std::lock_guard g{mtx};
    frames.push_back(std::move(frame));
    cv.notify_all();
  }
  void on_closed(std::string reason) override {
    std::lock_guard g{mtx};
    closed = std::move(reason);
    cv.notify_all();
  }
  /// The next frame, or "<none>" after 5 s.
  std::string next() {
    std::unique_lock l{mtx};
    if (!cv.wait_for(l, 5s, [&] { return !frames.empty(); }))
      return "<none>";
    auto f = std::move(frames.front());
    frames.pop_front();
    return f;
  }
  std::string wait_closed() {
    std::unique_lock l{mtx};
    cv.wait_for(l, 5s, [&] { return closed.has_value(); });
    return closed.value_or("<open>");
  }
};

// A V1 runtime: health by id, a streaming echo, a run that holds until
// released, cancel that answers but (with `deaf_cancel`) never ends the run.
struct fake_v1 {
  io_runtime& io;
  server srv;
  std::mutex mtx;
  std::condition_variable cv;
  std::vector<http_responder_ptr> held;
  int health_status = 200;
  std::size_t aborted = 0;
  std::vector<std::string> cancels; // bodies of POST /api/cancelAction
  std::vector<std::string> hops;    // X-Actor-Host-Hops of each run

  explicit fake_v1(io_runtime& io) : io(io), srv(io, server_options{}) {
    srv.on_http([this](http_request req, http_responder_ptr res) { route(req, res); });
    CAF_REQUIRE(srv.listen().empty());
  }

  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(srv.port());
  }

  void route(http_request& req, const http_responder_ptr& res) {
    if (req.path == "/api/__health") {
      std::lock_guard g{mtx};
      auto i = req.query.find("id");
      int status = i != req.query.end() && i->second != "rt" ? 503 : health_status;
      return res->respond(status, "text/plain", status == 200 ? "OK" : "Invalid runtime ID");
    }
    if (req.path == "/api/actions")
      return res->respond(200, "application/json", R"({"/flow/echo":{"key":"/flow/echo","name":"echo"}})");
    if (req.path == "/api/cancelAction") {
      std::lock_guard g{mtx};
      cancels.push_back(req.body);
      cv.notify_all();
      return res->respond(200, "application/json", R"({"message":"Action cancelled"})");
    }
    if (req.path != "/api/runAction")
      return res->respond(404, "text/plain", "not here");
    {
      std::lock_guard g{mtx};
      auto* h = req.header("x-actor-host-hops");
      hops.push_back(h ? *h : "<none>");
    }
    http_headers head{{"X-Genkit-Trace-Id", "0123456789abcdef0123456789abcdef"}};
    if (contains(req.body, "/flow/hold")) {
      res->on_abort([this] {
        std::lock_guard g{mtx};
        ++aborted;
        cv.notify_all();
      });
      res->start_stream(200, "text/plain", head);
      std::lock_guard g{mtx};
      held.push_back(res);
      cv.notify_all();
      return;
    }
    if (contains(req.body, "/flow/huge")) {
      res->start_stream(200, "text/plain", head);
      res->write("\"" + std::string(4096, 'x')); // one record with no end in sight
      return;
    }
    res->start_stream(200, "text/plain", head);
    res->write("{\"n\":1}\n{\"n\"");
    res->write(":2}\n");
    res->write(R"({"result":"done","telemetry":{"traceId":"0123456789abcdef0123456789abcdef"}})");
    res->finish();
  }

  bool wait_held(std::size_t n) {
    std::unique_lock l{mtx};
    return cv.wait_for(l, 5s, [&] { return held.size() >= n; });
  }
  bool wait_cancels(std::size_t n) {
    std::unique_lock l{mtx};
    return cv.wait_for(l, 5s, [&] { return cancels.size() >= n; });
  }
  bool wait_aborted(std::size_t n) {
    std::unique_lock l{mtx};
    return cv.wait_for(l, 5s, [&] { return aborted >= n; });
  }
};

v1_link_options options(const fake_v1& v1) {
  v1_link_options o;
  o.runtime_id = "rt";
  o.url = v1.url();
  o.register_params = R"({"id":"rt","pid":1})";
  o.health_interval = 3600s; // only the first check, unless a test asks
  return o;
}

std::string run_frame(int id, const std::string& key, bool stream) {
  return R"({"jsonrpc":"2.0","method":"runAction","params":{"key":")" + key + R"(","stream":)"
         + (stream ? "true" : "false") + R"(},"id":")" + std::to_string(id) + R"("})";
}

struct fixture {
  io_runtime io{1};
  fake_v1 v1{io};
  std::shared_ptr<recorder> rec = std::make_shared<recorder>();
  fixture() {
    io.start();
  }
  ~fixture() {
    v1.srv.stop_accepting();
    io.stop(500);
  }
  std::shared_ptr<v1_runtime_link> open(v1_link_options o) {
    auto link = v1_runtime_link::make(io, std::move(o));
    link->start(rec);
    return link;
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(v1_link_tests, fixture)

CAF_TEST(a healthy runtime is registered and a streaming run arrives as V2 frames in order) {
  auto link = open(options(v1));
  auto reg = rec->next();
  CAF_CHECK(contains(reg, R"("method":"register","params":{"id":"rt","pid":1},"id":"v1-register")"));
  link->send_text(run_frame(1, "/flow/echo", true));
  CAF_CHECK(contains(rec->next(), R"("method":"runActionState","params":{"requestId":"1","state":{"traceId":"0123456789abcdef0123456789abcdef"}})"));
  CAF_CHECK(contains(rec->next(), R"("chunk":{"n":1})"));
  CAF_CHECK(contains(rec->next(), R"("chunk":{"n":2})"));
  CAF_CHECK(contains(rec->next(), R"("result":{"result":"done")"));
  link->send_text(R"({"jsonrpc":"2.0","method":"listActions","id":"2"})");
  CAF_CHECK(contains(rec->next(), R"("result":{"actions":{"/flow/echo")"));
  // Each run counts one more manager passed (a URL that leads back to a
  // manager shows as a loop there): 1, or the call's count plus one.
  link->send_text(
    R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/echo","actorHostHops":3},"id":"3"})");
  CAF_CHECK(contains(rec->next(), R"("requestId":"3")"));
  {
    std::lock_guard g{v1.mtx};
    CAF_REQUIRE_EQUAL(v1.hops.size(), 2u);
    CAF_CHECK_EQUAL(v1.hops[0], "1");
    CAF_CHECK_EQUAL(v1.hops[1], "4");
  }
  link->close(1000, "test over");
  CAF_CHECK(contains(rec->wait_closed(), "test over"));
}

CAF_TEST(a runtime that fails its health check is never registered) {
  v1.health_status = 503;
  auto link = open(options(v1));
  CAF_CHECK(contains(rec->wait_closed(), "no Reflection V1 server answers"));
  CAF_CHECK(rec->frames.empty());
}

CAF_TEST(a refused register closes the link) {
  auto link = open(options(v1));
  CAF_CHECK(contains(rec->next(), "register"));
  link->send_text(R"({"jsonrpc":"2.0","error":{"code":-32602,"message":"in use"},"id":"v1-register"})");
  CAF_CHECK(contains(rec->wait_closed(), "register refused"));
}

CAF_TEST(a later failed health check closes the link) {
  auto o = options(v1);
  o.health_interval = 20ms;
  auto link = open(o);
  CAF_CHECK(contains(rec->next(), "register"));
  {
    std::lock_guard g{v1.mtx};
    v1.health_status = 500;
  }
  CAF_CHECK(contains(rec->wait_closed(), "health check failed (HTTP 500)"));
}

CAF_TEST(requests in flight are capped and the rest answered RESOURCE_EXHAUSTED at once) {
  auto o = options(v1);
  o.max_exchanges = 2;
  auto link = open(o);
  CAF_CHECK(contains(rec->next(), "register"));
  link->send_text(run_frame(1, "/flow/hold", false));
  link->send_text(run_frame(2, "/flow/hold", false));
  CAF_REQUIRE(v1.wait_held(2));
  CAF_CHECK(contains(rec->next(), "runActionState"));
  CAF_CHECK(contains(rec->next(), "runActionState"));
  link->send_text(run_frame(3, "/flow/echo", false));
  auto refused = rec->next();
  CAF_CHECK(contains(refused, R"("code":8)"));
  CAF_CHECK(contains(refused, R"("id":"3")"));
  // Closing ends both held exchanges: the runtime sees its clients go, and
  // is told to cancel each run (a V1 runtime does not stop on its own).
  link->close(1001, "going away");
  CAF_CHECK(v1.wait_aborted(2));
  CAF_REQUIRE(v1.wait_cancels(2));
  std::lock_guard g{v1.mtx};
  for (auto& body : v1.cancels)
    CAF_CHECK_EQUAL(body, R"({"traceId":"0123456789abcdef0123456789abcdef"})");
}

CAF_TEST(a link closed by a failed health check cancels nothing) {
  auto o = options(v1);
  o.health_interval = 20ms;
  auto link = open(o);
  CAF_CHECK(contains(rec->next(), "register"));
  link->send_text(run_frame(1, "/flow/hold", false));
  CAF_REQUIRE(v1.wait_held(1));
  CAF_CHECK(contains(rec->next(), "runActionState"));
  {
    std::lock_guard g{v1.mtx};
    v1.health_status = 500;
  }
  CAF_CHECK(contains(rec->wait_closed(), "health check failed"));
  CAF_CHECK(v1.wait_aborted(1));
  std::lock_guard g{v1.mtx};
  CAF_CHECK(v1.cancels.empty());
}

CAF_TEST(a cancelled run the runtime does not end is answered CANCELLED after the grace) {
  auto o = options(v1);
  o.cancel_grace = 50ms;
  auto link = open(o);
  CAF_CHECK(contains(rec->next(), "register"));
  link->send_text(run_frame(1, "/flow/hold", true));
  CAF_CHECK(contains(rec->next(), "runActionState"));
  link->send_text(R"({"jsonrpc":"2.0","method":"cancelAction","params":{"traceId":"0123456789abcdef0123456789abcdef"},"id":"2"})");
  // The cancel's own answer and the run's end come in either order.
  auto a = rec->next();
  auto b = rec->next();
  auto both = a + b;
  CAF_CHECK(contains(both, R"("result":{"message":"Action cancelled"},"id":"2")"));
  CAF_CHECK(contains(both, R"("code":1,"message":"Action was cancelled")"));
  CAF_CHECK(v1.wait_aborted(1));
}

CAF_TEST(a stream record over the cap fails the run UNAVAILABLE and closes its exchange) {
  auto o = options(v1);
  o.max_answer_bytes = 1024;
  auto link = open(o);
  CAF_CHECK(contains(rec->next(), "register"));
  link->send_text(run_frame(1, "/flow/huge", true));
  CAF_CHECK(contains(rec->next(), "runActionState"));
  auto f = rec->next();
  CAF_CHECK(contains(f, R"("code":14)"));
  CAF_CHECK(contains(f, "over 1024 bytes"));
}

CAF_TEST(a bidi run and an unknown method are answered without HTTP) {
  auto link = open(options(v1));
  CAF_CHECK(contains(rec->next(), "register"));
  link->send_text(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/echo","streamInput":true},"id":"1"})");
  CAF_CHECK(contains(rec->next(), R"("code":12)"));
  link->send_text(R"({"jsonrpc":"2.0","method":"configure","params":{},"id":"2"})");
  CAF_CHECK(contains(rec->next(), "-32601"));
}

CAF_TEST_FIXTURE_SCOPE_END()
