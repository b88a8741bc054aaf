// bench_syscost: what a kernel crossing and a thread hand-off cost on this
// machine, so the report can say how much of a routed call is the platform.
// Prints one JSON line: ns per getppid(), per write+read of 100 bytes over a
// UNIX socketpair, and per thread ping-pong round trip (mutex + condition
// variable, i.e. two wake-ups and two context switches, the hand-off between
// an I/O thread and a scheduler thread).
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace {

using clk = std::chrono::steady_clock;

double ns_per(clk::time_point t0, long n) {
  return std::chrono::duration<double, std::nano>(clk::now() - t0).count() / static_cast<double>(n);
}

} // namespace

int main() {
  constexpr long n_sys = 200000;
  auto t0 = clk::now();
  for (long i = 0; i < n_sys; ++i)
    syscall(SYS_getppid);
  double getppid_ns = ns_per(t0, n_sys);

  int sv[2];
  double sock_ns = -1;
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0) {
    char b[100] = {};
    constexpr long n = 100000;
    t0 = clk::now();
    for (long i = 0; i < n; ++i) {
      if (write(sv[0], b, sizeof b) != static_cast<ssize_t>(sizeof b) || read(sv[1], b, sizeof b) <= 0)
        break;
    }
    sock_ns = ns_per(t0, n);
    close(sv[0]);
    close(sv[1]);
  }

  std::mutex m;
  std::condition_variable cv;
  long turn = 0;
  constexpr long n_pp = 20000;
  std::thread other([&] {
    for (long i = 0; i < n_pp; ++i) {
      std::unique_lock lock{m};
      cv.wait(lock, [&] { return turn % 2 == 1; });
      ++turn;
      cv.notify_one();
    }
  });
  t0 = clk::now();
  for (long i = 0; i < n_pp; ++i) {
    std::unique_lock lock{m};
    ++turn;
    cv.notify_one();
    cv.wait(lock, [&] { return turn % 2 == 0; });
  }
  double pingpong_ns = ns_per(t0, n_pp);
  other.join();
  std::printf("{\"getppid_ns\":%.0f,\"socketpair_write_read_ns\":%.0f,\"thread_pingpong_ns\":%.0f}\n",
              getppid_ns, sock_ns, pingpong_ns);
  return 0;
}
