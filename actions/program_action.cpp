#include "actions/program_action.hpp"

#include "proc/spawn.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace actor_host::actions {

namespace {

namespace json = boost::json;
using proc::unique_fd;
using clock_type = std::chrono::steady_clock;
using time_point = clock_type::time_point;

constexpr std::size_t stderr_tail_bytes = 8 * 1024;
// A stdout line longer than this is a protocol violation rather than a
// reason to grow without bound.
constexpr std::size_t max_line_bytes = 64 * 1024 * 1024;
// Bidi input is pulled from the input stream only while less than this is
// waiting for the child to read it: the rest stays queued upstream.
constexpr std::size_t max_pending_stdin = 1024 * 1024;
// ACTOR_HOST_INIT must fit in one environment string (the kernel limit is
// 128 KiB per string).
constexpr std::size_t max_init_bytes = 100 * 1024;
// Only used when pidfd_open is unavailable (kernels before 5.3): how often
// the loop checks whether the child has exited.
constexpr int exit_check_ms = 50;
// Only used for an input stream without a pollable fd: how often the loop
// looks for new input chunks.
constexpr int input_check_ms = 10;

std::atomic<pid_t> last_pid{0};

[[noreturn]] void throw_internal(std::string what) {
  throw program_error(registry::status_code::internal, std::move(what), {});
}

[[noreturn]] void throw_errno(const char* what) {
  throw_internal(std::string{what} + ": " + std::strerror(errno));
}

/// Milliseconds until `deadline` for poll(), rounded up; -1 without one.
int poll_timeout(std::optional<time_point> deadline) {
  if (!deadline)
    return -1;
  auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - clock_type::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT_MAX));
}

bool passed(std::optional<time_point> deadline) {
  return deadline && clock_type::now() >= *deadline;
}

[[noreturn]] void throw_cancelled() {
  throw action_error(registry::status_code::cancelled, "Action was cancelled");
}

[[noreturn]] void throw_timed_out(const program_spec& spec, std::string stderr_tail = {}) {
  throw program_error(registry::status_code::deadline_exceeded,
                      "program action " + spec.name + " timed out after "
                        + std::to_string(spec.timeout.count()) + " ms",
                      std::move(stderr_tail));
}

// -- concurrency limit --------------------------------------------------------

/// A counting semaphore on an eventfd in semaphore mode: a read takes one
/// slot, a write returns one. Being a file descriptor, a waiter can poll it
/// together with the cancel fd and the deadline instead of blocking blind.
class slot_pool {
public:
  explicit slot_pool(std::size_t slots)
    : fd_(::eventfd(static_cast<unsigned>(std::min<std::size_t>(slots, UINT_MAX)),
                    EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!fd_)
      throw std::system_error(errno, std::generic_category(), "eventfd");
  }

  int fd() const noexcept {
    return fd_.get();
  }

  bool try_acquire() noexcept {
    std::uint64_t one = 0;
    return ::read(fd_.get(), &one, sizeof one) == sizeof one;
  }

  void release() noexcept {
    std::uint64_t one = 1;
    // Cannot fail: the counter never exceeds the slot count.
    [[maybe_unused]] auto n = ::write(fd_.get(), &one, sizeof one);
  }

private:
  unique_fd fd_;
};

/// A taken slot; returned when the run ends, however it ends.
class slot_lease {
public:
  slot_lease() = default;
  explicit slot_lease(std::shared_ptr<slot_pool> pool) : pool_(std::move(pool)) {
  }
  slot_lease(slot_lease&&) = default;
  slot_lease& operator=(slot_lease&&) = default;
  ~slot_lease() {
    if (pool_)
      pool_->release();
  }

private:
  std::shared_ptr<slot_pool> pool_;
};

slot_lease acquire_slot(const std::shared_ptr<slot_pool>& pool, action_context& ctx,
                        std::optional<time_point> deadline, const program_spec& spec) {
  for (;;) {
    // Several waiters wake on one released slot; the losers' reads fail
    // with EAGAIN and they go back to poll().
    if (pool->try_acquire())
      return slot_lease{pool};
    pollfd fds[] = {{pool->fd(), POLLIN, 0}, {ctx.cancel().fd(), POLLIN, 0}};
    int n = ::poll(fds, 2, poll_timeout(deadline));
    if (n < 0 && errno != EINTR)
      throw_errno("poll");
    if (ctx.cancel().cancelled())
      throw_cancelled();
    if (passed(deadline))
      throw_timed_out(spec);
  }
}

