#pragma once

// For the suites that need real sockets and threads (what they check is
// which thread runs what, or bytes on a socket): an io_context on a thread
// of its own, and a blocking loopback client whose reads give up after 5 s
// so a bug fails a check instead of hanging the suite.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <optional>
#include <thread>

#include <sys/socket.h>
#include <sys/time.h>

namespace actor_host::testing {

/// An io_context run by one thread until stop().
struct io_thread {
  boost::asio::io_context ioc{1};
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{
    ioc.get_executor()};
  std::thread thread{[this] { ioc.run(); }};

  std::thread::id id() const {
    return thread.get_id();
  }

  void stop() {
    work.reset();
    ioc.stop();
    if (thread.joinable())
      thread.join();
  }

  ~io_thread() {
    stop();
  }
};

/// Connects `sock` to 127.0.0.1:`port`; its reads give up after 5 s.
inline void connect_loopback(boost::asio::ip::tcp::socket& sock, std::uint16_t port) {
  sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  timeval five{5, 0};
  ::setsockopt(sock.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
}

} // namespace actor_host::testing
