#include "proc/process_watch.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <array>
#include <csignal>
#include <mutex>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace actor_host::proc {

namespace {

namespace asio = boost::asio;
using boost::system::error_code;

// A line longer than this is logged in pieces rather than buffered forever.
constexpr std::size_t max_line = 64 * 1024;

class watch_impl : public process_watch, public std::enable_shared_from_this<watch_impl> {
public:
  watch_impl(asio::io_context& io, child_process child, callbacks cbs)
    : strand_(asio::make_strand(io)), pid_(child.pid), cbs_(std::move(cbs)),
      out_(strand_, child.stdout_r.release()), err_(strand_, child.stderr_r.release()),
      exit_(strand_, child.pidfd.release()) {
    child.stdin_w.reset();
  }

  ~watch_impl() override {
    // Out of the reactor's epoll set before they close: asio leaves a
    // closing descriptor to the kernel, which drops it from the set only
    // when no process holds the file any more, and a child forked meanwhile
    // holds a copy of every descriptor until it execs. The stale entry then
    // woke whatever asio registered next in its recycled slot: a new
    // child's pidfd read as exited, and that child was killed.
    for (auto* sd : {&out_, &err_, &exit_})
      if (sd->is_open())
        ::close(sd->release());
    // The owner is gone while the child still runs: it must not outlive us.
    std::lock_guard<std::mutex> guard{reap_mutex_};
    if (!reaped_) {
      signal_group(pid_, SIGKILL);
      int status = 0;
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }

  void begin() {
    read(out_, out_buf_, out_line_, false);
    read(err_, err_buf_, err_line_, true);
    exit_.async_wait(asio::posix::stream_descriptor::wait_read,
                     [self = shared_from_this()](error_code ec) { self->on_exit(ec); });
  }

  pid_t pid() const override {
    return pid_;
  }

  void signal(int sig) override {
    // Under the same lock as reaping: a reaped pid may belong to a stranger.
    std::lock_guard<std::mutex> guard{reap_mutex_};
    if (!reaped_)
      signal_group(pid_, sig);
  }

private:
  using buffer = std::array<char, 16 * 1024>;

  void read(asio::posix::stream_descriptor& sd, buffer& buf, std::string& line, bool is_err) {
    sd.async_read_some(asio::buffer(buf), [self = shared_from_this(), &sd, &buf, &line,
                                           is_err](error_code ec, std::size_t n) {
      self->on_read(ec, n, sd, buf, line, is_err);
    });
  }

  void on_read(error_code ec, std::size_t n, asio::posix::stream_descriptor& sd, buffer& buf,
               std::string& line, bool is_err) {
    for (std::size_t i = 0; i < n; ++i) {
      char c = buf[i];
      if (c == '\n' || line.size() >= max_line) {
        emit(line, is_err);
        if (c == '\n')
          continue;
      }
      line += c;
    }
    if (ec) {
      // EOF: the child (and whatever inherited the pipe) closed it.
      if (!line.empty())
        emit(line, is_err);
      return;
    }
    read(sd, buf, line, is_err);
  }

  void emit(std::string& line, bool is_err) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (cbs_.on_line)
      cbs_.on_line(is_err, line);
    line.clear();
  }

  void on_exit(error_code ec) {
    if (ec == asio::error::operation_aborted)
      return;
    int status = 0;
    {
      std::lock_guard<std::mutex> guard{reap_mutex_};
      // Sweep what the child left in its group before the group id can be
      // reused, then reap.
      signal_group(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
      reaped_ = true;
    }
    if (cbs_.on_exit)
      cbs_.on_exit(status);
  }

  asio::strand<asio::io_context::executor_type> strand_;
  pid_t pid_;
  callbacks cbs_;
  asio::posix::stream_descriptor out_;
  asio::posix::stream_descriptor err_;
  asio::posix::stream_descriptor exit_;
  buffer out_buf_{};
  buffer err_buf_{};
  std::string out_line_;
  std::string err_line_;
  std::mutex reap_mutex_;
  bool reaped_ = false;
};

} // namespace

std::shared_ptr<process_watch> process_watch::start(asio::io_context& io, child_process child,
                                                    callbacks cbs) {
  if (!child.pidfd) {
    signal_group(child.pid, SIGKILL);
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    throw spawn_error("this kernel has no pidfd_open (Linux 5.3+ needed to supervise children)");
  }
  auto w = std::make_shared<watch_impl>(io, std::move(child), std::move(cbs));
  w->begin();
  return w;
}

} // namespace actor_host::proc
