#pragma once

#include "actors/common/messages.hpp"
#include "actors/common/read_window.hpp"
#include "actors/common/socket_owner.hpp"
#include "net/transport.hpp"

#include <caf/all.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace actor_host {

/// Takes some frames on the I/O thread, before they reach the actor (a
/// runtime's spliced streams: stream_splices.hpp). What it takes never
/// reaches the actor and does not count against the read window.
class frame_tap {
public:
  virtual ~frame_tap() = default;
  /// True: taken.
  virtual bool take(std::string& frame) = 0;
};

using frame_tap_ptr = std::shared_ptr<frame_tap>;

/// Hands what a socket reads to the actor that owns the connection: the only
/// crossing from the socket's handlers into actors. Posting to a mailbox is
/// thread-safe; the actor runs later, never inside the socket's handler
/// (on CAF's worker, or as a turn of its own on the I/O thread:
/// io_scheduler.hpp). With a windowed
/// transport (the one the actor was given), each frame is counted.
class frame_bridge : public net::frame_handler {
public:
  /// `on_oversized`: what a message over the frame cap becomes (a runtime's
  /// link: a message to its connection); unset, such a message closes the
  /// socket.
  using oversized_fn = std::function<void(std::string head, std::string tail, std::uint64_t size)>;

  explicit frame_bridge(socket_owner_actor target, net::transport_ptr window = nullptr,
                        oversized_fn on_oversized = nullptr, frame_tap_ptr tap = nullptr)
    : target_(std::move(target)),
      window_(std::dynamic_pointer_cast<windowed_transport>(std::move(window))),
      on_oversized_(std::move(on_oversized)), tap_(std::move(tap)) {
  }

  bool takes_oversized() const override {
    return static_cast<bool>(on_oversized_);
  }

  void on_oversized(std::string head, std::string tail, std::uint64_t size) override {
    if (on_oversized_)
      on_oversized_(std::move(head), std::move(tail), size);
  }

  void on_text(std::string frame) override {
    if (tap_ && tap_->take(frame))
      return;
    if (window_)
      window_->frame_handed();
    caf::anon_send(target_, frame_atom_v, std::move(frame));
  }

  void on_closed(std::string reason) override {
    caf::anon_send(target_, closed_atom_v, std::move(reason));
    target_ = nullptr;
    window_ = nullptr;
    on_oversized_ = nullptr;
    tap_ = nullptr;
  }

private:
  socket_owner_actor target_;
  windowed_transport_ptr window_;
  oversized_fn on_oversized_;
  frame_tap_ptr tap_;
};

/// Closes the transport whenever `self` terminates, for whatever reason; the
/// functor owns its own reference because the actor's state is gone by then.
inline void close_on_exit(caf::local_actor* self, net::transport_ptr transport) {
  self->attach_functor([t = std::move(transport)](const caf::error&) {
    t->close(1001, "going away");
  });
}

} // namespace actor_host
