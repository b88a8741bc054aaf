// The asio <-> actor bridge under ThreadSanitizer, without CAF (Debian's CAF
// is not TSan-instrumented, so it would only add noise). Plays the part of
// the actors with plain threads: frames arrive on the I/O threads, are
// answered from other threads through transport::send_text, sockets are
// closed from those threads while traffic flows, and child processes are
// signalled from one thread while the I/O threads reap them. Any data race
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
using namespace bridge_tsan;
using namespace std::chrono_literals;

namespace {

/// socket from a pool thread when told to ("bye").
class echo_handler : public net::frame_handler,
                     public std::enable_shared_from_this<echo_handler> {
public:
  echo_handler(net::transport_ptr t, worker_pool& pool, close_count& closed)
    : t_(std::move(t)), pool_(pool), closed_(closed) {
  }
  void on_text(std::string frame) override {
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
      if (frame == "bye")
        t_->close(1000, "bye");
      else
        t_->send_text(std::move(frame));
    }
  }

  net::transport_ptr t_;
  worker_pool& pool_;
  close_count& closed_;
  std::mutex mtx_;
  std::deque<std::string> mailbox_;
  bool scheduled_ = false;
};

void websocket_traffic() {
  net::io_runtime io{2};
  worker_pool pool{3};
  close_count closed;
  net::server srv{io, net::server_options{}};
  srv.on_websocket("", [&](net::transport_ptr t) -> net::frame_handler_ptr {
    return std::make_shared<echo_handler>(std::move(t), pool, closed);
  });
  check(srv.listen().empty(), "listen");
  io.start();
  auto url = "ws://127.0.0.1:" + std::to_string(srv.port()) + "/";
  constexpr int clients = 6;
  constexpr int frames = 200;
  std::atomic<bool> stop_reader{false};
  // Counters are read concurrently with the sessions updating them.
  std::thread reader{[&] {
    while (!stop_reader.load())
      (void) (srv.counters().queued_bytes.load() + srv.counters().frames_in.load());
  }};
  std::vector<std::thread> ts;
  for (int c = 0; c < clients; ++c) {
    ts.emplace_back([&, c] {
      std::string err;
      auto ws = net::blocking_ws_client::connect(url, err, 5s);
      check(ws != nullptr, "connect: " + err);
      if (!ws)
        return;
      for (int i = 0; i < frames; ++i)
        check(ws->send_text("c" + std::to_string(c) + "-" + std::to_string(i), err), "send");
      for (int i = 0; i < frames; ++i) {
        auto got = ws->read_text(err);
        check(got && *got == "c" + std::to_string(c) + "-" + std::to_string(i),
              "echo in order from client " + std::to_string(c));
      }
      // Half of the clients are closed by the server side (from a pool
      // thread), the others close themselves.
      if (c % 2 == 0) {
        check(ws->send_text("bye", err), "send bye");
        auto last = ws->read_text(err);
        check(!last, "server closed the socket");
      } else {
        ws->close();
      }
    });
  }
  for (auto& t : ts)
    t.join();
  // Sessions end asynchronously after the last client frame.
  check(closed.wait_for(clients, 10s), "every session reported its close");
  stop_reader = true;
  reader.join();
  srv.stop_accepting();
  io.stop();
  check(srv.counters().websockets.load() == 0, "no socket left");
  check(srv.counters().queued_bytes.load() == 0, "no queued bytes left");
}

/// Flow control as an iii channel uses it: the handler pauses its socket on
/// the I/O strand for every frame, a pool thread answers it as a binary
/// frame and resumes reading. The pause must hold before the next read, so
/// no second frame arrives while one is out.
class paced_handler : public net::frame_handler,
                      public std::enable_shared_from_this<paced_handler> {
public:
  paced_handler(net::transport_ptr t, worker_pool& pool, close_count& closed,
                std::atomic<int>& overlaps)
    : t_(std::move(t)), pool_(pool), closed_(closed), overlaps_(overlaps) {
  }
  void on_text(std::string frame) override {
    // check() is for the test threads; here, count for the main thread.
    if (out_.fetch_add(1) != 0)
      overlaps_.fetch_add(1);
    t_->pause_reading();
    pool_.post([self = shared_from_this(), f = std::move(frame)]() mutable {
      self->out_.fetch_sub(1);
      self->t_->send_binary(std::move(f));
      self->t_->resume_reading();
    });
  }
  void on_closed(std::string) override {
    closed_.add();
  }

private:
  net::transport_ptr t_;
  worker_pool& pool_;
  close_count& closed_;
  std::atomic<int>& overlaps_;
  std::atomic<int> out_{0};
};

void paced_binary_traffic() {
  net::io_runtime io{2};
  worker_pool pool{3};
  close_count closed;
  std::atomic<int> overlaps{0};
  net::server srv{io, net::server_options{}};
  srv.on_websocket("", [&](net::transport_ptr t) -> net::frame_handler_ptr {
    return std::make_shared<paced_handler>(std::move(t), pool, closed, overlaps);
  });
  check(srv.listen().empty(), "listen");
  io.start();
  auto url = "ws://127.0.0.1:" + std::to_string(srv.port()) + "/";
  constexpr int clients = 4;
  constexpr int frames = 200;
  std::vector<std::thread> ts;
  for (int c = 0; c < clients; ++c) {
    ts.emplace_back([&, c] {
      std::string err;
      auto ws = net::blocking_ws_client::connect(url, err, 5s);
      check(ws != nullptr, "connect: " + err);
      if (!ws)
        return;
      // All sent before any answer is read: the server must pace them.
      for (int i = 0; i < frames; ++i)
        check(ws->send_text("p" + std::to_string(c) + "-" + std::to_string(i), err), "send");
      for (int i = 0; i < frames; ++i) {
        auto got = ws->read_text(err);
        check(got && *got == "p" + std::to_string(c) + "-" + std::to_string(i),
              "paced binary echo in order from client " + std::to_string(c));
      }
      ws->close();
    });
  }
  for (auto& t : ts)
    t.join();
  check(closed.wait_for(clients, 10s), "every paced session reported its close");
  check(overlaps.load() == 0,
        std::to_string(overlaps.load()) + " frame(s) arrived while reading was paused");
  srv.stop_accepting();
  io.stop();
  check(srv.counters().websockets.load() == 0, "no paced socket left");
}