// -- process start ------------------------------------------------------------

proc::environment child_environment(const program_spec& spec, action_context& ctx) {
  auto env = proc::inherited_environment();
  for (auto& [k, v] : spec.env)
    env[k] = v;
  env["ACTOR_HOST_ACTION"] = spec.name;
  env["ACTOR_HOST_TRACE_ID"] = ctx.trace_id();
  env["ACTOR_HOST_STREAMING"] = ctx.streaming() ? "1" : "0";
  env.erase("ACTOR_HOST_INIT");
  if (spec.bidi && !ctx.init().is_null()) {
    auto init = json::serialize(ctx.init());
    if (init.size() > max_init_bytes)
      throw action_error(registry::status_code::invalid_argument,
                         "init of program action " + spec.name + " is too large ("
                           + std::to_string(init.size()) + " bytes, limit "
                           + std::to_string(max_init_bytes) + ")");
    env["ACTOR_HOST_INIT"] = std::move(init);
  }
  return env;
}

std::optional<registry::status_code> parse_status(const json::value& v) {
  constexpr int last = static_cast<int>(registry::status_code::unauthenticated);
  if (auto* s = v.if_string()) {
    // OK is no failure status.
    if (auto code = registry::status_from_name(*s); code && *code != registry::status_code::ok)
      return code;
  } else if (auto n = v.if_int64(); n && *n >= 1 && *n <= last) {
    return static_cast<registry::status_code>(*n);
  }
  return std::nullopt;
}

// -- one run ------------------------------------------------------------------

/// One child process and the pipes to it. The destructor is the guard that
/// keeps the promise "the child never outlives the handler": whatever way
/// the run ends, the process group is SIGKILLed and the child reaped.
class program_run {
public:
  program_run(const program_spec& spec, action_context& ctx, std::optional<time_point> deadline)
    : spec_(spec), ctx_(ctx), deadline_(deadline), io_buf_(64 * 1024) {
  }

  program_run(const program_run&) = delete;
  program_run& operator=(const program_run&) = delete;

  ~program_run() {
    if (pid_ > 0 && !reaped_) {
      signal_group(SIGKILL);
      reap();
    }
  }

  json::value run() {
    spawn();
    if (!spec_.bidi) {
      stdin_buf_ = json::serialize(ctx_.input());
      stdin_buf_ += '\n';
      input_ended_ = true;
    } else if (ctx_.inputs() == nullptr) {
      input_ended_ = true;
    }
    flush_stdin();
    while (!exited_) {
      // poll() timeouts: -1 means none.
      int a = poll_timeout(deadline_);
      int b = poll_timeout(wind_down_);
      step(a < 0 ? b : b < 0 ? a : std::min(a, b), true);
      if (exited_)
        break;
      if (ctx_.cancel().cancelled()) {
        terminate();
        throw_cancelled();
      }
      if (passed(deadline_)) {
        terminate();
        throw_timed_out(spec_, stderr_tail());
      }
      if (passed(wind_down_)) {
        // The program reported a failure but did not exit.
        terminate();
        break;
      }
    }
    drain_after_exit();
    reap();
    auto tail = stderr_tail();
    if (failure_)
      throw program_error(failure_->first, std::move(failure_->second), std::move(tail));
    if (WIFSIGNALED(wait_status_) || WEXITSTATUS(wait_status_) != 0)
      throw program_error(registry::status_code::internal,
                          "program " + proc::describe_wait_status(wait_status_), std::move(tail));
    return result_ ? std::move(*result_) : json::value{};
  }

private:
  // -- start ----------------------------------------------------------------

  void spawn() {
    proc::child_process child;
    try {
      child = proc::spawn({spec_.command, child_environment(spec_, ctx_), spec_.cwd});
    } catch (const proc::spawn_error& e) {
      throw_internal(e.what());
    }
    pid_ = child.pid;
    last_pid.store(pid_);
    spdlog::debug("program action {}: started pid {}", spec_.name, pid_);
    pidfd_ = std::move(child.pidfd);
    stdin_ = std::move(child.stdin_w);
    stdout_ = std::move(child.stdout_r);
    stderr_ = std::move(child.stderr_r);
  }

  // -- I/O ------------------------------------------------------------------

