// v1_runtime_link under ThreadSanitizer: V2 requests sent from several
// threads at once (as runtime connections on CAF's threads do), reading
// paused and resumed from another, and a close racing the traffic, while the
// I/O threads run the HTTP exchanges and hand frames on.
#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "net/v1_runtime_link.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace actor_host;
using namespace std::chrono_literals;

namespace {

struct counting_handler : net::frame_handler {
  std::mutex mtx;
  std::condition_variable cv;
  std::size_t answers = 0;
  int closes = 0;
  void on_text(std::string frame) override {
    std::lock_guard g{mtx};
    if (frame.find(R"("result":{"result")") != std::string::npos
        || frame.find(R"("error":)") != std::string::npos)
      ++answers;
    cv.notify_all();
  }
  void on_closed(std::string) override {
    std::lock_guard g{mtx};
    ++closes;
    cv.notify_all();
  }
};

} // namespace

int v1_link_traffic() {
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    if (!ok) {
      std::fprintf(stderr, "FAILED: %s\n", what);
      ++failures;
    }
  };
  net::io_runtime io{2};
  net::server srv{io, net::server_options{}};
  srv.on_http([](net::http_request req, net::http_responder_ptr res) {
    if (req.path == "/api/__health")
      return res->respond(200, "text/plain", "OK");
    res->start_stream(200, "text/plain", {{"X-Genkit-Trace-Id", "0123456789abcdef0123456789abcdef"}});
    for (int i = 0; i < 5; ++i)
      res->write("{\"i\":" + std::to_string(i) + "}\n");
    res->write(R"({"result":1,"telemetry":{"traceId":"0123456789abcdef0123456789abcdef"}})");
    res->finish();
  });
  check(srv.listen().empty(), "v1: listen");
  io.start();
  net::v1_link_options o;
  o.runtime_id = "rt";
  o.url = "http://127.0.0.1:" + std::to_string(srv.port());
  o.register_params = R"({"id":"rt","pid":1})";
  o.health_interval = 5ms; // health checks race the runs too
  auto link = net::v1_runtime_link::make(io, o);
  auto h = std::make_shared<counting_handler>();
  link->start(h);
  constexpr int senders = 4, runs = 40;
  std::atomic<int> next_id{1};
  std::vector<std::thread> threads;
  for (int s = 0; s < senders; ++s)
    threads.emplace_back([&] {
      for (int r = 0; r < runs; ++r)
        link->send_text(R"({"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/x","stream":true},"id":")"
                        + std::to_string(next_id++) + R"("})");
    });
  threads.emplace_back([&] {
    for (int i = 0; i < 50; ++i) {
      link->pause_reading();
      link->resume_reading();
    }
  });
  for (auto& t : threads)
    t.join();
  {
    std::unique_lock g{h->mtx};
    check(h->cv.wait_for(g, 20s, [&] { return h->answers == senders * runs; }),
          "v1: every run answered");
  }
  // A close from another thread while a last burst is in flight.
  std::thread closer{[&] { link->close(1001, "test over"); }};
  for (int r = 0; r < runs; ++r)
    link->send_text(R"({"jsonrpc":"2.0","method":"listActions","id":"x)" + std::to_string(r) + R"("})");
  closer.join();
  {
    std::unique_lock g{h->mtx};
    check(h->cv.wait_for(g, 10s, [&] { return h->closes == 1; }), "v1: closed once");
  }
  link.reset();
  srv.stop_accepting();
  io.stop();
  return failures;
}
