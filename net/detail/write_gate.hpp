#pragma once

// Internal to net/: the layer under Beast's websocket::stream that lets the
// WebSocket session write data frames itself while Beast writes its control
// frames (ws_session.cpp).

#include "net/detail/beast_names.hpp"
#include "net/detail/flex_stream.hpp"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/beast/core/role.hpp>
#include <boost/beast/websocket/teardown.hpp>

#include <functional>
#include <memory>
#include <utility>

namespace actor_host::net {

// The layer under Beast's websocket::stream. ws_session writes data frames
// itself, many per sendmsg, straight to the socket; Beast still writes
// control frames on its own: the pong and the close echo from inside a read,
// keep-alive pings from its timer, our close. Beast serialises only its own
// writers, so this layer keeps the two writers apart at frame granularity:
// a Beast write that starts during one of our batches waits for it, and a
// batch waits until no Beast write is outstanding. Beast writes one control
// frame per composed async_write, whose next write_some is started inside
// the completion of the previous one, so "no write_some outstanding" means
// "between frames". Everything here runs on the session's strand.
class write_gate {
  struct deferred_write {
    virtual ~deferred_write() = default;
    virtual void start() = 0;
  };
  template <class F>
  struct deferred_write_impl final : deferred_write {
    explicit deferred_write_impl(F&& f) : f_(std::move(f)) {
    }
    void start() override {
      f_();
    }
    F f_;
  };
  // Shared with the completion handlers: Beast's impl (and this layer in it)
  // may be destroyed while the last handler runs.
  struct state {
    int beast_writes = 0;
    bool raw_writing = false;
    std::unique_ptr<deferred_write> deferred; // Beast has one writer at a time
    std::function<void()> on_idle;
  };

public:
  using executor_type = flex_stream::executor_type;

  explicit write_gate(flex_stream&& stream)
    : next_(std::move(stream)), st_(std::make_shared<state>()) {
  }

  executor_type get_executor() noexcept {
    return next_.get_executor();
  }
  flex_stream& next_layer() noexcept {
    return next_;
  }
  const flex_stream& next_layer() const noexcept {
    return next_;
  }

  template <class MutableBuffers, class Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    return next_.async_read_some(buffers, std::forward<Handler>(handler));
  }

  template <class ConstBuffers, class Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    return asio::async_initiate<Handler, void(error_code, std::size_t)>(
      [this](auto h, const ConstBuffers& b) {
        auto ex = asio::get_associated_executor(h, next_.get_executor());
        auto done = asio::bind_executor(
          ex, [st = st_, h = std::move(h)](error_code ec, std::size_t n) mutable {
            std::move(h)(ec, n); // may start the frame's next write_some
            if (--st->beast_writes == 0 && st->on_idle)
              st->on_idle();
          });
        ++st_->beast_writes;
        if (!st_->raw_writing)
          return next_.async_write_some(b, std::move(done));
        auto start = [this, b, done = std::move(done)]() mutable {
          next_.async_write_some(b, std::move(done));
        };
        st_->deferred = std::make_unique<deferred_write_impl<decltype(start)>>(std::move(start));
      },
      handler, buffers);
  }

  /// Called when the last outstanding Beast write completes.
  void on_idle(std::function<void()> f) {
    st_->on_idle = std::move(f);
  }
  bool beast_writing() const {
    return st_->beast_writes > 0;
  }
  void raw_begin() {
    st_->raw_writing = true;
  }
  void raw_end() {
    st_->raw_writing = false;
    if (auto d = std::move(st_->deferred))
      d->start();
  }

private:
  flex_stream next_;
  std::shared_ptr<state> st_;
};

// Beast's websocket::stream tears down through its next layer (found by
// ADL). Only the asynchronous form: the sessions never close synchronously.
template <class Handler>
void async_teardown(beast::role_type role, write_gate& s, Handler&& handler) {
  using beast::websocket::async_teardown;
  async_teardown(role, s.next_layer(), std::forward<Handler>(handler));
}

} // namespace actor_host::net
