#pragma once

// Internal to net/: the frames a WebSocket session has yet to write
// (ws_session.cpp). No socket here, so the unit tests drive it directly.

#include "net/detail/ws_frame_encoder.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace actor_host::net::detail {

/// Two stages. The inbox is filled by actor threads under a mutex; only the
/// push that finds it empty has to wake the strand, the others ride along.
/// The queue is the strand's: frames from `head` on wait, the front ones are
/// in the write in flight. Both stages are capped at `max_bytes` of payload
/// (one frame of any size always fits): while the I/O thread lags, the
/// strand's check does not run, and a caller that does not read would let
/// the actors fill the inbox without bound.
///
/// Vectors that trade their storage, not deques: an empty std::deque keeps
/// ~0.6 KB, and an idle session keeps a few slots at most (kept_slots).
class frame_queue {
public:
  /// `gauge` follows the queue's payload bytes (the listener-wide
  /// queued_bytes); it must outlive the queue.
  frame_queue(std::size_t max_bytes, std::atomic<std::int64_t>& gauge)
    : max_bytes_(max_bytes), gauge_(gauge) {
  }
  ~frame_queue();
  frame_queue(const frame_queue&) = delete;
  frame_queue& operator=(const frame_queue&) = delete;

  // -- any thread ------------------------------------------------------------

  enum class pushed {
    closed,   ///< the inbox is closed: the frame is dropped
    first,    ///< the inbox was empty: wake the strand (take_inbox)
    joined,   ///< a wake-up is already on its way
    overflow, ///< over max_bytes: the inbox is closed and emptied
  };
  /// On overflow, `held` is what the inbox would have held with `f`.
  pushed push(out_frame f, std::size_t& held);
  /// Frames pushed from now on are dropped.
  void close_inbox();
  /// Payload bytes in the inbox.
  std::size_t inbox_bytes();

  // -- the strand only -------------------------------------------------------

  /// Queues a frame of the session's own (a pong, a close) behind the
  /// queued ones, past the inbox and its cap.
  void push_now(out_frame f);
  /// Moves the inbox behind the queued frames, or drops it if `discard`.
  void take_inbox(bool discard);
  /// Frames waiting, those in flight included.
  std::size_t queued() const {
    return outq_.size() - head_;
  }
  /// Payload bytes waiting, those in flight included.
  std::size_t bytes() const {
    return bytes_;
  }
  /// More than one frame waits behind the `in_flight` ones and what waits
  /// behind them is over max_bytes.
  bool over_cap(std::size_t in_flight_frames, std::size_t in_flight_bytes) const {
    return queued() > in_flight_frames + 1 && bytes_ - in_flight_bytes > max_bytes_;
  }
  /// The waiting frames, oldest first, for the encoder. Moving a frame
  /// keeps a large payload's storage where it is, so the queue may grow
  /// while a write points into it.
  std::vector<out_frame>::iterator begin() {
    return outq_.begin() + static_cast<std::ptrdiff_t>(head_);
  }
  std::vector<out_frame>::iterator end() {
    return outq_.end();
  }
  /// The front `frames` (of `payload_bytes`) were written.
  void pop_written(std::size_t frames, std::size_t payload_bytes);
  /// Drops every frame (the socket failed or a close frame went out).
  void drop();
  /// Drops the frames behind the `in_flight` ones, whose buffers a write
  /// still points into.
  void drop_behind(std::size_t in_flight_frames, std::size_t in_flight_bytes);

  /// Storage for more frames than this is given back once a stage drains.
  static constexpr std::size_t kept_slots = 64;

private:
  void add_bytes(std::int64_t delta);

  const std::size_t max_bytes_;
  std::atomic<std::int64_t>& gauge_;
  std::mutex in_mtx_;
  std::vector<out_frame> in_;
  std::size_t in_bytes_ = 0;
  bool in_closed_ = false;
  std::vector<out_frame> outq_;
  std::size_t head_ = 0;
  std::vector<out_frame> spare_; // empty between take_inbox calls
  std::size_t bytes_ = 0;
};

} // namespace actor_host::net::detail
