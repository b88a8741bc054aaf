#include "proc/spawn.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace actor_host::proc {

namespace {

/// Where exec_child failed, reported through the report pipe.
enum child_stage : int { stage_prctl = 1, stage_fds, stage_chdir, stage_exec };

const char* stage_text(int stage) {
  switch (stage) {
    case stage_prctl:
      return "prctl";
    case stage_fds:
      return "setting up stdio";
    case stage_chdir:
      return "chdir";
    default:
      return "execve";
  }
}

/// What the child needs, all built before fork(): between fork() and
/// execve() only async-signal-safe calls are allowed (another thread may have
/// held the malloc lock at fork time).
struct child_setup {
  const char* exe;
  char* const* argv;
  char* const* envp;
  const char* cwd; // nullptr = keep
  pid_t parent;
  int stdin_r;
  int stdout_w;
  int stderr_w;
  int report_w;
};

[[noreturn]] void exec_child(const child_setup& s) {
  auto fail = [&](int stage) {
    int msg[2] = {stage, errno};
    [[maybe_unused]] auto n = ::write(s.report_w, msg, sizeof msg);
    ::_exit(127);
  };
  // Die with the parent even if it is SIGKILLed. The death signal is tied
  // to the forking thread: callers fork from threads that outlive the child.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
    fail(stage_prctl);
  // The parent may have died before prctl took effect.
  if (::getppid() != s.parent)
    ::_exit(127);
  // Own process group, so that signals reach whatever the program spawns.
  ::setpgid(0, 0);
  // Move every pipe end above 2 first so that dup2 onto 0..2 cannot clobber
  // one of them (the parent may run with a closed stdin).
  int in = ::fcntl(s.stdin_r, F_DUPFD_CLOEXEC, 3);
  int out = ::fcntl(s.stdout_w, F_DUPFD_CLOEXEC, 3);
  int err = ::fcntl(s.stderr_w, F_DUPFD_CLOEXEC, 3);
  int report = ::fcntl(s.report_w, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0 || err < 0 || report < 0)
    fail(stage_fds);
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
    fail(stage_fds);
  if (report != 3) {
    if (::dup3(report, 3, O_CLOEXEC) < 0)
      fail(stage_fds);
  }
  // Close everything else the parent has open (sockets, other children's
  // pipes); fd 3 is close-on-exec and goes away with execve.
  ::close_range(4, ~0U, 0);
  auto fail_report = [](int stage) {
    int msg[2] = {stage, errno};
    [[maybe_unused]] auto n = ::write(3, msg, sizeof msg);
    ::_exit(127);
  };
  if (s.cwd != nullptr && ::chdir(s.cwd) != 0)
    fail_report(stage_chdir);
  // Ignored signals survive execve (the parent ignores SIGPIPE); programs
  // expect default dispositions and an empty mask.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig)
    ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(s.exe, s.argv, s.envp);
  fail_report(stage_exec);
  ::_exit(127); // unreachable
}

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw spawn_error(what + ": " + std::strerror(errno));
}

std::pair<unique_fd, unique_fd> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw_errno("pipe2");
  return {unique_fd{fds[0]}, unique_fd{fds[1]}};
}

void reap_blocking(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    // retry
  }
}

} // namespace

int open_pidfd(pid_t pid) {
  // Through syscall(): glibc 2.36's <sys/pidfd.h> lacks C linkage for C++.
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

std::optional<std::string> find_program(const std::string& name, const std::string& path_var,
                                        const std::string& cwd) {
  if (name.find('/') != std::string::npos)
    return name;
  std::string_view path = path_var;
  for (;;) {
    auto colon = path.find(':');
    std::string dir{path.substr(0, colon)};
    if (dir.empty())
      dir = ".";
    auto candidate = dir + "/" + name;
    // A relative PATH entry is relative to the child's working directory.
    auto probe = candidate.front() != '/' && !cwd.empty() ? cwd + "/" + candidate : candidate;
    if (is_executable_file(probe))
      return candidate;
    if (colon == std::string_view::npos)
      return std::nullopt;
    path.remove_prefix(colon + 1);
  }
}

environment inherited_environment() {
  environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry{*e};
    auto eq = entry.find('=');
    if (eq != std::string_view::npos && eq > 0)
      env.emplace(std::string{entry.substr(0, eq)}, std::string{entry.substr(eq + 1)});
  }
  return env;
}

