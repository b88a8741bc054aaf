#pragma once

#include "actors/manager/manager_config.hpp"

#include "actors/common/component.hpp"

#include <caf/fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace actor_host {

namespace net {
class io_runtime;
}

struct manager_options {
  std::string bind = "127.0.0.1";
  std::uint16_t port = 0;        // 0: first free port in 3200-3400
  std::uint16_t http_port = 4100; // 0: any free port
  std::size_t max_frame_bytes = 64u << 20;
  std::size_t max_body_bytes = 64u << 20;
  call_policy policy;
};

/// The manager role as one component: the reflection server for runtimes,
/// the API server for callers, and the actor tree behind them.
class manager : public component {
public:
  manager(caf::actor_system& sys, net::io_runtime& io, manager_options opts);
  ~manager() override;
  manager(const manager&) = delete;
  manager& operator=(const manager&) = delete;

  /// Binds both listeners. Returns "" or why it could not start.
  std::string start() override;

  /// Stops accepting, takes the actor tree down (callers in flight get
  /// "Manager is shutting down") and waits for it.
  void stop() override;

  std::uint16_t port() const;
  std::uint16_t http_port() const;

  /// Why GET /readyz fails, "" when ready: listening, not draining, and
  /// every configured service registered.
  std::string not_ready_reason() const;

  /// Live actors and sockets as JSON (GET /api/__stats).
  std::string stats_json() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace actor_host
