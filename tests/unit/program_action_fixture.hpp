#pragma once

// What the program_action suites share: fakes of the action context (own
// names: other suites have their own fakes), running a handler on a thread,
// and waiting for children to go.

#include "actions/program_action.hpp"
#include "fake_action_context.hpp"

#include <boost/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace program_action_testing {

using namespace actor_host::actions;
using actor_host::wire::status_code;
using namespace std::chrono_literals;
namespace json = boost::json;


using clock_type = std::chrono::steady_clock;

// Upper bound for anything the tests wait on, so a bug fails a check
// instead of hanging the suite.
constexpr auto patience = 10s;

// -- a fake action_context (own names: other suites have their own fakes) ----

/// Cancellation on an eventfd, triggered by the test.
class pa_cancel final : public cancel_signal {
public:
  pa_cancel() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  }
  ~pa_cancel() override {
    ::close(fd_);
  }

  void trigger() {
    flag_ = true;
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
  }

  bool cancelled() const override {
    return flag_;
  }

  bool wait_for(std::chrono::milliseconds d) const override {
    pollfd p{fd_, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(d.count()));
    return flag_;
  }

  int fd() const override {
    return fd_;
  }

private:
  int fd_;
  std::atomic<bool> flag_{false};
};

/// Bidi input fed by the test. The eventfd is readable exactly while a
/// chunk or the end is queued.
class pa_inputs final : public input_stream {
public:
  pa_inputs() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  }
  ~pa_inputs() override {
    ::close(fd_);
  }

  void push(json::value v) {
    std::lock_guard guard{mx_};
    queue_.push_back(std::move(v));
    signal();
  }

  void end() {
    std::lock_guard guard{mx_};
    ended_ = true;
    signal();
  }

  std::optional<json::value> next() override {
    for (;;) {
      bool ended = false;
      if (auto v = try_next(ended))
        return v;
      if (ended)
        return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      ::poll(&p, 1, -1);
    }
  }

  std::optional<json::value> try_next(bool& ended) override {
    std::lock_guard guard{mx_};
    ended = false;
    if (!queue_.empty()) {
      auto v = std::move(queue_.front());
      queue_.pop_front();
      if (queue_.empty() && !ended_)
        drain();
      return v;
    }
    ended = ended_;
    return std::nullopt;
  }

  int fd() const override {
    return fd_;
  }

private:
  void signal() {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
  }
  void drain() {
    std::uint64_t count = 0;
    [[maybe_unused]] auto n = ::read(fd_, &count, sizeof count);
  }

  int fd_;
  std::mutex mx_;
  std::deque<json::value> queue_;
  bool ended_ = false;
};

class pa_context final : public action_context {
public:
  explicit pa_context(json::value input = nullptr, bool bidi = false) : input_(std::move(input)) {
    if (bidi)
      inputs_.emplace();
  }

  const json::value& input() const override {
    return input_;
  }
  const json::value& init() const override {
    return init_;
  }
  const json::value& context() const override {
    return null_;
  }
  const std::string& trace_id() const override {
    return trace_id_;
  }
  bool streaming() const override {
    return true;
  }

  void send_chunk(json::value chunk) override {
    {
      std::lock_guard guard{mx_};
      chunks_.push_back(std::move(chunk));
    }
    cv_.notify_all();
    if (throw_on_chunk)
      throw std::runtime_error("send_chunk failed on purpose");
  }

  input_stream* inputs() override {
    return inputs_ ? &*inputs_ : nullptr;
  }

  const cancel_signal& cancel() const override {
    return cancel_;
  }

  /// Waits until `n` chunks arrived; false after `patience`.
  bool wait_chunks(std::size_t n) {
    std::unique_lock guard{mx_};
    return cv_.wait_for(guard, patience, [&] { return chunks_.size() >= n; });
  }

  /// The chunks so far as compact JSON, comma-separated.
  std::string chunks_text() {
    std::lock_guard guard{mx_};
    std::string out;
    for (auto& c : chunks_)
      out += (out.empty() ? "" : ",") + json::serialize(c);
    return out;
  }

  /// The pid a child reported as its first chunk (a number).
  pid_t first_chunk_pid() {
    std::lock_guard guard{mx_};
    return chunks_.empty() || !chunks_.front().is_int64()
             ? 0
             : static_cast<pid_t>(chunks_.front().as_int64());
  }

  pa_cancel cancel_;
  json::value init_;
  bool throw_on_chunk = false;

private:
  json::value input_;
  json::value null_;
  std::string trace_id_ = "trace-1";
  std::optional<pa_inputs> inputs_;
  std::mutex mx_;
  std::condition_variable cv_;
  std::vector<json::value> chunks_;
};

// -- running handlers ---------------------------------------------------------

struct outcome {
  std::optional<json::value> result;
  bool action_failed = false;
  bool program_failed = false; // thrown as program_error
  int code = -1;
  std::string message;
  std::string stderr_tail;
  std::string other; // what() of any other exception
};

inline outcome run(const action_descriptor& action, action_context& ctx) {
  outcome out;
  try {
    out.result = action.handler(ctx);
  } catch (const program_error& e) {
    out.action_failed = out.program_failed = true;
    out.code = static_cast<int>(e.code());
    out.message = e.what();
    out.stderr_tail = e.stderr_tail();
  } catch (const action_error& e) {
    out.action_failed = true;
    out.code = static_cast<int>(e.code());
    out.message = e.what();
  } catch (const std::exception& e) {
    out.other = e.what();
  }
  return out;
}

inline std::future<outcome> run_async(const action_descriptor& action, action_context& ctx) {
  return std::async(std::launch::async, [&action, &ctx] { return run(action, ctx); });
}

inline std::int64_t ms_since(clock_type::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count();
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

inline program_spec sh(std::string name, std::string script) {
  program_spec spec;
  spec.name = std::move(name);
  spec.command = {"/bin/sh", "-c", std::move(script)};
  return spec;
}

inline std::string examples_dir() {
  return (std::filesystem::path{ACTOR_HOST_SOURCE_DIR} / "examples").lexically_normal().string();
}

/// True once `pid` is gone (exited and reaped, or a zombie of another
/// parent): a pidfd of any process polls readable when it exits.
inline bool exits_within(pid_t pid, std::chrono::milliseconds limit) {
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0)
    return errno == ESRCH;
  pollfd p{fd, POLLIN, 0};
  bool gone = ::poll(&p, 1, static_cast<int>(limit.count())) == 1;
  ::close(fd);
  return gone;
}

inline bool reaped(pid_t pid) {
  return pid > 0 && ::kill(pid, 0) == -1 && errno == ESRCH;
}

struct temp_dir {
  temp_dir() {
    char tmpl[] = "/tmp/program_action_test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string read(const std::string& name) const {
    std::ifstream in{path + "/" + name};
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string path;
};


} // namespace program_action_testing
