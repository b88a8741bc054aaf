#pragma once

#include "actors/call/stream_sink.hpp"
#include "actors/common/frame_bridge.hpp"

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace actor_host {

/// The streaming runs of one runtime connection whose callers gave a sink
/// (stream_sink.hpp): the socket's reader writes their chunks to it on the
/// I/O thread, so a chunk costs no mailbox message, no wake-up of an actor
/// thread and no hand-off back to the I/O thread (the caller's socket is
/// served by the same thread). The connection adds a run before it sends
/// the request, so every frame of the run finds it, and removes it when the
/// call leaves; frames are handled in the order they are read, so a chunk
/// cannot overtake the run's trace id or its answer (which the connection
/// still handles). A trace id is written here too and still handed on.
class stream_splices : public frame_tap {
public:
  /// The connection's thread.
  void add(std::string wire_id, stream_sink_ptr sink);
  void remove(std::string_view wire_id);
  void clear();
  std::size_t size() const {
    return count_.load(std::memory_order_relaxed);
  }

  /// The I/O thread: true if `frame` was a chunk of a spliced run and is
  /// written (the actor does not get it). Anything else, a frame that does
  /// not decode included, goes on to the connection as before.
  bool take(std::string& frame) override;

private:
  stream_sink_ptr find(std::string_view wire_id);

  struct id_hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const {
      return std::hash<std::string_view>{}(s);
    }
  };
  std::atomic<std::size_t> count_{0};
  std::mutex mtx_;
  std::unordered_map<std::string, stream_sink_ptr, id_hash, std::equal_to<>> by_id_;
};

using stream_splices_ptr = std::shared_ptr<stream_splices>;

// What the socket reader and the connection both read of a run's events.

/// The trace id in a runActionState's `state` (a member found in `params`,
/// as a view into it); false when it has none. Not validated here.
bool read_trace_id(const std::string& params, std::string_view state, std::string& out);

/// A streamChunk's chunk as callers take it: one byte of capacity to spare,
/// where the HTTP door ends the chunk's line in place.
std::string chunk_for_caller(std::string_view raw);

} // namespace actor_host