  /// One poll() round over the pipes and the exit fd, plus (when
  /// `watch_caller`) the cancel fd and the bidi input fd.
  void step(int timeout_ms, bool watch_caller) {
    pollfd fds[6];
    nfds_t n = 0;
    auto add = [&](int fd, short events) {
      fds[n] = pollfd{fd, events, 0};
      return static_cast<int>(n++);
    };
    int out_i = stdout_ ? add(stdout_.get(), POLLIN) : -1;
    int err_i = stderr_ ? add(stderr_.get(), POLLIN) : -1;
    int pid_i = pidfd_ ? add(pidfd_.get(), POLLIN) : -1;
    int in_i = -1;
    int input_i = -1;
    bool poll_input = false; // input stream without fd: look every round
    auto cap_timeout = [&](int cap) {
      if (timeout_ms < 0 || timeout_ms > cap)
        timeout_ms = cap;
    };
    if (watch_caller) {
      add(ctx_.cancel().fd(), POLLIN);
      if (stdin_ && pending_stdin() > 0)
        in_i = add(stdin_.get(), POLLOUT);
      if (stdin_ && !input_ended_ && pending_stdin() < max_pending_stdin) {
        if (int fd = ctx_.inputs()->fd(); fd >= 0) {
          input_i = add(fd, POLLIN);
        } else {
          poll_input = true;
          cap_timeout(input_check_ms);
        }
      }
    }
    if (!pidfd_)
      cap_timeout(exit_check_ms);
    if (::poll(fds, n, timeout_ms) < 0) {
      if (errno == EINTR)
        return;
      throw_errno("poll");
    }
    auto ready = [&](int i) { return i >= 0 && fds[i].revents != 0; };
    if (ready(out_i))
      read_stdout();
    if (ready(err_i))
      read_stderr();
    if (ready(input_i) || poll_input)
      pull_input();
    // Also after pulling input: the end of input may have to close stdin.
    if (ready(in_i) || ready(input_i) || poll_input)
      flush_stdin();
    if (pidfd_ ? ready(pid_i) : exited_nowait())
      exited_ = true;
  }

  /// Reads what the leader left in the pipes after it exited. Stops at EOF
  /// or when the pipe is empty: an escaped grandchild may still hold the
  /// write end, so the reads are bounded too.
  void drain_after_exit() {
    // Stragglers die first so that they cannot keep the pipes busy. The
    // leader is still unreaped, so the group id is still ours.
    if (!reaped_)
      signal_group(SIGKILL);
    constexpr int max_reads = 1024;
    for (int i = 0; i < max_reads && stdout_ && read_stdout(); ++i) {
      // nop
    }
    for (int i = 0; i < max_reads && stderr_ && read_stderr(); ++i) {
      // nop
    }
    // The last line may lack its newline.
    if (!stdout_buf_.empty() && !discard_stdout_) {
      auto line = std::move(stdout_buf_);
      stdout_buf_.clear();
      on_line(line);
    }
  }

  /// One read(); false when nothing more is available now.
  bool read_stdout() {
    auto n = read_some(stdout_);
    if (n <= 0 || discard_stdout_)
      return n > 0;
    std::size_t old_size = stdout_buf_.size();
    stdout_buf_.append(io_buf_.data(), static_cast<std::size_t>(n));
    // Only the new bytes can hold the next newline.
    std::size_t begin = 0;
    for (auto nl = stdout_buf_.find('\n', old_size); nl != std::string::npos;
         nl = stdout_buf_.find('\n', begin)) {
      on_line(std::string_view{stdout_buf_}.substr(begin, nl - begin));
      begin = nl + 1;
      if (discard_stdout_)
        break;
    }
    stdout_buf_.erase(0, begin);
    if (stdout_buf_.size() > max_line_bytes) {
      fail(registry::status_code::internal, "program wrote a stdout line longer than "
                                    + std::to_string(max_line_bytes) + " bytes");
      stdout_buf_.clear();
    }
    return true;
  }

  bool read_stderr() {
    auto n = read_some(stderr_);
    if (n <= 0)
      return false;
    stderr_buf_.append(io_buf_.data(), static_cast<std::size_t>(n));
    if (stderr_buf_.size() > 2 * stderr_tail_bytes)
      stderr_buf_.erase(0, stderr_buf_.size() - stderr_tail_bytes);
    return true;
  }

  /// Bytes read into io_buf_; 0 when none are available now; -1 at EOF or
  /// on error, with `fd` closed.
  ssize_t read_some(unique_fd& fd) {
    for (;;) {
      auto n = ::read(fd.get(), io_buf_.data(), io_buf_.size());
      if (n > 0)
        return n;
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
      fd.reset();
      return -1;
    }
  }

