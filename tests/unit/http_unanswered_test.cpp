#define CAF_SUITE http_unanswered

#include <caf/test/unit_test.hpp>

#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "real_io.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <string>

// An exchange whose handler lets go of its responder without finishing
// (http_response.cpp, responder_impl's destructor): what a stopped hub does
// with a request that reaches it at shutdown. The client hears at once: 503
// if nothing was sent, the connection closed if a stream had begun. Real
// sockets and an I/O thread; a blocking client whose reads give up after 5 s.

using namespace actor_host::net;
namespace asio = boost::asio;

namespace {

struct fixture {
  io_runtime io{1};
  server srv{io, server_options{}};
  asio::io_context client_io;
  asio::ip::tcp::socket client{client_io};

  fixture() {
    srv.on_http([](http_request req, http_responder_ptr res) {
      if (req.path == "/drop")
        return; // the responder goes with this handler, unanswered
      if (req.path == "/drop-stream") {
        res->start_stream(200, "application/x-ndjson");
        res->write("{\"n\":1}\n");
        return;
      }
      res->respond(200, "text/plain", req.path);
    });
    CAF_REQUIRE(srv.listen().empty());
    io.start();
    actor_host::testing::connect_loopback(client, srv.port());
  }

  ~fixture() {
    boost::system::error_code ignored;
    client.close(ignored);
    srv.stop_accepting();
    io.stop(500);
  }

  void send_get(const std::string& path) {
    auto text = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    asio::write(client, asio::buffer(text));
  }

  /// What the server sends until `done` holds for it, or the connection
  /// ends, or the read gives up.
  template <class Done>
  std::string read_until(Done done, bool& ended) {
    ended = false;
    boost::system::error_code ec;
    while (!done(buffered)) {
      char piece[4096];
      auto n = client.read_some(asio::buffer(piece), ec);
      if (ec) {
        ended = ec == asio::error::eof || ec == asio::error::connection_reset;
        break;
      }
      buffered.append(piece, n);
    }
    return std::exchange(buffered, {});
  }

  /// One response with a Content-Length: head and body.
  std::string response() {
    bool ended = false;
    return read_until(
      [](const std::string& b) {
        auto end = b.find("\r\n\r\n");
        auto at = b.find("Content-Length: ");
        return end != std::string::npos && at != std::string::npos
               && b.size() >= end + 4 + std::stoul(b.substr(at + 16));
      },
      ended);
  }

  std::uint64_t unanswered() const {
    return srv.counters().unanswered_exchanges.load();
  }

  std::string buffered;
};

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

} // namespace

CAF_TEST_FIXTURE_SCOPE(http_unanswered_tests, fixture)

CAF_TEST(a request its handler drops is answered 503 and the connection stays) {
  send_get("/drop");
  auto r = response();
  CAF_CHECK(starts_with(r, "HTTP/1.1 503 "));
  CAF_CHECK(r.find(R"({"error":{"code":-32000,"message":"Request dropped unanswered)") != std::string::npos);
  CAF_CHECK_EQUAL(unanswered(), 1u);
  // The next request on the same connection is served as usual.
  send_get("/next");
  auto next = response();
  CAF_CHECK(starts_with(next, "HTTP/1.1 200 "));
  CAF_CHECK(next.find("/next") != std::string::npos);
  CAF_CHECK_EQUAL(unanswered(), 1u);
}

CAF_TEST(a stream its handler drops is cut off rather than left open) {
  send_get("/drop-stream");
  bool ended = false;
  auto r = read_until([](const std::string&) { return false; }, ended);
  CAF_CHECK(ended); // closed by the server, not the 5 s read timeout
  CAF_CHECK(starts_with(r, "HTTP/1.1 200 "));
  CAF_CHECK(r.find("{\"n\":1}") != std::string::npos);
  CAF_CHECK(r.find("0\r\n\r\n") == std::string::npos); // no last chunk: the body is cut
  CAF_CHECK_EQUAL(unanswered(), 1u);
}

CAF_TEST(answered requests are not counted) {
  send_get("/a");
  CAF_CHECK(starts_with(response(), "HTTP/1.1 200 "));
  CAF_CHECK_EQUAL(unanswered(), 0u);
}

CAF_TEST_FIXTURE_SCOPE_END()
