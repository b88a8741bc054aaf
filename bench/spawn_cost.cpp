// bench_spawn: how long starting a child keeps the calling thread, which for
// a service is the manager's I/O thread. proc::spawn (clone with CLONE_VM |
// CLONE_VFORK: the thread waits for the child's execve) side by side with a
// plain fork() + execve that waits the same way (a close-on-exec pipe that
// closes at the execve), in a process whose heap is --heap-mb touched
// megabytes, since fork() copies the page tables of all of it.
// Prints one JSON line: microseconds the caller was held, median and p99.
#include "proc/spawn.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using clk = std::chrono::steady_clock;

double micros_since(clk::time_point t0) {
  return std::chrono::duration<double, std::micro>(clk::now() - t0).count();
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

/// fork() + execve of `exe`, returning once the child has exec'd.
double fork_exec(const char* exe) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0)
    std::exit(2);
  char* argv[] = {const_cast<char*>(exe), nullptr};
  char* envp[] = {nullptr};
  auto t0 = clk::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execve(exe, argv, envp);
    ::_exit(127);
  }
  ::close(report[1]);
  char b;
  while (::read(report[0], &b, 1) < 0 && errno == EINTR) {
  }
  double us = micros_since(t0);
  ::close(report[0]);
  reap(pid);
  return us;
}

double via_spawn(const char* exe) {
  actor_host::proc::spawn_request req{.argv = {exe}, .env = {}, .cwd = {}};
  auto t0 = clk::now();
  auto child = actor_host::proc::spawn(req);
  double us = micros_since(t0);
  reap(child.pid);
  return us;
}

struct summary {
  double p50;
  double p99;
};

summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)]};
}

} // namespace

int main(int argc, char** argv) {
  long heap_mb = 512;
  int rounds = 200;
  const char* exe = "/bin/true";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--heap-mb")
      heap_mb = std::atol(argv[i + 1]);
    else if (flag == "--rounds")
      rounds = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--program")
      exe = argv[i + 1];
  }
  // Many blocks rather than one, like a manager's heap: each page touched.
  std::vector<std::vector<char>> heap;
  for (long i = 0; i < heap_mb; ++i)
    heap.emplace_back(1 << 20, static_cast<char>(i));
  std::vector<double> forked, spawned;
  // Interleaved, so both see the same machine.
  for (int i = 0; i < rounds; ++i) {
    forked.push_back(fork_exec(exe));
    spawned.push_back(via_spawn(exe));
  }
  auto f = summarize(forked);
  auto s = summarize(spawned);
  std::printf("{\"heap_mb\":%ld,\"rounds\":%d,\"fork_exec_us_p50\":%.1f,\"fork_exec_us_p99\":%.1f,"
              "\"spawn_us_p50\":%.1f,\"spawn_us_p99\":%.1f,\"ratio_p50\":%.3f}\n",
              heap_mb, rounds, f.p50, f.p99, s.p50, s.p99, s.p50 / f.p50);
}
