#pragma once

#include <memory>
#include <mutex>
#include <string>

namespace actor_host {

/// Where a streaming run's events can be written without a hop through its
/// caller's actor: the runtime's connection writes the chunks it reads
/// straight to the caller's socket (the HTTP door's NDJSON lines, an
/// /api/ws caller's frames), one actor hop per chunk instead of two. A door
/// that has one puts it in its call_request; only this node's connections
/// use it (it does not cross nodes: a cross-node run's events reach the
/// caller as messages, and the caller writes them here).
///
/// Thread-safe: the connection writes events, the caller writes them too
/// (those that came as messages) and closes the sink when its call ends, so
/// no event follows the caller's last word. The first trace id counts.
class stream_sink {
public:
  virtual ~stream_sink() = default;

  /// The run's trace id (runActionState); later ones are ignored.
  void trace(const std::string& id);
  /// One chunk (JSON text, checked by the connection). The HTTP door ends
  /// its line in place: the connection leaves a byte of capacity to spare.
  void chunk(std::string chunk);
  /// No event is written after this. True when one was (the HTTP door's
  /// head is out then).
  bool close();

protected:
  /// Under the sink's lock; `first`: nothing was written before.
  virtual void write_trace(const std::string& id, bool first) = 0;
  virtual void write_chunk(std::string chunk, bool first) = 0;

private:
  std::mutex mtx_;
  bool started_ = false;
  bool traced_ = false;
  bool closed_ = false;
};

using stream_sink_ptr = std::shared_ptr<stream_sink>;

} // namespace actor_host
