#define CAF_SUITE connection_budget_sockets

#include <caf/test/unit_test.hpp>

#include "net/connection_budget.hpp"
#include "net/http_exchange.hpp"
#include "net/io_runtime.hpp"
#include "net/server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <functional>
#include <istream>
#include <memory>
#include <string>
#include <thread>

// Two real listeners on one io_runtime share its budget: what net/server.cpp's
// accept path does with it. Real sockets and I/O threads, hence an
// `integration` suite (tests/CMakeLists.txt).

using namespace actor_host::net;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// A keep-alive HTTP client: one request, the status of its answer.
struct client {
  asio::io_context ioc;
  tcp::socket sock{ioc};

  explicit client(std::uint16_t port) {
    sock.connect({asio::ip::make_address("127.0.0.1"), port});
  }

  /// The status code of the answer to a GET, or 0 if the connection closed
  /// without one.
  int get(std::uint16_t port) {
    std::string req = "GET /ping HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port)
                      + "\r\n\r\n";
    boost::system::error_code ec;
    asio::write(sock, asio::buffer(req), ec);
    asio::streambuf buf;
    asio::read_until(sock, buf, "\r\n", ec);
    if (ec && buf.size() == 0)
      return 0;
    std::istream in{&buf};
    std::string version;
    int status = 0;
    in >> version >> status;
    return status;
  }
};

bool wait_for(const std::function<bool()>& cond) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

} // namespace

CAF_TEST(two listeners share the io_runtime budget and a closed connection gives its slot back) {
  io_runtime io{1};
  io.budget()->set_limit(2);
  auto ok = [](http_request, http_responder_ptr res) { res->respond(200, "text/plain", "pong"); };
  server_options o;
  o.max_connections = 100; // far above: only the shared budget refuses
  server a{io, o};
  server b{io, o};
  a.on_http(ok);
  b.on_http(ok);
  CAF_REQUIRE(a.listen().empty());
  CAF_REQUIRE(b.listen().empty());
  io.start();
  {
    client a1{a.port()};
    CAF_CHECK_EQUAL(a1.get(a.port()), 200);
    auto b1 = std::make_unique<client>(b.port());
    CAF_CHECK_EQUAL(b1->get(b.port()), 200);
    CAF_CHECK_EQUAL(io.budget()->in_use(), 2u);
    // A third connection, to either listener, is over the process's budget.
    client a2{a.port()};
    CAF_CHECK_EQUAL(a2.get(a.port()), 503);
    CAF_CHECK(wait_for([&] { return a.counters().connections_refused.load() == 1; }));
    CAF_CHECK_EQUAL(a.counters().connections.load(), 1);
    // B's connection closes: its slot goes back, and A may use it.
    b1.reset();
    CAF_CHECK(wait_for([&] { return io.budget()->in_use() == 1; }));
    CAF_CHECK(wait_for([&] { return b.counters().connections.load() == 0; }));
    client a3{a.port()};
    CAF_CHECK_EQUAL(a3.get(a.port()), 200);
    CAF_CHECK_EQUAL(a.counters().connections.load(), 2);
    CAF_CHECK_EQUAL(b.counters().connections_refused.load(), 0u);
  }
  CAF_CHECK(wait_for([&] { return io.budget()->in_use() == 0; }));
  a.stop_accepting();
  b.stop_accepting();
  io.stop(500);
}

CAF_TEST(a listener may bring its own budget) {
  io_runtime io{1};
  io.budget()->set_limit(0); // the runtime's budget refuses everything
  auto own = std::make_shared<connection_budget>(1);
  server_options o;
  o.budget = own;
  server a{io, o};
  a.on_http([](http_request, http_responder_ptr res) { res->respond(200, "text/plain", "pong"); });
  CAF_REQUIRE(a.listen().empty());
  io.start();
  {
    client c1{a.port()};
    CAF_CHECK_EQUAL(c1.get(a.port()), 200);
    CAF_CHECK_EQUAL(own->in_use(), 1u);
    client c2{a.port()};
    CAF_CHECK_EQUAL(c2.get(a.port()), 503);
  }
  CAF_CHECK(wait_for([&] { return own->in_use() == 0; }));
  a.stop_accepting();
  io.stop(500);
}