  std::size_t pending_stdin() const {
    return stdin_buf_.size() - stdin_off_;
  }

  /// Moves queued bidi input chunks into the stdin buffer, one line each.
  void pull_input() {
    auto* inputs = ctx_.inputs();
    while (!input_ended_ && pending_stdin() < max_pending_stdin) {
      bool ended = false;
      auto chunk = inputs->try_next(ended);
      if (chunk) {
        stdin_buf_ += json::serialize(*chunk);
        stdin_buf_ += '\n';
      } else {
        input_ended_ = ended;
        break;
      }
    }
  }

  /// Writes what the pipe takes; closes stdin once the input has ended and
  /// everything is written, which is the child's end-of-input.
  void flush_stdin() {
    while (stdin_ && pending_stdin() > 0) {
      auto n = write_no_sigpipe(stdin_.get(), stdin_buf_.data() + stdin_off_, pending_stdin());
      if (n > 0) {
        stdin_off_ += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;
      // EPIPE: the child closed its stdin and reads no more input. That is
      // its right; only its exit status and output matter.
      close_stdin();
      return;
    }
    if (stdin_off_ == stdin_buf_.size()) {
      stdin_buf_.clear();
      stdin_off_ = 0;
    }
    if (stdin_ && input_ended_ && pending_stdin() == 0)
      stdin_.reset();
  }

  /// write() without risking the process: SIGPIPE is blocked for this
  /// thread during the call and a SIGPIPE it raised is consumed, so this is
  /// safe even where main did not ignore SIGPIPE (as in unit tests).
  static ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
    sigset_t pipe_set, old;
    ::sigemptyset(&pipe_set);
    ::sigaddset(&pipe_set, SIGPIPE);
    sigset_t pending;
    ::sigpending(&pending);
    bool was_pending = ::sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    auto n = ::write(fd, data, size);
    int saved = errno;
    if (n < 0 && saved == EPIPE && !was_pending) {
      timespec zero{0, 0};
      while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
        // nop
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    errno = saved;
    return n;
  }

  void close_stdin() {
    stdin_.reset();
    stdin_buf_.clear();
    stdin_off_ = 0;
    input_ended_ = true;
  }

  // -- protocol -------------------------------------------------------------

  void on_line(std::string_view line) {
    ++line_no_;
    if (failure_)
      return;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos)
      return;
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    auto* obj = ec ? nullptr : v.if_object();
    if (obj == nullptr || obj->size() != 1) {
      violation(line);
      return;
    }
    auto& [key, value] = *obj->begin();
    if (key == "chunk") {
      ctx_.send_chunk(std::move(value));
    } else if (key == "result") {
      result_ = std::move(value);
    } else if (key == "error") {
      on_error_line(value);
    } else {
      violation(line);
    }
  }

  void on_error_line(const json::value& error) {
    auto code = registry::status_code::internal;
    std::string message = "program action " + spec_.name + " failed";
    if (auto* obj = error.if_object()) {
      if (auto* status = obj->if_contains("status"))
        code = parse_status(*status).value_or(registry::status_code::unknown);
      if (auto* msg = obj->if_contains("message"); msg && msg->is_string())
        message = std::string{msg->get_string()};
    } else if (auto* s = error.if_string()) {
      message = std::string{*s};
    }
    fail(code, std::move(message));
  }

  void violation(std::string_view line) {
    constexpr std::size_t shown = 200;
    std::string text{line.substr(0, shown)};
    if (line.size() > shown)
      text += "...";
    spdlog::warn("program action {}: stdout line {} is not a protocol message: {}", spec_.name,
                 line_no_, text);
    fail(registry::status_code::internal, "program wrote stdout line " + std::to_string(line_no_)
                                  + " that is not a protocol message (log to stderr): " + text);
  }

  /// Decides the outcome. Output after this is ignored and the program gets
  /// kill_grace to exit on its own before it is stopped.
  void fail(registry::status_code code, std::string message) {
    if (failure_)
      return;
    failure_.emplace(code, std::move(message));
    discard_stdout_ = true;
    stdout_buf_.clear();
    close_stdin();
    wind_down_ = clock_type::now() + spec_.kill_grace;
  }

  // -- stop and reap --------------------------------------------------------

  void signal_group(int sig) {
    // While the leader is unreaped its pid (and so the group id) cannot be
    // reused: signalling the group never hits a stranger.
    proc::signal_group(pid_, sig);
  }

