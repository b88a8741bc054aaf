#pragma once

#include "proc/unique_fd.hpp"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

/// Starting child processes: what program actions and child runtimes share.
/// Knows nothing of actors, sockets or the action API.
namespace actor_host::proc {

using environment = std::map<std::string, std::string>;

struct spawn_request {
  /// argv[0] followed by the arguments; no shell. An argv[0] without '/' is
  /// looked up in the PATH of `env` (relative entries against `cwd`).
  std::vector<std::string> argv;
  /// The child's complete environment.
  environment env;
  /// Working directory; empty = the parent's.
  std::string cwd;
};

/// A started child. It leads its own process group, gets SIGKILL when the
/// thread that started it dies, and has default signal dispositions and an
/// empty signal mask. The pipe ends are non-blocking and close-on-exec.
struct child_process {
  pid_t pid = 0;
  /// -1 on kernels without pidfd_open (before 5.3).
  unique_fd pidfd;
  unique_fd stdin_w;
  unique_fd stdout_r;
  unique_fd stderr_r;
};

/// Why a child could not be started, in words a person can act on
/// ("cannot start program 'x': not found in PATH").
class spawn_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Starts the child as posix_spawn does (clone with CLONE_VM | CLONE_VFORK):
/// the calling thread, an I/O thread for services, waits only until the
/// child's execve, not for a copy of the parent's page tables (bench_spawn:
/// 0.6 ms against 17 ms for fork() with a 256 MiB heap). Throws spawn_error;
/// a child whose exec failed is reaped before the throw.
child_process spawn(const spawn_request& req);

/// The parent's own environment as a map.
environment inherited_environment();

/// Which of the parent's variables a child keeps (services of the manager).
/// The variables set for the child itself are added afterwards by the caller.
struct inherit_policy {
  /// Everything except the secrets (see is_secret_name).
  bool all = false;
  /// Names kept on top of the defaults; "PREFIX_*" keeps a prefix. Only an
  /// exact name passes a secret: "ACTOR_HOST_*" does not.
  std::vector<std::string> names;
};

/// What every child keeps: what a program needs to run (PATH, HOME, USER,
/// LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TZ, TMPDIR, TERM, SSL_CERT_FILE,
/// SSL_CERT_DIR, the sanitizers' *SAN_OPTIONS). Nothing that usually
/// carries a credential (API keys, proxies with passwords, tokens).
const std::vector<std::string>& default_inherited_names();

/// The manager's own credentials (ACTOR_HOST_AUTH_TOKEN*): never passed by
/// `all` or by a prefix, only when named exactly.
bool is_secret_name(std::string_view name);

/// The part of `parent` that `policy` lets through.
environment filter_environment(const environment& parent, const inherit_policy& policy);

/// Signals the child's whole group, or the child alone if the group is gone.
/// Only safe while the child is unreaped (its pid cannot be reused then).
void signal_group(pid_t pid, int sig);

/// "exited with status 3", "killed by signal 9 (SIGKILL)".
std::string describe_wait_status(int wait_status);

/// pidfd_open(2); -1 with ENOSYS on kernels before 5.3.
int open_pidfd(pid_t pid);

/// execvp's PATH search, done before fork() (execvp may allocate).
std::optional<std::string> find_program(const std::string& name, const std::string& path_var,
                                        const std::string& cwd);

} // namespace actor_host::proc
