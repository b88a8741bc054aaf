#pragma once

#include "net/liveness.hpp"
#include "net/transport.hpp"
#include "wire/url.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace actor_host::testing {

/// A transport that records what actors write to it. Tests run under CAF's
/// test coordinator (one thread), but the lock keeps the class honest to the
/// interface's thread-safety contract.
///
/// Like the real session it drops frames once closing: `dropped()` counts them.
class fake_transport : public net::transport, public net::pingable {
public:
  explicit fake_transport(std::string peer = "127.0.0.1:50000") : peer_(std::move(peer)) {
  }

  void send_text(std::string frame) override {
    std::lock_guard<std::mutex> guard{mtx_};
    if (close_calls_ > 0) {
      ++dropped_;
      return;
    }
    frames_.push_back(std::move(frame));
  }

  /// Recorded among the text frames with a "bin:" prefix, so one list shows
  /// the order of both kinds.
  void send_binary(std::string frame) override {
    send_text("bin:" + frame);
  }

  void pause_reading() override {
    std::lock_guard<std::mutex> guard{mtx_};
    paused_ = true;
  }

  void resume_reading() override {
    std::lock_guard<std::mutex> guard{mtx_};
    paused_ = false;
  }

  void close(std::uint16_t code, std::string reason) override {
    std::lock_guard<std::mutex> guard{mtx_};
    if (close_calls_++ == 0) {
      close_code_ = code;
      close_reason_ = std::move(reason);
    }
  }

  /// Pings are recorded; `answer_pings` plays the peer's pongs.
  void ping(std::function<void()> on_pong) override {
    std::lock_guard<std::mutex> guard{mtx_};
    ++pings_;
    pong_waiters_.push_back(std::move(on_pong));
  }

  void answer_pings() {
    std::vector<std::function<void()>> ws;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      ws.swap(pong_waiters_);
    }
    for (auto& f : ws)
      f();
  }

  int pings() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return pings_;
  }

  const std::string& peer() const override {
    return peer_;
  }

  const net::upgrade_request& upgrade() const override {
    return upgrade_;
  }

  /// The upgrade request this socket "came with" (server side); set before
  /// handing the transport to a factory.
  void set_upgrade(const std::string& target) {
    upgrade_.target = target;
    wire::split_target(target, upgrade_.path, upgrade_.query);
  }

  // -- inspection -------------------------------------------------------------

  std::vector<std::string> frames() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return frames_;
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return frames_.size();
  }

  /// Frame `i`, or "<no frame i>" so that a failing check prints something useful.
  std::string frame(std::size_t i) const {
    std::lock_guard<std::mutex> guard{mtx_};
    return i < frames_.size() ? frames_[i] : "<no frame " + std::to_string(i) + ">";
  }

  std::string last() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return frames_.empty() ? std::string{"<no frames>"} : frames_.back();
  }

  /// Returns the frames recorded so far and forgets them.
  std::vector<std::string> take() {
    std::lock_guard<std::mutex> guard{mtx_};
    return std::exchange(frames_, {});
  }

  void clear() {
    std::lock_guard<std::mutex> guard{mtx_};
    frames_.clear();
  }

  int close_calls() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return close_calls_;
  }

  /// Read-window releases: frames the consumer said it has handled.
  void frame_processed() override {
    std::lock_guard<std::mutex> guard{mtx_};
    ++processed_;
  }
  int processed() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return processed_;
  }

  std::uint16_t close_code() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return close_code_;
  }

  std::string close_reason() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return close_reason_;
  }

  bool paused() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return paused_;
  }

  std::size_t dropped() const {
    std::lock_guard<std::mutex> guard{mtx_};
    return dropped_;
  }

private:
  mutable std::mutex mtx_;
  std::string peer_;
  net::upgrade_request upgrade_;
  std::vector<std::string> frames_;
  int close_calls_ = 0;
  int processed_ = 0;
  std::uint16_t close_code_ = 0;
  std::string close_reason_;
  std::size_t dropped_ = 0;
  bool paused_ = false;
  int pings_ = 0;
  std::vector<std::function<void()>> pong_waiters_;
};

using fake_transport_ptr = std::shared_ptr<fake_transport>;

inline fake_transport_ptr make_fake_transport(std::string peer = "127.0.0.1:50000") {
  return std::make_shared<fake_transport>(std::move(peer));
}

} // namespace actor_host::testing
