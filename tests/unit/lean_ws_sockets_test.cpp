#define CAF_SUITE lean_ws_sockets

#include <caf/test/unit_test.hpp>

#include "net/io_runtime.hpp"
#include "net/server.hpp"
#include "real_io.hpp"
#include "ws_client_frames.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// The lean WebSocket session (net/lean_ws_session.cpp) on a real listener,
// driven by a client that writes frames byte by byte as RFC 6455 has them,
// so it can also break the protocol. Real sockets and an I/O thread, hence
// an `integration` suite (tests/CMakeLists.txt).

using namespace actor_host::net;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

bool wait_for(const std::function<bool()>& cond) {
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// What the server's handler saw; it echoes every text message.
struct seen {
  std::mutex mtx;
  std::vector<std::string> texts;
  std::string closed;       // on_closed's reason, once it came
  std::uint16_t peer_code = 0;
  std::string peer_reason;
  transport_ptr t;

  template <class F>
  auto locked(F f) {
    std::lock_guard<std::mutex> g{mtx};
    return f();
  }
};

struct echo_handler : frame_handler {
  std::shared_ptr<seen> s;
  transport_ptr t;
  void on_text(std::string frame) override {
    if (frame == "pause")
      t->pause_reading();
    {
      std::lock_guard<std::mutex> g{s->mtx};
      s->texts.push_back(frame);
    }
    t->send_text(std::move(frame));
  }
  void on_peer_close(std::uint16_t code, std::string reason) override {
    std::lock_guard<std::mutex> g{s->mtx};
    s->peer_code = code;
    s->peer_reason = std::move(reason);
  }
  void on_closed(std::string reason) override {
    std::lock_guard<std::mutex> g{s->mtx};
    s->closed = reason.empty() ? "(empty)" : std::move(reason);
    s->t.reset();
  }
};

struct frame_in {
  std::uint8_t opcode = 0;
  std::string payload;
};

// A client that speaks the protocol by hand. Reads give up after 5 s.
struct raw_client {
  asio::io_context ioc;
  tcp::socket sock{ioc};
  std::string response; // the handshake's answer head

  explicit raw_client(std::uint16_t port, std::string version = "13") {
    actor_host::testing::connect_loopback(sock, port);
    std::string req = "GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      "Sec-WebSocket-Version: "
                      + version + "\r\n\r\n";
    asio::write(sock, asio::buffer(req));
    asio::streambuf buf;
    boost::system::error_code ec;
    auto n = asio::read_until(sock, buf, "\r\n\r\n", ec);
    response.assign(asio::buffers_begin(buf.data()), asio::buffers_begin(buf.data()) + n);
  }

  static std::string frame(std::uint8_t opcode, const std::string& payload, bool fin = true,
                           bool masked = true) {
    return actor_host::test::client_frame(opcode, payload, fin, masked);
  }

  void write(const std::string& bytes) {
    asio::write(sock, asio::buffer(bytes));
  }

  // A server frame (never masked); opcode 0 when the connection ended.
  frame_in read() {
    frame_in f;
    std::uint8_t h[2];
    boost::system::error_code ec;
    asio::read(sock, asio::buffer(h), ec);
    if (ec)
      return f;
    std::uint64_t n = h[1] & 0x7f;
    if (n >= 126) {
      std::uint8_t ext[8];
      const std::size_t k = n == 126 ? 2 : 8;
      asio::read(sock, asio::buffer(ext, k), ec);
      n = 0;
      for (std::size_t i = 0; i < k; ++i)
        n = (n << 8) | ext[i];
    }
    f.payload.resize(n);
    asio::read(sock, asio::buffer(f.payload), ec);
    if (!ec)
      f.opcode = h[0] & 0x0f;
    return f;
  }

  static std::uint16_t code_of(const frame_in& f) {
    if (f.payload.size() < 2)
      return 0;
    return static_cast<std::uint16_t>((static_cast<std::uint8_t>(f.payload[0]) << 8)
                                      | static_cast<std::uint8_t>(f.payload[1]));
  }
};

struct fixture {
  io_runtime io{1};
  std::shared_ptr<seen> s = std::make_shared<seen>();
  std::unique_ptr<server> srv;

  explicit fixture(std::size_t max_frame_bytes = 1 << 20) {
    server_options o;
    o.max_frame_bytes = max_frame_bytes;
    srv = std::make_unique<server>(io, o);
    srv->on_websocket("/ws", [st = s](transport_ptr t) {
      auto h = std::make_shared<echo_handler>();
      h->s = st;
      h->t = t;
      st->locked([&] { return st->t = t; });
      return h;
    });
    CAF_REQUIRE(srv->listen().empty());
    io.start();
  }
  ~fixture() {
    srv->stop_accepting();
    io.stop(500);
  }

  std::string closed() {
    return s->locked([&] { return s->closed; });
  }
};

} // namespace

CAF_TEST(the handshake answers the key and fragments with a ping between make one message) {
  fixture fx;
  raw_client c{fx.srv->port()};
  CAF_CHECK(c.response.find("101 Switching Protocols") != std::string::npos);
  CAF_CHECK(c.response.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
            != std::string::npos);
  c.write(raw_client::frame(0x1, "hel", false) + raw_client::frame(0x9, "p")
          + raw_client::frame(0x0, "lo"));
  auto pong = c.read();
  CAF_CHECK_EQUAL(pong.opcode, 0xA);
  CAF_CHECK_EQUAL(pong.payload, "p");
  auto echo = c.read();
  CAF_CHECK_EQUAL(echo.opcode, 0x1);
  CAF_CHECK_EQUAL(echo.payload, "hello");
}

