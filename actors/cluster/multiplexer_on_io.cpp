#include "actors/cluster/multiplexer_on_io.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/network/default_multiplexer.hpp>
#include <caf/settings.hpp>
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include <unistd.h>

namespace actor_host {

namespace {

namespace net = caf::io::network;

// CAF 0.17 keeps the multiplexer's epoll descriptor private and has no
// accessor for it (its own loop is the only poller it foresees). An explicit
// instantiation may name a private member, so this one hands out a pointer to
// it; Debian's CAF is pinned at 0.17.6, whose layout this is compiled against.
using epoll_member_ptr = net::native_socket net::default_multiplexer::*;
epoll_member_ptr epoll_member();

template <epoll_member_ptr Member>
struct epoll_member_access {
  friend epoll_member_ptr epoll_member() {
    return Member;
  }
};

template struct epoll_member_access<&net::default_multiplexer::epollfd_>;

constexpr const char* manual_key = "middleman.manual-multiplexing";

/// Rounds of CAF's poll per turn of the I/O thread: a busy cluster link
/// cannot keep the sockets of this node waiting longer than this.
constexpr int max_rounds_per_turn = 32;

} // namespace

struct io_multiplexing::driver : std::enable_shared_from_this<driver> {
  driver(net::default_multiplexer& m, boost::asio::io_context& ioc, int fd)
    : mx(m), ready(ioc, fd) {
  }

  /// CAF's multiplexer until it has nothing ready and nothing posted to
  /// itself, or the turn's rounds are spent. It is on "its own thread" only
  /// meanwhile: what this thread posts to it at other times goes through its
  /// pipe, which makes the descriptor ready again.
  void turn() {
    mx.thread_id(std::this_thread::get_id());
    int n = 0;
    bool more = false;
    while (mx.try_run_once()) {
      if (++n == max_rounds_per_turn) {
        more = true;
        break;
      }
    }
    mx.thread_id(std::thread::id{});
    rounds.fetch_add(static_cast<std::uint64_t>(n), std::memory_order_relaxed);
    if (more)
      post_turn();
    else
      wait_ready();
  }

  void wait_ready() {
    if (waiting)
      return;
    waiting = true;
    ready.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [self = shared_from_this()](const boost::system::error_code& ec) {
                       self->waiting = false;
                       if (!ec)
                         self->turn();
                     });
  }

  void post_turn() {
    if (posted)
      return;
    posted = true;
    boost::asio::post(ready.get_executor(), [self = shared_from_this()] {
      self->posted = false;
      self->turn();
    });
  }

  net::default_multiplexer& mx;
  // A duplicate of CAF's epoll descriptor, which stays CAF's to close.
  boost::asio::posix::stream_descriptor ready;
  // Touched on the I/O thread only.
  bool waiting = false;
  bool posted = false;
  std::atomic<std::uint64_t> rounds{0};
};

io_multiplexing io_multiplexing::start(caf::actor_system& sys, boost::asio::io_context& ioc) {
  io_multiplexing result;
  if (!sys.has_middleman() || !caf::get_or(sys.config(), manual_key, false)) {
    if (sys.has_middleman())
      spdlog::debug("cluster: the middleman's multiplexer runs on its own thread");
    return result;
  }
  auto* mx = dynamic_cast<net::default_multiplexer*>(&sys.middleman().backend());
  if (mx == nullptr) {
    spdlog::warn("cluster: the middleman's backend is not CAF's default multiplexer; "
                 "it is not polled on the I/O thread");
    return result;
  }
  int fd = ::dup(mx->*epoll_member());
  if (fd < 0) {
    spdlog::error("cluster: cannot watch the middleman's multiplexer on the I/O thread "
                  "(dup: {}); cluster links will not move",
                  std::strerror(errno));
    return result;
  }
  result.driver_ = std::make_shared<driver>(*mx, ioc, fd);
  spdlog::debug("cluster: the middleman's multiplexer is polled on the I/O thread");
  // What was posted to it before now (the BASP broker's start) is in its pipe.
  result.driver_->post_turn();
  return result;
}

io_multiplexing::io_multiplexing() = default;
io_multiplexing::io_multiplexing(io_multiplexing&&) noexcept = default;
io_multiplexing& io_multiplexing::operator=(io_multiplexing&&) noexcept = default;

io_multiplexing::~io_multiplexing() {
  stop();
}

void io_multiplexing::stop() {
  // The handlers still queued in the stopped context keep the driver until
  // the context goes; the multiplexer is no longer polled by it.
  driver_.reset();
}

bool io_multiplexing::active() const {
  return driver_ != nullptr;
}

std::uint64_t io_multiplexing::rounds() const {
  return driver_ ? driver_->rounds.load(std::memory_order_relaxed) : 0;
}

void request_io_multiplexing(caf::actor_system_config& cfg) {
  cfg.set(manual_key, true);
}

} // namespace actor_host
