#pragma once

#include "net/liveness.hpp"
#include "net/transport.hpp"

#include <chrono>
#include <memory>
#include <mutex>

// No CAF here: the TSan bridge test runs this against real sockets.
namespace actor_host {

/// Read-side backpressure for one socket. CAF mailboxes are unbounded, so a
/// peer that writes faster than its actor works would grow memory without
/// end: this counts the frames handed to the actor and not yet processed,
/// stops reading the socket at `max_unread` (TCP then pushes back on the
/// peer) and reads again once the actor is down to half.
///
/// It wraps the socket's transport: the actor gets the wrapper and calls
/// `frame_processed()` after each frame; everything else passes through.
class windowed_transport : public net::transport, public net::pingable {
public:
  /// A paused socket is logged (and counted) once it has waited this long.
  static constexpr std::chrono::seconds long_pause{5};

  windowed_transport(net::transport_ptr inner, std::size_t max_unread)
    : inner_(std::move(inner)), max_unread_(max_unread), low_water_(max_unread / 2) {
  }

  ~windowed_transport() override;

  /// The bridge, on the socket's strand, before handing a frame on.
  void frame_handed();

  void frame_processed() override;

  std::size_t unread() const {
    std::lock_guard<std::mutex> g{mtx_};
    return unread_;
  }

  void send_text(std::string frame) override {
    inner_->send_text(std::move(frame));
  }
  void send_binary(std::string frame) override {
    inner_->send_binary(std::move(frame));
  }
  void pause_reading() override {
    inner_->pause_reading();
  }
  void resume_reading() override {
    inner_->resume_reading();
  }
  void close(std::uint16_t code, std::string reason) override {
    inner_->close(code, std::move(reason));
  }
  void drop() override {
    inner_->drop();
  }
  const std::string& peer() const override {
    return inner_->peer();
  }
  const net::upgrade_request& upgrade() const override {
    return inner_->upgrade();
  }
  /// A liveness probe passes through. While reading is paused the pong
  /// could not be read, but the peer has just sent more frames than its
  /// actor took: it is alive, so the answer is yes at once.
  void ping(std::function<void()> on_pong) override;

private:
  void ended_pause(std::chrono::steady_clock::duration took); // mtx_ held

  const net::transport_ptr inner_;
  const std::size_t max_unread_;
  const std::size_t low_water_;
  mutable std::mutex mtx_;
  std::size_t unread_ = 0;
  bool paused_ = false;
  bool long_logged_ = false;
  std::chrono::steady_clock::time_point paused_at_;
};

using windowed_transport_ptr = std::shared_ptr<windowed_transport>;

/// Wraps `t` in a read window of `max_unread` frames; 0 = no window (`t`
/// itself, and no counting).
net::transport_ptr with_read_window(net::transport_ptr t, std::size_t max_unread);

} // namespace actor_host