/// Collects what a client-side session reads: frames "<sender>:<seq>:" padded
/// to a chosen length, checked for order per sender and for length.
class collector : public net::frame_handler {
public:
  void on_text(std::string frame) override {
    auto a = frame.find(':');
    auto b = frame.find(':', a + 1);
    bool ok = a != std::string::npos && b != std::string::npos;
    std::lock_guard<std::mutex> g{mtx_};
    if (ok) {
      int sender = std::stoi(frame.substr(0, a));
      int seq = std::stoi(frame.substr(a + 1, b - a - 1));
      ok = seq == next_[sender]++ && frame.size() == expected_size(sender, seq);
    }
    if (!ok)
      ++bad_;
    ++received_;
    cv_.notify_all();
  }
  void on_closed(std::string) override {
    std::lock_guard<std::mutex> g{mtx_};
    closed_ = true;
    cv_.notify_all();
  }
  bool wait_for(int frames, std::chrono::seconds limit) {
    std::unique_lock<std::mutex> g{mtx_};
    return cv_.wait_for(g, limit, [&] { return received_ >= frames; });
  }
  bool wait_closed(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> g{mtx_};
    return cv_.wait_for(g, limit, [&] { return closed_; });
  }
  int bad() {
    std::lock_guard<std::mutex> g{mtx_};
    return bad_;
  }

  // Every header form (7-, 16-, 64-bit lengths) and its boundaries, a few
  // payloads large enough to be gathered rather than copied and to split
  // batches.
  static std::size_t expected_size(int sender, int seq) {
    static const std::size_t sizes[] = {12, 125, 126, 127, 1000, 65535, 65536, 300000};
    if (seq % 40 == 39)
      return sizes[5 + (seq / 40 + sender) % 3];
    return sizes[(seq + sender) % 5];
  }
  static std::string frame(int sender, int seq) {
    auto f = std::to_string(sender) + ":" + std::to_string(seq) + ":";
    f.resize(expected_size(sender, seq), 'x');
    return f;
  }

private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::map<int, int> next_;
  int received_ = 0;
  int bad_ = 0;
  bool closed_ = false;
};

/// The client role of the same session (masked frames, net::ws_connect)
/// against the server's: several threads send on one transport at once,
/// both ends batch their writes, frames come back in order per sender, and
/// the transport is closed from another thread afterwards.
void client_sessions() {
  net::io_runtime io{2};
  worker_pool pool{3};
  close_count server_closed;
  net::server srv{io, net::server_options{}};
  srv.on_websocket("", [&](net::transport_ptr t) -> net::frame_handler_ptr {
    return std::make_shared<echo_handler>(std::move(t), pool, server_closed);
  });
  check(srv.listen().empty(), "listen");
  io.start();
  auto url = "ws://127.0.0.1:" + std::to_string(srv.port()) + "/";
  auto got = std::make_shared<collector>();
  std::promise<net::transport_ptr> opened;
  net::connect_options opts;
  opts.counters = std::make_shared<net::socket_counters>();
  net::ws_connect(
    io, url, opts,
    [&](net::transport_ptr t) -> net::frame_handler_ptr {
      opened.set_value(t);
      return got;
    },
    [&](std::string why) {
      check(false, "ws_connect: " + why);
      opened.set_value(nullptr);
    });
  auto t = opened.get_future().get();
  if (!t) {
    io.stop();
    return;
  }
  constexpr int senders = 4;
  constexpr int frames = 240;
  std::vector<std::thread> ts;
  for (int k = 0; k < senders; ++k)
    ts.emplace_back([&, k] {
      for (int i = 0; i < frames; ++i)
        t->send_text(collector::frame(k, i));
    });
  for (auto& th : ts)
    th.join();
  check(got->wait_for(senders * frames, 30s), "every echo arrived");
  check(got->bad() == 0, "echoes in order per sender, with their lengths");
  std::thread closer{[&] { t->close(1000, "done"); }};
  t->send_text("after close: dropped or written, never a crash");
  closer.join();
  check(got->wait_closed(10s), "client session closed");
  check(server_closed.wait_for(1, 10s), "server session closed");
  t.reset();
  srv.stop_accepting();
  io.stop();
  check(srv.counters().queued_bytes.load() == 0, "no queued bytes left (server)");
  check(opts.counters->queued_bytes.load() == 0, "no queued bytes left (client)");
  check(opts.counters->frames_out.load() >= senders * frames, "client frames counted");
}

} // namespace

int v1_link_traffic(); // v1_link_traffic.cpp

int main() {
  std::signal(SIGPIPE, SIG_IGN);
  websocket_traffic();
  paced_binary_traffic();
  windowed_traffic();
  client_sessions();
  child_processes();
  failures += v1_link_traffic();
  if (failures == 0)
    std::puts("bridge_tsan_test: ok");
  return failures == 0 ? 0 : 1;
}
