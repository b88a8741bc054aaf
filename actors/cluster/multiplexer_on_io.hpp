#pragma once

#include <caf/fwd.hpp>

#include <cstdint>
#include <memory>

namespace boost::asio {
class io_context;
}

namespace actor_host {

/// CAF's middleman runs BASP (the cluster's links) on a thread of its own: a
/// message from another node is read and deserialized there and then posted
/// to the gateway on our I/O thread, and the gateway's batch back is posted
/// to the multiplexer's pipe and read there, a thread wake-up and a context
/// switch each way on each node (bench/runs/2026-12-07-cluster-hop.md). With
/// this, the middleman's multiplexer is polled on the I/O thread instead:
/// its epoll descriptor is one more descriptor of the io_context's reactor,
/// and when it is ready the I/O thread runs CAF's multiplexer until it has
/// nothing left (a bounded number of rounds per turn, then the rest is
/// posted). Sockets, brokers, heartbeats and mTLS are CAF's as before; only
/// the thread changes. Other threads still reach the multiplexer through its
/// pipe, which wakes the I/O thread's reactor instead of CAF's thread.
///
/// Needs `middleman.manual-multiplexing` (request_io_multiplexing on the
/// config before the system exists) and one I/O thread: CAF's multiplexer is
/// single-threaded, and with more than one I/O thread the rounds could run on
/// either. The multiplexer is "its own thread" to CAF only during a round,
/// so what the I/O thread posts to it between rounds goes through the pipe
/// too and wakes a round: nothing waits for a poll that never comes. (Other
/// threads read that thread id in CAF's exec_later while the I/O thread sets
/// it; neither value is theirs, so they take the pipe either way.)
class io_multiplexing {
public:
  /// Starts polling the middleman of `sys` on `ioc` (whose one thread runs
  /// it). A no-op handle when `sys` has no middleman or was not configured
  /// for manual multiplexing.
  static io_multiplexing start(caf::actor_system& sys, boost::asio::io_context& ioc);

  io_multiplexing();
  io_multiplexing(io_multiplexing&&) noexcept;
  io_multiplexing& operator=(io_multiplexing&&) noexcept;
  ~io_multiplexing();

  /// After the I/O thread is joined: the multiplexer is nobody's until the
  /// actor system's shutdown drains it on the thread that destroys it (what
  /// CAF does with manual multiplexing).
  void stop();

  bool active() const;

  /// Rounds of the multiplexer run on the I/O thread so far.
  std::uint64_t rounds() const;

private:
  struct driver;
  std::shared_ptr<driver> driver_;
};

/// Sets `middleman.manual-multiplexing` on `cfg` (the middleman then starts
/// no thread of its own): call only when io_multiplexing::start follows.
void request_io_multiplexing(caf::actor_system_config& cfg);

} // namespace actor_host
