#define CAF_SUITE http_stream_batch

#include <caf/test/unit_test.hpp>

#include "net/http_client.hpp"
#include "net/io_runtime.hpp"
#include "net/server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <future>
#include <mutex>
#include <string>
#include <thread>

// A streamed HTTP response whose body writes come from another thread faster
// than the socket takes them: the responder sends what collected meanwhile
// as one chunk (http_response.cpp), so the test checks what must not change:
// every byte, in order, then the end; and that a batch over
// max_write_queue_bytes at a client that does not read still aborts the
// exchange. Real sockets and an I/O thread: every wait has a deadline.

#if defined(__SANITIZE_ADDRESS__)
// The ASan runtime's (g++ ships no header for it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

using namespace actor_host::net;
using namespace std::chrono_literals;

namespace {

struct fetched {
  std::mutex mtx;
  std::condition_variable cv;
  int status = 0;
  std::string body;
  bool ended = false;
  std::string error;

  bool wait_end() {
    std::unique_lock l{mtx};
    return cv.wait_for(l, 10s, [&] { return ended; });
  }
};

std::string line(int i) {
  return R"({"chunk":{"i":)" + std::to_string(i) + "}}\n";
}

constexpr int lines = 20000;

// Bytes the process has allocated and not freed (ASan's quarantine aside).
std::size_t live_heap() {
#if defined(__SANITIZE_ADDRESS__)
  return __sanitizer_get_current_allocated_bytes();
#else
  return mallinfo2().uordblks;
#endif
}

struct fixture {
  io_runtime io{1};
  server srv;
  std::thread writer;
  std::mutex mtx;
  std::condition_variable cv;
  bool aborted = false;
  bool handled = false;      // /stalled: the handler ran
  bool stalled_go = false;   // /stalled: the writer may start
  bool stalled_done = false; // /stalled: it wrote everything

  boost::asio::any_io_executor strand = boost::asio::make_strand(io.context());

  fixture() : srv(io, options()) {
    srv.on_http([this](http_request req, http_responder_ptr res) {
      res->on_abort([this] {
        std::lock_guard g{mtx};
        aborted = true;
        cv.notify_all();
      });
      res->start_stream(200, "application/x-ndjson");
      if (req.path == "/stalled") {
        // Writes while the connection's thread is stuck (the test blocks
        // it): only the responder's inbox can take them.
        writer = std::thread([this, res] {
          std::unique_lock l{mtx};
          cv.wait(l, [&] { return stalled_go; });
          l.unlock();
          std::string piece(64 * 1024, 'x');
          for (int i = 0; i < 1024; ++i) // 64 MiB
            res->write(piece);
          l.lock();
          stalled_done = true;
          cv.notify_all();
        });
        std::lock_guard g{mtx};
        handled = true;
        cv.notify_all();
        return;
      }
      bool big = req.path == "/big";
      // From another thread, as an actor writes: no pause between writes.
      writer = std::thread([res, big] {
        if (big) {
          std::string piece(64 * 1024, 'x');
          for (int i = 0; i < 256; ++i)
            res->write(piece);
          return;
        }
        for (int i = 0; i < lines; ++i)
          res->write(line(i));
        res->finish();
      });
    });
    CAF_REQUIRE(srv.listen().empty());
    io.start();
  }

  static server_options options() {
    server_options o;
    o.max_write_queue_bytes = 1u << 20;
    return o;
  }

  ~fixture() {
    {
      std::lock_guard g{mtx};
      stalled_go = true; // a /stalled writer that a failed check left waiting
      cv.notify_all();
    }
    if (writer.joinable())
      writer.join();
    srv.stop_accepting();
    io.stop(500);
  }

  std::shared_ptr<http_exchange> fetch(const std::string& path, fetched& out) {
    http_request_spec spec;
    spec.url = "http://127.0.0.1:" + std::to_string(srv.port()) + path;
    spec.max_body_bytes = 0;
    http_handlers h;
    h.on_head = [&out](http_answer_head head) {
      std::lock_guard g{out.mtx};
      out.status = head.status;
    };
    h.on_data = [&out](std::string_view piece) {
      std::lock_guard g{out.mtx};
      out.body.append(piece);
    };
    h.on_end = [&out](http_end end) {
      std::lock_guard g{out.mtx};
      out.ended = true;
      out.error = end.error;
      out.cv.notify_all();
    };
    return http_fetch(strand, std::move(spec), std::move(h));
  }
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_stream_batch_tests, fixture)

CAF_TEST(every line written arrives once and in order and then the end) {
  fetched f;
  auto x = fetch("/lines", f);
  CAF_REQUIRE(f.wait_end());
  std::string want;
  for (int i = 0; i < lines; ++i)
    want += line(i);
  std::lock_guard g{f.mtx};
  CAF_CHECK_EQUAL(f.error, "");
  CAF_CHECK_EQUAL(f.status, 200);
  CAF_CHECK_EQUAL(f.body.size(), want.size());
  CAF_CHECK(f.body == want);
}

CAF_TEST(batched writes past max_write_queue_bytes at a client that does not read abort the exchange) {
  fetched f;
  auto x = fetch("/big", f);
  // The client reads nothing: 16 MiB cannot all fit in the socket buffers.
  boost::asio::post(strand, [x] { x->pause_reading(); });
  std::unique_lock l{mtx};
  CAF_CHECK(cv.wait_for(l, 10s, [&] { return aborted; }));
}

CAF_TEST(writes that wait for a stuck connection thread stay within max_write_queue_bytes) {
  fetched f;
  auto x = fetch("/stalled", f);
  std::unique_lock l{mtx};
  CAF_REQUIRE(cv.wait_for(l, 10s, [&] { return handled; }));
  // The one I/O thread now waits for the test: no strand runs, so only the
  // responder's own cap can stop the writes piling up.
  std::promise<void> release;
  std::promise<void> blocked;
  boost::asio::post(io.context(), [&, r = release.get_future().share()] {
    blocked.set_value();
    r.wait();
  });
  blocked.get_future().wait();
  auto before = live_heap();
  stalled_go = true;
  cv.notify_all();
  bool done = cv.wait_for(l, 10s, [&] { return stalled_done; });
  auto grown = static_cast<std::ptrdiff_t>(live_heap()) - static_cast<std::ptrdiff_t>(before);
  l.unlock();
  release.set_value();
  CAF_REQUIRE(done);
  // 64 MiB were written; the cap is 1 MiB (a write of 64 KiB more may ride).
  CAF_CHECK_LESS(grown, std::ptrdiff_t{8} << 20);
  l.lock();
  CAF_CHECK(cv.wait_for(l, 10s, [&] { return aborted; }));
  l.unlock();
  // The client sees the connection go before `f` does.
  CAF_CHECK(f.wait_end());
}

CAF_TEST_FIXTURE_SCOPE_END()
