#pragma once

#include "actions/program_action.hpp"
#include "actions/program_protocol.hpp"
#include "actions/run_deadline.hpp"
#include "proc/unique_fd.hpp"

#include <boost/json/value.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include <sys/types.h>

namespace actor_host::actions {

/// The DEADLINE_EXCEEDED failure of a run that outlived spec.timeout.
program_error timed_out_error(const program_spec& spec, std::string stderr_tail = {});

/// One run of a program action: one child process and the pipes to it. It
/// feeds stdin (the input line, or the bidi input chunks), passes stdout
/// through the program_protocol, keeps the stderr tail and stops the child
/// on cancel, timeout or a decided failure.
///
/// The destructor is the guard that keeps the promise "the child never
/// outlives the handler": whatever way the run ends, the process group is
/// SIGKILLed and the child reaped.
class program_run {
public:
  program_run(const program_spec& spec, action_context& ctx, run_deadline deadline);

  program_run(const program_run&) = delete;
  program_run& operator=(const program_run&) = delete;

  ~program_run();

  /// Starts the child and runs it to the end: its result, or throws the
  /// run's action_error / program_error.
  boost::json::value run();

private:
  void spawn();

  // I/O
  void step(int timeout_ms, bool watch_caller);
  void drain_after_exit();
  bool read_stdout();
  bool read_stderr();
  ssize_t read_some(proc::unique_fd& fd);
  std::size_t pending_stdin() const;
  void pull_input();
  void flush_stdin();
  void close_stdin();
  void after_stdout(bool was_failed);

  // stop and reap
  void signal_group(int sig);
  void terminate();
  bool exited_nowait();
  void reap();
  std::string stderr_tail() const;

  const program_spec& spec_;
  action_context& ctx_;
  run_deadline deadline_;
  // Set once the outcome is a failure: when the program must have exited.
  run_deadline wind_down_;
  std::vector<char> io_buf_;
  pid_t pid_ = 0;
  int wait_status_ = 0;
  bool exited_ = false;
  bool reaped_ = false;
  proc::unique_fd pidfd_;
  proc::unique_fd stdin_;
  proc::unique_fd stdout_;
  proc::unique_fd stderr_;
  std::string stdin_buf_;
  std::size_t stdin_off_ = 0;
  bool input_ended_ = false;
  program_protocol stdout_protocol_;
  std::string stderr_buf_;
};

} // namespace actor_host::actions
