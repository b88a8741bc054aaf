#include "actions/program_run.hpp"

#include "proc/spawn.hpp"

#include <boost/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace actor_host::actions {

namespace {

namespace json = boost::json;
using proc::unique_fd;

constexpr std::size_t stderr_tail_bytes = 8 * 1024;
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
  throw program_error(wire::status_code::internal, std::move(what), {});
}

[[noreturn]] void throw_errno(const char* what) {
  throw_internal(std::string{what} + ": " + std::strerror(errno));
}

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
      throw action_error(wire::status_code::invalid_argument,
                         "init of program action " + spec.name + " is too large ("
                           + std::to_string(init.size()) + " bytes, limit "
                           + std::to_string(max_init_bytes) + ")");
    env["ACTOR_HOST_INIT"] = std::move(init);
  }
  return env;
}

/// write() without risking the process: SIGPIPE is blocked for this thread
/// during the call and a SIGPIPE it raised is consumed, so this is safe even
/// where main did not ignore SIGPIPE (as in unit tests).
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
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

} // namespace

program_error timed_out_error(const program_spec& spec, std::string stderr_tail) {
  return program_error(wire::status_code::deadline_exceeded,
                       "program action " + spec.name + " timed out after "
                         + std::to_string(spec.timeout.count()) + " ms",
                       std::move(stderr_tail));
}

pid_t last_program_pid() {
  return last_pid.load();
}

program_run::program_run(const program_spec& spec, action_context& ctx, run_deadline deadline)
  : spec_(spec),
    ctx_(ctx),
    deadline_(deadline),
    io_buf_(64 * 1024),
    stdout_protocol_(spec.name, [&ctx](json::value chunk) { ctx.send_chunk(std::move(chunk)); }) {
}

program_run::~program_run() {
  if (pid_ > 0 && !reaped_) {
    signal_group(SIGKILL);
    reap();
  }
}

json::value program_run::run() {
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
      ctx_.throw_if_cancelled();
    }
    if (passed(deadline_)) {
      terminate();
      throw timed_out_error(spec_, stderr_tail());
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
  if (auto& failure = stdout_protocol_.failure())
    throw program_error(failure->code, failure->message, std::move(tail));
  if (WIFSIGNALED(wait_status_) || WEXITSTATUS(wait_status_) != 0)
    throw program_error(wire::status_code::internal,
                        "program " + proc::describe_wait_status(wait_status_), std::move(tail));
  auto& result = stdout_protocol_.result();
  return result ? std::move(*result) : json::value{};
}

// -- start --------------------------------------------------------------------

void program_run::spawn() {
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

// -- I/O ----------------------------------------------------------------------

/// One poll() round over the pipes and the exit fd, plus (when
/// `watch_caller`) the cancel fd and the bidi input fd.
void program_run::step(int timeout_ms, bool watch_caller) {
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

/// Reads what the leader left in the pipes after it exited. Stops at EOF or
/// when the pipe is empty: an escaped grandchild may still hold the write
/// end, so the reads are bounded too.
void program_run::drain_after_exit() {
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
  bool was_failed = stdout_protocol_.failed();
  stdout_protocol_.finish();
  after_stdout(was_failed);
}

/// One read(); false when nothing more is available now.
bool program_run::read_stdout() {
  auto n = read_some(stdout_);
  if (n <= 0)
    return false;
  bool was_failed = stdout_protocol_.failed();
  stdout_protocol_.feed({io_buf_.data(), static_cast<std::size_t>(n)});
  after_stdout(was_failed);
  return true;
}

/// A failure decided by stdout ends the input; output after it is ignored
/// and the program gets kill_grace to exit on its own before it is stopped.
void program_run::after_stdout(bool was_failed) {
  if (was_failed || !stdout_protocol_.failed())
    return;
  close_stdin();
  wind_down_ = std::chrono::steady_clock::now() + spec_.kill_grace;
}

bool program_run::read_stderr() {
  auto n = read_some(stderr_);
  if (n <= 0)
    return false;
  stderr_buf_.append(io_buf_.data(), static_cast<std::size_t>(n));
  if (stderr_buf_.size() > 2 * stderr_tail_bytes)
    stderr_buf_.erase(0, stderr_buf_.size() - stderr_tail_bytes);
  return true;
}

/// Bytes read into io_buf_; 0 when none are available now; -1 at EOF or on
/// error, with `fd` closed.
ssize_t program_run::read_some(unique_fd& fd) {
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

std::size_t program_run::pending_stdin() const {
  return stdin_buf_.size() - stdin_off_;
}

/// Moves queued bidi input chunks into the stdin buffer, one line each.
void program_run::pull_input() {
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
void program_run::flush_stdin() {
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

void program_run::close_stdin() {
  stdin_.reset();
  stdin_buf_.clear();
  stdin_off_ = 0;
  input_ended_ = true;
}

// -- stop and reap ------------------------------------------------------------

void program_run::signal_group(int sig) {
  // While the leader is unreaped its pid (and so the group id) cannot be
  // reused: signalling the group never hits a stranger.
  proc::signal_group(pid_, sig);
}

/// SIGTERM, up to kill_grace to exit, then SIGKILL; always reaps.
void program_run::terminate() {
  close_stdin();
  stdout_protocol_.ignore_rest();
  if (!exited_) {
    signal_group(SIGTERM);
    run_deadline until = std::chrono::steady_clock::now() + spec_.kill_grace;
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

bool program_run::exited_nowait() {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD;
  return info.si_pid != 0;
}

/// Sweeps the group (stragglers the program left behind) and reaps the
/// leader. Blocks until the leader is gone.
void program_run::reap() {
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
std::string program_run::stderr_tail() const {
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

} // namespace actor_host::actions
