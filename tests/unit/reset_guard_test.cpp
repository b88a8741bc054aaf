#define CAF_SUITE reset_guard

#include <caf/test/unit_test.hpp>

#include "grpc_door/reset_meter.hpp"
#include "net/socket_shutdown.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

using actor_host::grpc_door::reset_meter;
using namespace std::chrono_literals;

namespace {

const reset_meter::clock::time_point t0{std::chrono::seconds(1000)};

} // namespace

CAF_TEST(a connection that only resets is closed once it passes the burst) {
  reset_meter m{{10, 100.0}};
  for (int i = 0; i < 10; ++i)
    CAF_CHECK(!m.reset("ipv4:10.0.0.1:5000", t0));
  CAF_CHECK(m.reset("ipv4:10.0.0.1:5000", t0));
  // Told once: the rest of its calls end with it.
  CAF_CHECK(!m.reset("ipv4:10.0.0.1:5000", t0));
  // Another connection of the same address has its own score.
  CAF_CHECK(!m.reset("ipv4:10.0.0.1:5001", t0));
}

CAF_TEST(calls that finish pay for resets and the score leaks away over time) {
  reset_meter m{{10, 100.0}};
  // 1,000 calls, every other one cancelled by its client: never closed.
  for (int i = 0; i < 1000; ++i) {
    CAF_CHECK(!m.reset("ipv4:10.0.0.1:5000", t0));
    m.finished("ipv4:10.0.0.1:5000", t0);
  }
  // 50 resets a second for a minute (under the allowance of 100): never.
  for (int i = 0; i < 3000; ++i)
    CAF_CHECK(!m.reset("ipv4:10.0.0.2:5000", t0 + i * 20ms));
  // 10 now, and one more 50 ms later: 5 of them have leaked away.
  reset_meter n{{10, 100.0}};
  for (int i = 0; i < 10; ++i)
    CAF_CHECK(!n.reset("ipv4:10.0.0.3:5000", t0));
  CAF_CHECK(!n.reset("ipv4:10.0.0.3:5000", t0 + 50ms));
  for (int i = 0; i < 4; ++i)
    CAF_CHECK(!n.reset("ipv4:10.0.0.3:5000", t0 + 50ms));
  CAF_CHECK(n.reset("ipv4:10.0.0.3:5000", t0 + 50ms));
}

CAF_TEST(entries live only while their score does and a burst of 0 turns the guard off) {
  reset_meter m{{10, 100.0}};
  CAF_CHECK(!m.reset("ipv6:[::1]:5000", t0));
  CAF_CHECK(!m.reset("ipv4:10.0.0.4:5000", t0));
  m.finished("never-reset", t0);
  CAF_CHECK_EQUAL(m.tracked(), 2u);
  m.sweep(t0 + 5ms);
  CAF_CHECK_EQUAL(m.tracked(), 2u);
  m.sweep(t0 + 20ms);
  CAF_CHECK_EQUAL(m.tracked(), 0u);
  reset_meter off{{0, 100.0}};
  for (int i = 0; i < 10000; ++i)
    CAF_CHECK(!off.reset("ipv4:10.0.0.1:5000", t0));
  CAF_CHECK_EQUAL(off.tracked(), 0u);
}

CAF_TEST(calls whose peer gRPC no longer names are not scored) {
  // gRPC 1.51 names the peer of some calls torn down with their stream
  // "unknown": those of all connections must not add up to a closure.
  reset_meter m{{10, 100.0}};
  for (int i = 0; i < 1000; ++i) {
    CAF_CHECK(!m.reset("unknown", t0));
    CAF_CHECK(!m.reset("ipv4:10.0.0.1:", t0));
    CAF_CHECK(!m.reset("ipv4:10.0.0.1:50x", t0));
  }
  CAF_CHECK_EQUAL(m.tracked(), 0u);
}

CAF_TEST(the table of connections is capped) {
  reset_meter m{{10, 100.0}};
  for (std::size_t i = 0; i < reset_meter::max_tracked + 10; ++i)
    m.reset("ipv4:10.0.0.1:" + std::to_string(i), t0);
  CAF_CHECK_EQUAL(m.tracked(), reset_meter::max_tracked);
}

CAF_TEST(shutdown_connection ends the one socket connected to that peer on that port) {
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  CAF_REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  CAF_REQUIRE_EQUAL(::bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  CAF_REQUIRE_EQUAL(::listen(listener, 4), 0);
  CAF_REQUIRE_EQUAL(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  auto listen_port = ntohs(addr.sin_port);
  auto connect_one = [&] {
    int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CAF_REQUIRE_EQUAL(::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return c;
  };
  int client_a = connect_one();
  int client_b = connect_one();
  int server_a = ::accept(listener, nullptr, nullptr);
  int server_b = ::accept(listener, nullptr, nullptr);
  CAF_REQUIRE(server_a >= 0 && server_b >= 0);
  sockaddr_in peer{};
  socklen_t plen = sizeof peer;
  CAF_REQUIRE_EQUAL(::getsockname(client_a, reinterpret_cast<sockaddr*>(&peer), &plen), 0);
  auto a_port = ntohs(peer.sin_port);
  // Wrong local port or an unknown peer: nothing is touched.
  CAF_CHECK(!actor_host::net::shutdown_connection("127.0.0.1", a_port,
                                                  static_cast<std::uint16_t>(listen_port + 1)));
  CAF_CHECK(!actor_host::net::shutdown_connection("not an address", a_port, listen_port));
  // The accepted end of client_a, found by its peer: client_a reads EOF,
  // client_b's connection is untouched; the descriptor stays open.
  CAF_CHECK(actor_host::net::shutdown_connection("127.0.0.1", a_port, listen_port));
  char byte = 0;
  CAF_CHECK_EQUAL(::read(client_a, &byte, 1), 0);
  pollfd p{client_b, POLLIN, 0};
  CAF_CHECK_EQUAL(::poll(&p, 1, 0), 0);
  CAF_CHECK_EQUAL(::write(client_b, "x", 1), 1);
  CAF_CHECK_EQUAL(::read(server_b, &byte, 1), 1);
  CAF_CHECK_EQUAL(::fcntl(server_a, F_GETFD) >= 0, true);
  for (int fd : {client_a, client_b, server_a, server_b, listener})
    ::close(fd);
}
