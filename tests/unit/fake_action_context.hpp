#pragma once

// A stand-alone action_context for running action handlers in unit tests:
// a fixed input and context, chunks collected in a vector, an optional input
// stream fed from a vector, and a cancel signal the test can set.

#include "actions/action.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <condition_variable>
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
    return cv_.wait_for(guard, d, [this] { return flag_; });
  }

  int fd() const override {
    return fd_;
  }

private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool flag_ = false;
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
      if (ended || cancel_.wait_for(std::chrono::milliseconds{5}))
        return std::nullopt;
    }
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
  const fake::cancel& cancel_;
  std::mutex mutex_;
  std::deque<boost::json::value> items_;
  bool ended_;
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
    std::lock_guard<std::mutex> guard{chunks_mutex_};
    chunks.push_back(std::move(chunk));
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
  fake::cancel cancel_;
  std::unique_ptr<fake::inputs> inputs_;
};

} // namespace fake
