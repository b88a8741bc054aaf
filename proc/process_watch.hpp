#pragma once

#include "proc/spawn.hpp"

#include <functional>
#include <memory>
#include <string_view>

namespace boost::asio {
class io_context;
}

namespace actor_host::proc {

/// Watches a started child on the I/O threads: its stdout and stderr line by
/// line, and its exit (through the pidfd, then reaped). Callbacks run on an
/// I/O thread and must not block. The child is SIGKILLed (with its group) and
/// reaped when the last reference goes away while it still runs, so it never
/// outlives its owner.
class process_watch {
public:
  struct callbacks {
    std::function<void(bool from_stderr, std::string_view line)> on_line;
    /// Once, with the waitpid status, after the child is reaped.
    std::function<void(int wait_status)> on_exit;
  };

  /// Takes over `child` (its stdin is closed: children read EOF). Throws
  /// spawn_error if the kernel has no pidfd support.
  static std::shared_ptr<process_watch> start(boost::asio::io_context& io, child_process child,
                                              callbacks cbs);

  virtual ~process_watch() = default;

  virtual pid_t pid() const = 0;

  /// Signals the child's group, unless it has been reaped already.
  virtual void signal(int sig) = 0;
};

} // namespace actor_host::proc
