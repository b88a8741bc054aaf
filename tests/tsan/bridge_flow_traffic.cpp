// Part of bridge_tsan_test (bridge_test.cpp says why): read-side backpressure
// as the actors get it, and child processes signalled from one thread while
// the I/O threads reap them.
// TSan sees fails the run (halt_on_error); the checks below fail it too.
#include "actors/common/read_window.hpp"
#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "net/ws_client.hpp"
#include "net/ws_connect.hpp"
#include "obs/metrics.hpp"
#include "proc/process_watch.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bridge_support.hpp"

using namespace actor_host;
using namespace std::chrono_literals;

namespace bridge_tsan {

/// Read-side backpressure as the actors get it (actors/common/read_window):
/// frames counted on the I/O strand, acknowledged from pool threads that
/// are slower than the clients, the socket paused at the window and resumed
/// at half. No more than the window may ever be unprocessed.
class windowed_echo : public net::frame_handler,
                      public std::enable_shared_from_this<windowed_echo> {
public:
  static constexpr std::size_t window = 4;

  windowed_echo(net::transport_ptr t, worker_pool& pool, close_count& closed,
                std::atomic<std::size_t>& most)
    : w_(std::make_shared<windowed_transport>(std::move(t), window)), pool_(pool),
      closed_(closed), most_(most) {
  }
  void on_text(std::string frame) override {
    w_->frame_handed();
    auto n = w_->unread();
    for (auto m = most_.load(); n > m && !most_.compare_exchange_weak(m, n);) {
    }
    bool schedule = false;
    {
      std::lock_guard<std::mutex> g{mtx_};
      mailbox_.push_back(std::move(frame));
      schedule = !scheduled_;
      scheduled_ = true;
    }
    if (schedule)
      pool_.post([self = shared_from_this()] { self->drain(); });
  }
  void on_closed(std::string) override {
    closed_.add();
  }

private:
  void drain() {
    for (;;) {
      std::string frame;
      {
        std::lock_guard<std::mutex> g{mtx_};
        if (mailbox_.empty()) {
          scheduled_ = false;
          return;
        }
        frame = std::move(mailbox_.front());
        mailbox_.pop_front();
      }
      // Slower than the client: load shaping, not synchronisation.
      std::this_thread::sleep_for(20us);
      w_->send_text(std::move(frame));
      w_->frame_processed();
    }
  }

  std::shared_ptr<windowed_transport> w_;
  worker_pool& pool_;
  close_count& closed_;
  std::atomic<std::size_t>& most_;
  std::mutex mtx_;
  std::deque<std::string> mailbox_;
  bool scheduled_ = false;
};

void windowed_traffic() {
  net::io_runtime io{2};
  worker_pool pool{3};
  close_count closed;
  std::atomic<std::size_t> most{0};
  auto pauses_before = obs::global().read_pauses.load();
  net::server srv{io, net::server_options{}};
  srv.on_websocket("", [&](net::transport_ptr t) -> net::frame_handler_ptr {
    return std::make_shared<windowed_echo>(std::move(t), pool, closed, most);
  });
  check(srv.listen().empty(), "listen");
  io.start();
  auto url = "ws://127.0.0.1:" + std::to_string(srv.port()) + "/";
  constexpr int clients = 4;
  constexpr int frames = 300;
  std::vector<std::thread> ts;
  for (int c = 0; c < clients; ++c) {
    ts.emplace_back([&, c] {
      std::string err;
      auto ws = net::blocking_ws_client::connect(url, err, 5s);
      check(ws != nullptr, "connect: " + err);
      if (!ws)
        return;
      for (int i = 0; i < frames; ++i)
        check(ws->send_text("w" + std::to_string(c) + "-" + std::to_string(i), err), "send");
      for (int i = 0; i < frames; ++i) {
        auto got = ws->read_text(err);
        check(got && *got == "w" + std::to_string(c) + "-" + std::to_string(i),
              "windowed echo in order from client " + std::to_string(c));
      }
      ws->close();
    });
  }
  for (auto& t : ts)
    t.join();
  check(closed.wait_for(clients, 10s), "every windowed session reported its close");
  check(most.load() <= windowed_echo::window,
        std::to_string(most.load()) + " frames were unprocessed at once (window "
          + std::to_string(windowed_echo::window) + ")");
  check(obs::global().read_pauses.load() > pauses_before, "the window paused reading");
  check(obs::global().read_paused_sockets.load() == 0, "no socket left paused");
  srv.stop_accepting();
  io.stop();
  check(srv.counters().websockets.load() == 0, "no windowed socket left");
}
void child_processes() {
  net::io_runtime io{2};
  io.start();
  constexpr int children = 16;
  std::mutex mtx;
  std::condition_variable cv;
  int exited = 0;
  std::atomic<int> lines{0};
  std::vector<std::shared_ptr<proc::process_watch>> watches;
  for (int i = 0; i < children; ++i) {
    proc::spawn_request req;
    req.argv = {"sh", "-c", "echo out; echo err >&2; sleep 5"};
    req.env = proc::inherited_environment();
    proc::process_watch::callbacks cbs;
    cbs.on_line = [&](bool, std::string_view) { lines.fetch_add(1); };
    cbs.on_exit = [&](int) {
      std::lock_guard<std::mutex> g{mtx};
      ++exited;
      cv.notify_all();
    };
    watches.push_back(proc::process_watch::start(io.context(), proc::spawn(req), std::move(cbs)));
  }
  // Signals race with the I/O threads reaping: from two threads at once.
  std::thread a{[&] {
    for (auto& w : watches)
      w->signal(SIGTERM);
  }};
  std::thread b{[&] {
    for (auto it = watches.rbegin(); it != watches.rend(); ++it)
      (*it)->signal(SIGKILL);
  }};
  a.join();
  b.join();
  {
    std::unique_lock<std::mutex> g{mtx};
    check(cv.wait_for(g, 20s, [&] { return exited == children; }), "every child reaped");
  }
  for (auto& w : watches)
    w->signal(SIGKILL); // after reaping: must be a no-op
  watches.clear();
  io.stop();
}

} // namespace bridge_tsan
