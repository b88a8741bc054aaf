#pragma once

#include "actions/action.hpp"
#include "actions/cancel_flag.hpp"
#include "proc/event_fd.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace actor_host::actions {

/// The input of one bidi run: chunks in arrival order, then the end. Filled
/// by the run's bidi_session actor, drained by the handler's thread. Its fd
/// is readable while a chunk or the end is queued.
class input_queue : public input_stream {
public:
  /// next() gives up once `cancel` is set.
  explicit input_queue(const cancel_flag& cancel);
  input_queue(const input_queue&) = delete;
  input_queue& operator=(const input_queue&) = delete;

  /// Producer side; both ignore calls after end(). `bytes` is the chunk's
  /// size on the wire, counted until the handler takes it.
  void push(boost::json::value chunk, std::size_t bytes = 0);
  void end();
  bool ended() const;
  /// Wire bytes pushed and not yet taken by the handler.
  std::size_t held_bytes() const;

  std::optional<boost::json::value> next() override;
  std::optional<boost::json::value> try_next(bool& ended) override;
  int fd() const override;

private:
  void update_readiness(); // requires mutex_ held

  const cancel_flag& cancel_;
  mutable std::mutex mutex_;
  std::deque<std::pair<boost::json::value, std::size_t>> items_; // chunk, wire bytes
  std::size_t held_bytes_ = 0;
  bool ended_ = false;
  bool readable_ = false;
  proc::event_fd fd_;
};

} // namespace actor_host::actions
