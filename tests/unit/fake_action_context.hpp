#pragma once

// A stand-alone action_context for running action handlers in unit tests:
// a fixed input and context, chunks collected in a vector, an optional input
// stream fed from a vector, and a cancel signal the test can set. The wait_*
// members are gates for the test thread: they block until the handler has
// reached a given point (bounded, so a bug fails a check instead of hanging).

#include "actions/action.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <sys/eventfd.h>
#include <unistd.h>

namespace fake {

class cancel final : public actor_host::actions::cancel_signal {
public:
  cancel() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  }
  ~cancel() override {
    if (fd_ >= 0)
      ::close(fd_);
  }
  cancel(const cancel&) = delete;
  cancel& operator=(const cancel&) = delete;

  void trigger() {
    {
      std::lock_guard<std::mutex> guard{mutex_};
      if (flag_)
        return;
      flag_ = true;
    }
    cv_.notify_all();
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
  }

  bool cancelled() const override {
    std::lock_guard<std::mutex> guard{mutex_};
    return flag_;
  }

  bool wait_for(std::chrono::milliseconds d) const override {
    std::unique_lock<std::mutex> guard{mutex_};
    ++waits_;
    cv_.notify_all();
    return cv_.wait_for(guard, d, [this] { return flag_; });
  }

  /// For the test thread: blocks until a handler has called wait_for() (and
  /// so waits now, unless it was cancelled meanwhile); false after `limit`.
  bool wait_until_waited_on(std::chrono::milliseconds limit) const {
    std::unique_lock<std::mutex> guard{mutex_};
    return cv_.wait_for(guard, limit, [this] { return waits_ > 0; });
  }

  int fd() const override {
    return fd_;
  }

private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool flag_ = false;
  mutable std::size_t waits_ = 0;
  int fd_;
};

/// Chunks given up front (plus push()); ended unless constructed open.
class inputs final : public actor_host::actions::input_stream {
public:
  inputs(const fake::cancel& c, std::vector<boost::json::value> items, bool ended)
    : cancel_(c), items_(items.begin(), items.end()), ended_(ended) {
  }

  void push(boost::json::value v) {
    std::lock_guard<std::mutex> guard{mutex_};
    items_.push_back(std::move(v));
    starved_ = false;
  }

  void end() {
    std::lock_guard<std::mutex> guard{mutex_};
    ended_ = true;
  }

  std::optional<boost::json::value> next() override {
    for (;;) {
      bool ended = false;
      if (auto v = try_next(ended))
        return v;
      if (ended)
        return std::nullopt;
      note_starved();
      if (cancel_.wait_for(std::chrono::milliseconds{5}))
        return std::nullopt;
    }
  }

  /// For the test thread: blocks until next() found the queue empty since
  /// the last push(), i.e. the handler took every chunk and waits for more;
  /// false after `limit`.
  bool wait_until_starved(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> guard{mutex_};
    return starved_cv_.wait_for(guard, limit, [this] { return starved_; });
  }

  std::optional<boost::json::value> try_next(bool& ended) override {
    std::lock_guard<std::mutex> guard{mutex_};
    ended = ended_ && items_.empty();
    if (items_.empty())
      return std::nullopt;
    auto v = std::move(items_.front());
    items_.pop_front();
    return v;
  }

  int fd() const override {
    return -1; // the demo actions only use next()
  }

private:
  void note_starved() {
    std::lock_guard<std::mutex> guard{mutex_};
    // Not if a push() came in since try_next().
    if (items_.empty()) {
      starved_ = true;
      starved_cv_.notify_all();
    }
  }

  const fake::cancel& cancel_;
  std::mutex mutex_;
  std::condition_variable starved_cv_;
  std::deque<boost::json::value> items_;
  bool ended_;
  bool starved_ = false;
};

class run_context final : public actor_host::actions::action_context {
public:
  explicit run_context(boost::json::value input = nullptr, boost::json::value ctx = nullptr)
    : input_(std::move(input)), context_(std::move(ctx)) {
  }

  /// Makes this a bidi run reading `items` (then the end, unless `open`).
  fake::inputs& feed(std::vector<boost::json::value> items, bool open = false) {
    inputs_ = std::make_unique<fake::inputs>(cancel_, std::move(items), !open);
    return *inputs_;
  }

  void trigger_cancel() {
    cancel_.trigger();
  }

  /// See cancel::wait_until_waited_on.
  bool wait_until_waiting(std::chrono::milliseconds limit) const {
    return cancel_.wait_until_waited_on(limit);
  }

  /// For the test thread: blocks until `n` chunks were sent; false after
  /// `limit`.
  bool wait_chunks(std::size_t n, std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> guard{chunks_mutex_};
    return chunks_cv_.wait_for(guard, limit, [&] { return chunks.size() >= n; });
  }

  /// Chunks sent so far, in order. Read it after the handler returned.
  std::vector<boost::json::value> chunks;

  const boost::json::value& input() const override {
    return input_;
  }
  const boost::json::value& init() const override {
    return init_;
  }
  const boost::json::value& context() const override {
    return context_;
  }
  const std::string& trace_id() const override {
    return trace_id_;
  }
  bool streaming() const override {
    return true;
  }
  void send_chunk(boost::json::value chunk) override {
    {
      std::lock_guard<std::mutex> guard{chunks_mutex_};
      chunks.push_back(std::move(chunk));
    }
    chunks_cv_.notify_all();
  }
  actor_host::actions::input_stream* inputs() override {
    return inputs_.get();
  }
  const actor_host::actions::cancel_signal& cancel() const override {
    return cancel_;
  }

private:
  boost::json::value input_;
  boost::json::value init_;
  boost::json::value context_;
  std::string trace_id_ = "0123456789abcdef0123456789abcdef";
  std::mutex chunks_mutex_;
  std::condition_variable chunks_cv_;
  fake::cancel cancel_;
  std::unique_ptr<fake::inputs> inputs_;
};

} // namespace fake
