#include "net/io_runtime.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

namespace actor_host::net {

struct io_runtime::impl {
  explicit impl(unsigned n) : threads_wanted(n == 0 ? 1 : n), ioc(static_cast<int>(threads_wanted)) {}
  unsigned threads_wanted;
  boost::asio::io_context ioc;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::shared_ptr<connection_budget> budget = std::make_shared<connection_budget>();

  // asio reprograms the kernel's timer (a timerfd_settime syscall) whenever
  // a new expiry becomes the earliest of the context. Beast re-arms a
  // WebSocket's idle timer on every read, so a lone busy connection (a
  // runtime streaming to the manager, with no other sockets on the context)
  // paid that syscall on every frame. A timer due within the second stays the
  // earliest, so those re-arms only touch asio's heap.
  boost::asio::steady_timer floor{boost::asio::make_strand(ioc)};
  bool ticking = false; // on floor's strand

  void tick() {
    floor.expires_after(std::chrono::seconds(1));
    floor.async_wait([this](boost::system::error_code ec) {
      if (!ec && ticking)
        tick();
    });
  }
};

io_runtime::io_runtime(unsigned threads) : impl_(std::make_unique<impl>(threads)) {}

io_runtime::~io_runtime() {
  stop(0);
}

void io_runtime::start() {
  impl_->work.emplace(impl_->ioc.get_executor());
  boost::asio::post(impl_->floor.get_executor(), [p = impl_.get()] {
    p->ticking = true;
    p->tick();
  });
  for (unsigned i = 0; i < impl_->threads_wanted; ++i)
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
}

void io_runtime::stop(unsigned grace_ms) {
  if (impl_->threads.empty())
    return;
  // Dropping the guard lets run() return once queued work (closing sockets)
  // is done; the deadline covers peers that never answer a close.
  boost::asio::post(impl_->floor.get_executor(), [p = impl_.get()] {
    p->ticking = false;
    p->floor.cancel();
  });
  impl_->work.reset();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (!impl_->ioc.stopped() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  impl_->ioc.stop();
  for (auto& t : impl_->threads)
    t.join();
  impl_->threads.clear();
}

boost::asio::io_context& io_runtime::context() {
  return impl_->ioc;
}

const std::shared_ptr<connection_budget>& io_runtime::budget() const {
  return impl_->budget;
}

} // namespace actor_host::net
