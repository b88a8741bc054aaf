#pragma once

#include <string>

namespace actor_host {

/// A long-lived part of the process (the manager, a runtime, ...). main only
/// builds components, starts them in order and stops them in reverse.
class component {
public:
  virtual ~component() = default;

  /// Returns "" or why it could not start.
  virtual std::string start() = 0;

  /// Graceful: finishes or fails what is in flight. Idempotent.
  virtual void stop() = 0;
};

} // namespace actor_host