  /// SIGTERM, up to kill_grace to exit, then SIGKILL; always reaps.
  void terminate() {
    close_stdin();
    discard_stdout_ = true;
    if (!exited_) {
      signal_group(SIGTERM);
      auto until = clock_type::now() + spec_.kill_grace;
      // Keep draining the pipes: a program that writes while it shuts down
      // must not block on a full pipe during its grace period.
      while (!exited_ && !passed(until))
        step(poll_timeout(until), false);
      if (!exited_) {
        spdlog::debug("program action {}: pid {} ignored SIGTERM for {} ms, sending SIGKILL",
                      spec_.name, pid_, spec_.kill_grace.count());
        signal_group(SIGKILL);
      }
    }
    reap();
  }

  bool exited_nowait() {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
      return errno == ECHILD;
    return info.si_pid != 0;
  }

  /// Sweeps the group (stragglers the program left behind) and reaps the
  /// leader. Blocks until the leader is gone.
  void reap() {
    if (reaped_)
      return;
    signal_group(SIGKILL);
    for (;;) {
      auto r = ::waitpid(pid_, &wait_status_, 0);
      if (r == pid_ || (r < 0 && errno != EINTR))
        break;
    }
    reaped_ = true;
    exited_ = true;
    pidfd_.reset();
  }

  /// The last stderr_tail_bytes of stderr, starting at a UTF-8 boundary.
  std::string stderr_tail() const {
    std::string_view tail = stderr_buf_;
    if (tail.size() > stderr_tail_bytes)
      tail.remove_prefix(tail.size() - stderr_tail_bytes);
    std::size_t skip = 0;
    auto continuation = [&](std::size_t i) {
      return (static_cast<unsigned char>(tail[i]) & 0xC0) == 0x80;
    };
    while (skip < tail.size() && skip < 3 && continuation(skip))
      ++skip;
    return std::string{tail.substr(skip)};
  }

  const program_spec& spec_;
  action_context& ctx_;
  std::optional<time_point> deadline_;
  // Set once the outcome is a failure: when the program must have exited.
  std::optional<time_point> wind_down_;
  std::vector<char> io_buf_;
  pid_t pid_ = 0;
  int wait_status_ = 0;
  bool exited_ = false;
  bool reaped_ = false;
  unique_fd pidfd_;
  unique_fd stdin_;
  unique_fd stdout_;
  unique_fd stderr_;
  std::string stdin_buf_;
  std::size_t stdin_off_ = 0;
  bool input_ended_ = false;
  std::string stdout_buf_;
  bool discard_stdout_ = false;
  std::size_t line_no_ = 0;
  std::string stderr_buf_;
  std::optional<json::value> result_;
  std::optional<std::pair<registry::status_code, std::string>> failure_;
};

} // namespace

action_descriptor make_program_action(program_spec spec) {
  action_descriptor d;
  d.type = spec.type.empty() ? "flow" : spec.type;
  d.name = spec.name;
  d.description = spec.description;
  d.input_schema = spec.input_schema;
  d.output_schema = spec.output_schema;
  d.stream_schema = spec.stream_schema;
  d.init_schema = spec.init_schema;
  d.metadata = spec.metadata;
  if (spec.bidi) {
    // Mark it the way Genkit marks its bidi actions, so clients can tell.
    boost::json::error_code ec;
    auto md = d.metadata.empty() ? boost::json::value(boost::json::object{})
                                 : boost::json::parse(d.metadata, ec);
    if (!ec && md.is_object() && !md.as_object().contains("bidi")) {
      md.as_object()["bidi"] = true;
      d.metadata = boost::json::serialize(md);
    }
  }
  // Shared by every copy of the handler, so the limit is per action.
  std::shared_ptr<slot_pool> slots;
  if (spec.max_concurrency > 0)
    slots = std::make_shared<slot_pool>(spec.max_concurrency);
  auto shared_spec = std::make_shared<const program_spec>(std::move(spec));
  d.handler = [spec = std::move(shared_spec), slots](action_context& ctx) -> json::value {
    ctx.throw_if_cancelled();
    std::optional<time_point> deadline;
    if (spec->timeout.count() > 0)
      deadline = clock_type::now() + spec->timeout;
    slot_lease lease;
    if (slots)
      lease = acquire_slot(slots, ctx, deadline, *spec);
    program_run run{*spec, ctx, deadline};
    return run.run();
  };
  return d;
}

pid_t last_program_pid() {
  return last_pid.load();
}

} // namespace actor_host::actions
