#pragma once

#include "actions/action.hpp"

#include <atomic>
#include <deque>
#include <mutex>

namespace actor_host::actions {

/// cancel_signal backed by an eventfd: readable once cancelled, so handlers
/// can poll() it next to their own descriptors.
class cancel_flag : public cancel_signal {
public:
  cancel_flag();
  ~cancel_flag() override;
  cancel_flag(const cancel_flag&) = delete;
  cancel_flag& operator=(const cancel_flag&) = delete;

  /// Thread-safe, idempotent.
  void trigger();

  bool cancelled() const override;
  bool wait_for(std::chrono::milliseconds d) const override;
  int fd() const override;

private:
  std::atomic<bool> cancelled_{false};
  int fd_;
};

/// The input of one bidi run: chunks in arrival order, then the end. Filled
/// by the run's bidi_session actor, drained by the handler's thread.
class input_queue : public input_stream {
public:
  explicit input_queue(const cancel_flag& cancel);
  ~input_queue() override;
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
  int fd_;
};

} // namespace actor_host::actions
