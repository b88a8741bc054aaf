#pragma once

#include "net/connection_budget.hpp"

#include <memory>

namespace boost::asio {
class io_context;
}

namespace actor_host::net {

/// Owns the asio io_context and the threads that run it. Sockets live here;
/// by default the actors run here too, between socket handlers
/// (actors/common/io_scheduler.hpp posts them to this context).
class io_runtime {
public:
  explicit io_runtime(unsigned threads = 1);
  ~io_runtime();
  io_runtime(const io_runtime&) = delete;
  io_runtime& operator=(const io_runtime&) = delete;

  void start();

  /// Lets pending handlers finish for up to `grace_ms`, then stops the
  /// context and joins the threads.
  void stop(unsigned grace_ms = 2000);

  boost::asio::io_context& context();

  /// The connection budget of the listeners on this runtime that do not
  /// bring their own (server_options::budget); unlimited until the process
  /// sizes it from its descriptor limit.
  const std::shared_ptr<connection_budget>& budget() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace actor_host::net