CAF_TEST(two pings in one read both get their pong) {
  // A Beast peer sends its keep-alive ping and a liveness probe together:
  // the probe's pong must not be dropped for the first one's.
  fixture fx;
  raw_client c{fx.srv->port()};
  c.write(raw_client::frame(0x9, "") + raw_client::frame(0x9, "probe"));
  auto first = c.read();
  auto second = c.read();
  CAF_CHECK_EQUAL(first.opcode, 0xA);
  CAF_CHECK_EQUAL(first.payload, "");
  CAF_CHECK_EQUAL(second.opcode, 0xA);
  CAF_CHECK_EQUAL(second.payload, "probe");
}

CAF_TEST(many frames in one write come back in order) {
  fixture fx;
  raw_client c{fx.srv->port()};
  std::string burst;
  for (int i = 0; i < 2000; ++i)
    burst += raw_client::frame(0x1, std::to_string(i));
  c.write(burst);
  for (int i = 0; i < 2000; ++i) {
    auto f = c.read();
    CAF_REQUIRE_EQUAL(f.payload, std::to_string(i));
  }
}

CAF_TEST(a client close is echoed and the handler hears its code) {
  fixture fx;
  raw_client c{fx.srv->port()};
  c.write(raw_client::frame(0x8, std::string("\x0f\xa1", 2) + "bye")); // 4001
  auto f = c.read();
  CAF_CHECK_EQUAL(f.opcode, 0x8);
  CAF_CHECK_EQUAL(raw_client::code_of(f), 4001);
  CAF_CHECK_EQUAL(c.read().opcode, 0); // then the server closes the socket
  CAF_CHECK(wait_for([&] { return fx.closed() == "closed by peer"; }));
  CAF_CHECK_EQUAL(fx.s->locked([&] { return fx.s->peer_code; }), 4001);
  CAF_CHECK_EQUAL(fx.s->locked([&] { return fx.s->peer_reason; }), "bye");
}

CAF_TEST(the server close goes after queued frames and waits for the echo) {
  fixture fx;
  raw_client c{fx.srv->port()};
  CAF_REQUIRE(wait_for([&] { return fx.s->locked([&] { return fx.s->t != nullptr; }); }));
  auto t = fx.s->locked([&] { return fx.s->t; });
  t->send_text("last");
  t->close(1001, "going");
  auto last = c.read();
  CAF_CHECK_EQUAL(last.payload, "last");
  auto f = c.read();
  CAF_CHECK_EQUAL(f.opcode, 0x8);
  CAF_CHECK_EQUAL(raw_client::code_of(f), 1001);
  CAF_CHECK_EQUAL(f.payload.substr(2), "going");
  CAF_CHECK(fx.closed().empty()); // not before the peer's close frame
  c.write(raw_client::frame(0x8, std::string("\x03\xe9", 2)));
  CAF_CHECK(wait_for([&] { return fx.closed() == "closed by peer"; }));
}

CAF_TEST(protocol errors close with their code) {
  struct expect_close {
    std::string bytes;
    std::uint16_t code;
  };
  std::vector<expect_close> cases{
    {raw_client::frame(0x1, "x", true, false), 1002}, // not masked
    {raw_client::frame(0x1, "\xff\xfe"), 1007},       // not UTF-8
    {raw_client::frame(0x2, "bin"), 1003},            // the handler takes no binary
    {raw_client::frame(0x1, std::string(2048, 'x')), 1009},
  };
  for (auto& x : cases) {
    fixture fx{1024};
    raw_client c{fx.srv->port()};
    c.write(x.bytes);
    auto f = c.read();
    CAF_CHECK_EQUAL(f.opcode, 0x8);
    CAF_CHECK_EQUAL(raw_client::code_of(f), x.code);
    if (x.code == 1003 || x.code == 1009) // a close handshake: ours waits for the echo
      c.write(raw_client::frame(0x8, std::string("\x03\xe8", 2)));
    CAF_CHECK(wait_for([&] { return !fx.closed().empty(); }));
    CAF_CHECK(fx.s->locked([&] { return fx.s->texts.empty(); }));
  }
}

CAF_TEST(an unsupported version is answered 426) {
  fixture fx;
  raw_client c{fx.srv->port(), "12"};
  CAF_CHECK(c.response.find("426") != std::string::npos);
  CAF_CHECK(c.response.find("Sec-WebSocket-Version: 13") != std::string::npos);
}

CAF_TEST(a paused read holds the frames already read until resumed) {
  fixture fx;
  raw_client c{fx.srv->port()};
  c.write(raw_client::frame(0x1, "pause") + raw_client::frame(0x1, "a")
          + raw_client::frame(0x1, "b"));
  CAF_CHECK_EQUAL(c.read().payload, "pause");
  // The echo goes out after the read that brought the three frames (its
  // write is posted): had the pause not held, "a" and "b" would be in by now.
  CAF_CHECK_EQUAL(fx.s->locked([&] { return fx.s->texts.size(); }), 1u);
  c.write(raw_client::frame(0x9, "still"));
  fx.s->locked([&] { return fx.s->t; })->resume_reading();
  // The held frames first; the pong may pass their echoes (a control frame
  // goes between data frames).
  std::string texts;
  std::string pong;
  for (int i = 0; i < 3; ++i) {
    auto f = c.read();
    (f.opcode == 0xA ? pong : texts) += f.payload;
  }
  CAF_CHECK_EQUAL(texts, "ab");
  CAF_CHECK_EQUAL(pong, "still");
  CAF_CHECK(fx.s->locked([&] { return fx.s->texts == std::vector<std::string>{"pause", "a", "b"}; }));
}
