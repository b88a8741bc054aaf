#pragma once

// Private to net/: the write side both WebSocket sessions share
// (ws_session.cpp on Beast, lean_ws_session.cpp).

#include "net/detail/batch_hold.hpp"
#include "net/detail/frame_queue.hpp"
#include "net/detail/ws_frame_encoder.hpp"
#include "net/socket_counters.hpp"

#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace actor_host::net::detail {

/// Frames from any thread collect in the queue's inbox; the send that finds
/// it empty wakes the session's strand, which encodes what waits into one
/// gather write. `Session` (CRTP) has `strand_`, `shared_from_this()`,
/// `peer_`, `limits_`, `closing_`, `do_write()` (starts a write of the
/// queue's front), `drop_socket()` (closes it at once, the read side
/// reports the end) and `write_stopped()` (closing or closed: the inbox is
/// dropped).
template <class Session>
class ws_writer {
protected:
  ws_writer(std::size_t max_write_queue_bytes, std::shared_ptr<socket_counters> counters)
    : counters_(std::move(counters)), q_(max_write_queue_bytes, counters_->queued_bytes) {
  }

  /// Any thread: actors', or the I/O thread's for a spliced stream. Only the
  /// send that finds the inbox empty wakes the strand; the others ride
  /// along with it (one wake-up per batch).
  void enqueue(out_frame f) {
    std::size_t held = 0;
    switch (q_.push(std::move(f), held)) {
      case frame_queue::pushed::first:
        hold_.wake(self().strand_, [this](batch_hold::ticket t) { return send_handler(t); });
        break;
      case frame_queue::pushed::overflow:
        hold_.post_in_order(self().strand_,
                            [s = self().shared_from_this(), held] { s->overflow(held); });
        break;
      case frame_queue::pushed::joined:
      case frame_queue::pushed::closed:
        break;
    }
  }

  auto send_handler(batch_hold::ticket t) {
    return [s = self().shared_from_this(), t] { s->on_send(t); };
  }

  /// The strand: the inbox joins the queue, unless the batch waits for the
  /// reads already possible (batch_hold.hpp).
  void on_send(batch_hold::ticket t) {
    const bool stopped = self().write_stopped();
    if (!stopped
        && hold_.wait(self().strand_, t, q_.inbox_bytes(),
                      [this](auto next) { return send_handler(next); }))
      return;
    q_.take_inbox(stopped);
    if (stopped)
      return;
    // What waits behind the batch in flight counts.
    if (q_.over_cap(writing_ ? enc_.frames() : 0, writing_ ? enc_.payload_bytes() : 0))
      return self().overflow(q_.bytes());
    if (!writing_)
      self().do_write();
  }

  /// The strand: the peer does not drain its socket (`held` bytes wait in
  /// the queue or, seen by enqueue, in the inbox); a close frame would queue
  /// behind the same backlog, so the connection is dropped.
  void overflow(std::size_t held) {
    auto& s = self();
    if (s.write_stopped())
      return;
    counters_->write_queue_overflows.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("dropping {}: {} bytes wait to be written (limit {})", s.peer_, held,
                 s.limits_.max_write_queue_bytes);
    s.closing_ = true;
    // Nothing more may pile up in the inbox meanwhile, and what waits is
    // freed now, not when the handler lets go of the transport.
    q_.close_inbox();
    drop_unsent();
    s.drop_socket();
  }

  /// The strand, as a write completes: false when it failed (what waits
  /// goes; the read side sees the same failure and reports it), else the
  /// write is counted and its frames freed.
  bool written(const boost::system::error_code& ec) {
    writing_ = false;
    if (ec) {
      q_.drop();
      return false;
    }
    counters_->frames_out.fetch_add(enc_.frames(), std::memory_order_relaxed);
    counters_->bytes_out.fetch_add(enc_.payload_bytes(), std::memory_order_relaxed);
    q_.pop_written(enc_.frames(), enc_.payload_bytes());
    enc_.trim(q_.queued() == 0);
    return true;
  }

  /// Frames not in the write in flight go now (a batch in flight still
  /// points into its frames).
  void drop_unsent() {
    if (writing_)
      q_.drop_behind(enc_.frames(), enc_.payload_bytes());
    else
      q_.drop();
  }

  Session& self() {
    return static_cast<Session&>(*this);
  }

  // Before q_, whose bytes its queued_bytes gauge follows to the end.
  std::shared_ptr<socket_counters> counters_;
  frame_queue q_;
  batch_hold hold_;
  // Strand only from here on. The front enc_.frames() of the queue are
  // being written while writing_.
  ws_frame_encoder enc_;
  bool writing_ = false;
};

} // namespace actor_host::net::detail
