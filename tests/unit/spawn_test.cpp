#define CAF_SUITE spawn

#include <caf/test/unit_test.hpp>

#include "proc/spawn.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace actor_host;
namespace fs = std::filesystem;

// proc::spawn starts a child with clone(CLONE_VM | CLONE_VFORK): the child
// borrows the parent's memory until its execve. These tests check what the
// fork()-based start guaranteed still holds.

namespace {

proc::child_process start(std::vector<std::string> argv, std::string cwd = {}) {
  return proc::spawn({.argv = std::move(argv), .env = proc::inherited_environment(), .cwd = cwd});
}

/// Everything the child writes to stdout, until it closes it.
std::string read_all(proc::unique_fd& fd) {
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// The value of a "Name:\tvalue" line of /proc/<pid>/status text.
std::string status_field(const std::string& status, const std::string& name) {
  auto at = status.find("\n" + name + ":");
  if (at == std::string::npos)
    return {};
  auto begin = status.find_first_not_of(" \t", at + name.size() + 2);
  return status.substr(begin, status.find('\n', begin) - begin);
}

} // namespace

CAF_TEST(the child gets default signals and its own process group and no other descriptors) {
  // What the parent has must not leak: an ignored SIGPIPE, a blocked
  // SIGUSR1 and an open descriptor without close-on-exec.
  auto old_pipe = std::signal(SIGPIPE, SIG_IGN);
  sigset_t usr1, old_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ::pthread_sigmask(SIG_BLOCK, &usr1, &old_mask);
  int stray = ::open("/dev/null", O_RDONLY);
  auto child = start({"cat", "/proc/self/status"});
  ::close(stray);
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  std::signal(SIGPIPE, old_pipe);
  auto status = read_all(child.stdout_r);
  CAF_CHECK_EQUAL(wait_for(child.pid), 0);
  CAF_CHECK_EQUAL(status_field(status, "SigIgn"), "0000000000000000");
  CAF_CHECK_EQUAL(status_field(status, "SigBlk"), "0000000000000000");
  CAF_CHECK_EQUAL(status_field(status, "NSpgid"), std::to_string(child.pid));
  auto fds = start({"ls", "/proc/self/fd"});
  // 0-2 are the pipes; 3 is the one ls opened to list the directory.
  CAF_CHECK_EQUAL(read_all(fds.stdout_r), "0\n1\n2\n3\n");
  CAF_CHECK_EQUAL(wait_for(fds.pid), 0);
}

CAF_TEST(the child is killed when the thread that started it ends) {
  proc::child_process child;
  std::thread starter{[&] { child = start({"sleep", "60"}); }};
  starter.join();
  auto status = wait_for(child.pid);
  CAF_REQUIRE(WIFSIGNALED(status));
  CAF_CHECK_EQUAL(WTERMSIG(status), SIGKILL);
}

CAF_TEST(a child that cannot start says at which step and is reaped) {
  auto dir = fs::temp_directory_path() / ("spawn-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto not_a_program = dir / "not-a-program";
  { std::ofstream{not_a_program} << "neither ELF nor #!\n"; }
  fs::permissions(not_a_program, fs::perms{0755});
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const proc::spawn_error& e) {
      return std::string{e.what()};
    }
    return std::string{"started"};
  };
  CAF_CHECK_EQUAL(message([&] { start({not_a_program.string()}); }),
                  "cannot start program '" + not_a_program.string()
                    + "': execve: Exec format error");
  CAF_CHECK_EQUAL(message([&] { start({"true"}, (dir / "missing").string()); }),
                  "cannot start program 'true': chdir: No such file or directory");
  CAF_CHECK_EQUAL(message([&] { start({"no-such-program-anywhere"}); }),
                  "cannot start program 'no-such-program-anywhere': not found in PATH");
  fs::remove_all(dir);
  // A failed start leaves no child behind, reaped or not.
  CAF_CHECK_EQUAL(::waitpid(-1, nullptr, WNOHANG), -1);
  CAF_CHECK_EQUAL(errno, ECHILD);
}
