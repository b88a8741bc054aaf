#pragma once

#include <functional>

namespace actor_host::net {

/// A transport that can tell whether its peer still answers: a WebSocket
/// ping. Kept apart from `transport` so that only the code that checks
/// liveness (runtime id takeover) depends on it.
class pingable {
public:
  virtual ~pingable() = default;

  /// Sends a ping; `on_pong` runs (on the socket's strand) when the peer
  /// answers it. Never runs for a dead or closing peer: the caller keeps its
  /// own deadline.
  virtual void ping(std::function<void()> on_pong) = 0;
};

} // namespace actor_host::net
