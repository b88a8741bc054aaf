#include "actors/common/read_window.hpp"

#include "obs/metrics.hpp"

#include <spdlog/spdlog.h>

namespace actor_host {

namespace {

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

} // namespace

windowed_transport::~windowed_transport() {
  if (paused_)
    obs::global().read_paused_sockets.fetch_sub(1, std::memory_order_relaxed);
}

// pause_reading runs on the strand right here (we are its frame handler), so
// it holds before the next read; resume_reading posts behind it. Both are
// called under the lock so that a pause and a resume decided on two threads
// reach the socket in the order they were decided.
void windowed_transport::frame_handed() {
  std::lock_guard<std::mutex> g{mtx_};
  if (++unread_ < max_unread_ || paused_)
    return;
  paused_ = true;
  long_logged_ = false;
  paused_at_ = std::chrono::steady_clock::now();
  auto& m = obs::global();
  m.read_pauses.fetch_add(1, std::memory_order_relaxed);
  m.read_paused_sockets.fetch_add(1, std::memory_order_relaxed);
  spdlog::debug("{}: {} frames not processed yet (max_unread_frames); reading paused",
                inner_->peer(), unread_);
  inner_->pause_reading();
}

void windowed_transport::frame_processed() {
  std::lock_guard<std::mutex> g{mtx_};
  // A frame of an earlier socket (a runtime's link that reconnected) may be
  // acknowledged here: never below zero.
  if (unread_ > 0)
    --unread_;
  if (!paused_)
    return;
  auto took = std::chrono::steady_clock::now() - paused_at_;
  if (unread_ > low_water_) {
    if (took >= long_pause && !long_logged_) {
      long_logged_ = true;
      obs::global().read_pauses_long.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("{}: reading paused for {:.1f} s: its actor still has {} frames to process "
                   "(max_unread_frames {})",
                   inner_->peer(), seconds(took), unread_, max_unread_);
    }
    return;
  }
  ended_pause(took);
  inner_->resume_reading();
}

void windowed_transport::ended_pause(std::chrono::steady_clock::duration took) {
  paused_ = false;
  obs::global().read_paused_sockets.fetch_sub(1, std::memory_order_relaxed);
  if (took >= long_pause)
    spdlog::info("{}: reading resumed after {:.1f} s paused", inner_->peer(), seconds(took));
}

net::transport_ptr with_read_window(net::transport_ptr t, std::size_t max_unread) {
  if (max_unread == 0)
    return t;
  return std::make_shared<windowed_transport>(std::move(t), max_unread);
}

void windowed_transport::ping(std::function<void()> on_pong) {
  bool paused;
  {
    std::lock_guard<std::mutex> g{mtx_};
    paused = paused_;
  }
  if (paused)
    return on_pong();
  if (auto* p = dynamic_cast<net::pingable*>(inner_.get()))
    p->ping(std::move(on_pong));
}

} // namespace actor_host
