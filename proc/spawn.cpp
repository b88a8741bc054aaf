#include "proc/spawn.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
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

/// What the child needs, all built before the clone. The child shares the
/// parent's memory until its execve (CLONE_VM | CLONE_VFORK), so it must not
/// allocate, take a lock or touch the sanitizers' state: it makes raw system
/// calls only.
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

#define AH_CHILD_CODE __attribute__((no_sanitize("address", "thread", "undefined"), noinline))

/// A system call through glibc's syscall(), which no sanitizer intercepts.
/// Its errno is the parent thread's, which is suspended and reads errno only
/// after its own clone call.
AH_CHILD_CODE long raw(long nr, long a = 0, long b = 0, long c = 0, long d = 0) {
  long r = ::syscall(nr, a, b, c, d);
  return r < 0 ? -errno : r;
}

/// Reports where the start failed, through the report pipe (moved to fd 3
/// once the pipes are in place), and exits.
[[noreturn]] AH_CHILD_CODE void child_fail(int report_fd, int stage, long ret) {
  int msg[2] = {stage, static_cast<int>(-ret)};
  raw(SYS_write, report_fd, reinterpret_cast<long>(msg), sizeof msg);
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

/// The kernel's struct sigaction with SIG_DFL, no flags and an empty mask:
/// all zero, on every architecture this file builds for.
struct kernel_sigaction {
  unsigned long words[4];
};

AH_CHILD_CODE int exec_child(void* arg) {
  auto& s = *static_cast<child_setup*>(arg);
  // Die with the parent even if it is SIGKILLed. The death signal is tied
  // to the thread that cloned: callers start children from threads that
  // outlive them.
  if (long r = raw(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL); r < 0)
    child_fail(s.report_w, stage_prctl, r);
  // The parent may have died before prctl took effect.
  if (raw(SYS_getppid) != s.parent)
    ::syscall(SYS_exit_group, 127);
  // Own process group, so that signals reach whatever the program spawns.
  raw(SYS_setpgid, 0, 0);
  // Move every pipe end above 2 first so that dup2 onto 0..2 cannot clobber
  // one of them (the parent may run with a closed stdin).
  long moved[4] = {raw(SYS_fcntl, s.stdin_r, F_DUPFD_CLOEXEC, 3),
                   raw(SYS_fcntl, s.stdout_w, F_DUPFD_CLOEXEC, 3),
                   raw(SYS_fcntl, s.stderr_w, F_DUPFD_CLOEXEC, 3),
                   raw(SYS_fcntl, s.report_w, F_DUPFD_CLOEXEC, 3)};
  for (long target = 0; target < 4; ++target) {
    if (moved[target] < 0)
      child_fail(s.report_w, stage_fds, moved[target]);
  }
  for (long target = 0; target < 3; ++target) {
    if (long r = raw(SYS_dup3, moved[target], target, 0); r < 0)
      child_fail(s.report_w, stage_fds, r);
  }
  // The report pipe at 3, still close-on-exec: it closes at the execve.
  if (moved[3] != 3) {
    if (long r = raw(SYS_dup3, moved[3], 3, O_CLOEXEC); r < 0)
      child_fail(moved[3], stage_fds, r);
  }
  // Close everything else the parent has open (sockets, other children's
  // pipes).
  raw(SYS_close_range, 4, ~0U, 0);
  if (s.cwd != nullptr) {
    if (long r = raw(SYS_chdir, reinterpret_cast<long>(s.cwd)); r < 0)
      child_fail(3, stage_chdir, r);
  }
  // Ignored signals survive execve (the parent ignores SIGPIPE); programs
  // expect default dispositions and an empty mask. SIGKILL and SIGSTOP
  // refuse, which is fine.
  kernel_sigaction dfl{};
  for (int sig = 1; sig < NSIG; ++sig)
    raw(SYS_rt_sigaction, sig, reinterpret_cast<long>(&dfl), 0, sizeof(unsigned long));
  unsigned long none = 0;
  raw(SYS_rt_sigprocmask, SIG_SETMASK, reinterpret_cast<long>(&none), 0, sizeof none);
  long r = raw(SYS_execve, reinterpret_cast<long>(s.exe), reinterpret_cast<long>(s.argv),
               reinterpret_cast<long>(s.envp));
  child_fail(3, stage_exec, r);
}

/// The stack the child runs on until its execve; the parent is suspended
/// meanwhile, so one per spawn call is enough.
class child_stack {
public:
  static constexpr std::size_t size = 64 * 1024;
  child_stack() {
    base_ = ::mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (base_ == MAP_FAILED)
      throw spawn_error(std::string{"cannot start a program: mmap: "} + std::strerror(errno));
  }
  ~child_stack() {
    ::munmap(base_, size);
  }
  child_stack(const child_stack&) = delete;
  child_stack& operator=(const child_stack&) = delete;
  void* top() const {
    return static_cast<char*>(base_) + size;
  }

private:
  void* base_;
};

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
#if !defined(__SANITIZE_THREAD__)
  child_stack stack; // before the signals are blocked: it may throw
#endif
  // Block all signals across the clone so the child cannot run one of the
  // parent's handlers before it has reset them.
  sigset_t all, old;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  // As posix_spawn does: the child borrows the parent's memory instead of
  // copying its page tables, and this thread waits only until the child's
  // execve (or its exit). A fork() of a manager with a large heap kept the
  // calling thread, an I/O thread, for milliseconds.
#if defined(__SANITIZE_THREAD__)
  // TSan's clone interceptor resets its own state in the child, which here
  // is the parent's memory: the TSan tree forks (and waits on the pipe).
  pid_t pid = ::fork();
  if (pid == 0)
    exec_child(&setup);
#else
  pid_t pid = ::clone(exec_child, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
#endif
  int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) {
    errno = clone_errno;
    throw_errno("clone");
  }
  in_r.reset();
  out_w.reset();
  err_w.reset();
  report_w.reset();
  // The report pipe closes at a successful execve, or carries why not. After
  // a vfork-style clone the child has done either by now.
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
    reap_blocking(pid);
    throw spawn_error("cannot start program '" + name + "': " + stage_text(msg[0]) + ": "
                      + std::strerror(msg[1]));
  }
  child_process child;
  child.pid = pid;
  child.pidfd.reset(open_pidfd(pid));
  for (int fd : {in_w.get(), out_r.get(), err_r.get()})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  child.stdin_w = std::move(in_w);
  child.stdout_r = std::move(out_r);
  child.stderr_r = std::move(err_r);
  return child;
}

} // namespace actor_host::proc