const std::vector<std::string>& default_inherited_names() {
  static const std::vector<std::string> names{
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TMPDIR",
    "TERM", "SSL_CERT_FILE", "SSL_CERT_DIR", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS",
    "TSAN_OPTIONS", "MSAN_OPTIONS"};
  return names;
}

bool is_secret_name(std::string_view name) {
  return name.starts_with("ACTOR_HOST_AUTH_TOKEN");
}

namespace {

bool matches(std::string_view pattern, std::string_view name) {
  if (pattern.ends_with('*'))
    return name.starts_with(pattern.substr(0, pattern.size() - 1));
  return pattern == name;
}

bool kept(const std::vector<std::string>& patterns, std::string_view name, bool secret) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return secret ? p == name : matches(p, name);
  });
}

} // namespace

environment filter_environment(const environment& parent, const inherit_policy& policy) {
  environment out;
  for (auto& [name, value] : parent) {
    bool secret = is_secret_name(name);
    if ((policy.all && !secret) || kept(default_inherited_names(), name, secret)
        || kept(policy.names, name, secret))
      out.emplace(name, value);
  }
  return out;
}

void signal_group(pid_t pid, int sig) {
  if (::kill(-pid, sig) != 0)
    ::kill(pid, sig);
}

std::string describe_wait_status(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    auto* abbrev = ::sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig)
           + (abbrev ? std::string{" (SIG"} + abbrev + ")" : std::string{});
  }
  return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
}

child_process spawn(const spawn_request& req) {
  if (req.argv.empty() || req.argv.front().empty())
    throw spawn_error("cannot start a program without a command");
  const auto& name = req.argv.front();
  auto path_var = req.env.count("PATH") ? req.env.at("PATH")
                                        : std::string{"/usr/local/bin:/usr/bin:/bin"};
  auto exe = find_program(name, path_var, req.cwd);
  if (!exe)
    throw spawn_error("cannot start program '" + name + "': not found in PATH");
  std::vector<std::string> env_strings;
  env_strings.reserve(req.env.size());
  for (auto& [k, v] : req.env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = req.argv;
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto [in_r, in_w] = make_pipe();
  auto [out_r, out_w] = make_pipe();
  auto [err_r, err_w] = make_pipe();
  auto [report_r, report_w] = make_pipe();
  child_setup setup{exe->c_str(),
                    argv.data(),
                    envp.data(),
                    req.cwd.empty() ? nullptr : req.cwd.c_str(),
                    ::getpid(),
                    in_r.get(),
                    out_w.get(),
                    err_w.get(),
                    report_w.get()};
  // Block all signals across fork() so the child cannot run one of the
  // parent's handlers before it has reset them.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  if (pid == 0)
    exec_child(setup);
  int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    errno = fork_errno;
    throw_errno("fork");
  }
  // The child does this too; doing it here as well means the group exists
  // before the first signal, whichever process runs first.
  ::setpgid(pid, pid);
  in_r.reset();
  out_w.reset();
  err_w.reset();
  report_w.reset();
  child_process child;
  child.pid = pid;
  child.pidfd.reset(open_pidfd(pid));
  // The report pipe closes on a successful execve, or carries why not.
  int msg[2] = {0, 0};
  ssize_t got = 0;
  while (got < static_cast<ssize_t>(sizeof msg)) {
    auto n = ::read(report_r.get(), reinterpret_cast<char*>(msg) + got, sizeof msg - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += n;
  }
  if (got == static_cast<ssize_t>(sizeof msg)) {
    signal_group(pid, SIGKILL);
    reap_blocking(pid);
    throw spawn_error("cannot start program '" + name + "': " + stage_text(msg[0]) + ": "
                      + std::strerror(msg[1]));
  }
  for (int fd : {in_w.get(), out_r.get(), err_r.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  child.stdin_w = std::move(in_w);
  child.stdout_r = std::move(out_r);
  child.stderr_r = std::move(err_r);
  return child;
}

} // namespace actor_host::proc
