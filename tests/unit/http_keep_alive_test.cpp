#define CAF_SUITE http_keep_alive

#include <caf/test/unit_test.hpp>

#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "real_io.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <string>
#include <thread>

// A keep-alive connection between requests (http_session.cpp: its watch
// read takes the next request; a timer of the session's own closes it after
// http_idle_timeout_ms, checked lazily). Real sockets and an I/O thread; a
// blocking client whose reads give up after 5 s.

using namespace actor_host::net;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

constexpr unsigned idle_ms = 1000;

struct fixture {
  io_runtime io{1};
  server srv;
  asio::io_context client_io;
  asio::ip::tcp::socket client{client_io};

  fixture() : srv(io, options()) {
    srv.on_http([](http_request req, http_responder_ptr res) {
      res->respond(200, "text/plain", req.path);
    });
    CAF_REQUIRE(srv.listen().empty());
    io.start();
    actor_host::testing::connect_loopback(client, srv.port());
  }

  static server_options options() {
    server_options o;
    o.http_idle_timeout_ms = idle_ms;
    return o;
  }

  ~fixture() {
    boost::system::error_code ignored;
    client.close(ignored);
    srv.stop_accepting();
    io.stop(500);
  }

  static std::string get(const std::string& path) {
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  }

  void send(const std::string& text) {
    asio::write(client, asio::buffer(text));
  }

  /// One response (this server's: Content-Length, no chunks): its body, or
  /// "" when the connection ended (or the read gave up) first.
  std::string response() {
    boost::system::error_code ec;
    while (true) {
      auto end = buffered.find("\r\n\r\n");
      if (end != std::string::npos) {
        auto at = buffered.find("Content-Length: ");
        CAF_REQUIRE(at != std::string::npos && at < end);
        auto length = std::stoul(buffered.substr(at + 16));
        if (buffered.size() >= end + 4 + length) {
          auto body = buffered.substr(end + 4, length);
          buffered.erase(0, end + 4 + length);
          return body;
        }
      }
      char piece[4096];
      auto n = client.read_some(asio::buffer(piece), ec);
      if (ec)
        return {};
      buffered.append(piece, n);
    }
  }

  /// Whether the server closed the connection (rather than the read giving up).
  bool closed_by_server() {
    char piece[64];
    boost::system::error_code ec;
    client.read_some(asio::buffer(piece), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

  std::string buffered;
};

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_keep_alive_tests, fixture)

CAF_TEST(requests one after another share the connection) {
  for (auto path : {"/a", "/b", "/c"}) {
    send(get(path));
    CAF_CHECK_EQUAL(response(), path);
  }
}

CAF_TEST(pipelined requests are answered in order) {
  send(get("/one") + get("/two") + get("/three"));
  CAF_CHECK_EQUAL(response(), "/one");
  CAF_CHECK_EQUAL(response(), "/two");
  CAF_CHECK_EQUAL(response(), "/three");
}

CAF_TEST(an idle connection is closed after http_idle_timeout_ms) {
  send(get("/a"));
  CAF_REQUIRE_EQUAL(response(), "/a");
  auto idle_from = std::chrono::steady_clock::now();
  CAF_CHECK(closed_by_server());
  auto idle = std::chrono::steady_clock::now() - idle_from;
  CAF_CHECK_GREATER_OR_EQUAL(idle, std::chrono::milliseconds(idle_ms) - 50ms);
}

CAF_TEST(a connection busy again before the timeout is not closed by it) {
  // Idle stretches of 40 % of the timeout, over 1.6 of it: the timer armed
  // for the first stretch fires in a later one and waits for its rest.
  for (auto path : {"/a", "/b", "/c", "/d", "/e"}) {
    send(get(path));
    CAF_REQUIRE_EQUAL(response(), path);
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms * 2 / 5));
  }
  send(get("/f"));
  CAF_CHECK_EQUAL(response(), "/f");
}

CAF_TEST_FIXTURE_SCOPE_END()
