#include "net/server.hpp"

#include "net/http_head.hpp"
#include "net/io_runtime.hpp"
#include "net/detail/server_impl.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <mutex>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace actor_host::net {

namespace {

// One descriptor held in reserve: out of descriptors (EMFILE), it is freed
// to accept the waiting connection and close it, so that the backlog does
// not wedge and the acceptor does not spin.
struct spare_fd {
  std::mutex mtx;
  int fd = -1;

  void ensure() {
    std::lock_guard<std::mutex> g{mtx};
    if (fd < 0)
      fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }

  /// Accepts one pending connection on `listener` with the spare and closes
  /// it after a best-effort `answer`. False if there was no spare.
  bool shed_one(int listener, const std::string& answer) {
    std::lock_guard<std::mutex> g{mtx};
    if (fd < 0)
      return false;
    ::close(fd);
    int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c >= 0) {
      [[maybe_unused]] auto n = ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(c);
    }
    fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    return c >= 0;
  }
};

spare_fd& spare() {
  static spare_fd s;
  return s;
}

} // namespace

// -- listener ------------------------------------------------------------------

void server::impl::do_accept() {
  acceptor.async_accept(asio::make_strand(ioc),
                        beast::bind_front_handler(&impl::on_accept, shared_from_this()));
}

void server::impl::on_accept(error_code ec, flex_stream::socket_type socket) {
  if (ec == asio::error::operation_aborted || !acceptor.is_open())
    return;
  if (ec)
    return on_accept_error(ec);
  if (static_cast<std::size_t>(counters->connections.load(std::memory_order_relaxed))
      >= opts.max_connections) {
    refuse(std::move(socket), refusal_cause::listener);
  } else if (!opts.budget->try_acquire()) {
    refuse(std::move(socket), refusal_cause::process);
  } else {
    start_http_session(flex_stream{flex_stream::tcp_layer{std::move(socket)},
                                   connection_slot{counters, opts.budget}},
                       shared_from_this());
  }
  do_accept();
}

void server::impl::on_accept_error(error_code ec) {
  counters->accept_errors.fetch_add(1, std::memory_order_relaxed);
  const bool out_of_fds = ec == asio::error::no_descriptors
                          || ec == boost::system::errc::too_many_files_open_in_system;
  // Out of descriptors the pending connection would be offered again at
  // once: accept it with the spare descriptor and close it.
  bool shed = out_of_fds
              && spare().shed_one(acceptor.native_handle(),
                                  refusal(503, "Server out of file descriptors, try again later"));
  if (auto n = accept_log.due())
    spdlog::warn("accept on port {} failed: {} ({} time(s) in 5 s){}", bound_port, ec.message(),
                 n, shed ? "; refusing connections until descriptors are free" : "");
  // Back off instead of spinning on the error.
  retry.expires_after(std::chrono::milliseconds(50));
  retry.async_wait([self = shared_from_this()](error_code e) {
    if (!e)
      self->do_accept();
  });
}

namespace {

// A connection over max_connections: it gets its answer, then what it sent
// is read (and dropped) for a moment so that closing does not reset the
// connection before the answer is read.
class refused_connection : public std::enable_shared_from_this<refused_connection> {
public:
  explicit refused_connection(flex_stream::socket_type&& s) : stream_(std::move(s)) {
  }
  void run(std::string answer) {
    error_code ignored;
    auto& sock = stream_.socket();
    sock.non_blocking(true, ignored);
    if (!answer.empty())
      sock.send(asio::buffer(answer), 0, ignored);
    sock.shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(std::chrono::seconds(1));
    drain();
  }

private:
  void drain() {
    stream_.async_read_some(asio::buffer(buf_), [self = shared_from_this()](error_code ec,
                                                                            std::size_t) {
      if (!ec)
        self->drain();
    });
  }
  flex_stream::tcp_layer stream_;
  char buf_[512];
};

} // namespace

void server::impl::refuse(flex_stream::socket_type socket, refusal_cause cause) {
  counters->connections_refused.fetch_add(1, std::memory_order_relaxed);
  const bool process = cause == refusal_cause::process;
  if (auto n = refuse_log.due()) {
    if (process)
      spdlog::warn("refusing connections on port {}: the process holds {} connections, its "
                   "descriptor budget ({} open on this port); {} refused in 5 s",
                   bound_port, opts.budget->in_use(), counters->connections.load(), n);
    else
      spdlog::warn("refusing connections on port {}: {} open (max_connections {}); {} refused "
                   "in 5 s",
                   bound_port, counters->connections.load(), opts.max_connections, n);
  }
  std::string why = process ? "Too many connections (" + std::to_string(opts.budget->limit())
                                + " open in this process, its descriptor budget), try again later"
                            : "Too many connections (max_connections "
                                + std::to_string(opts.max_connections)
                                + " on this port), try again later";
  // A TLS client could not read a plain answer.
  std::make_shared<refused_connection>(std::move(socket))
    ->run(opts.tls ? std::string{} : refusal(503, why));
}

server::server(io_runtime& io, server_options opts)
  : impl_(std::make_shared<impl>(io.context(), std::move(opts))) {
  if (!impl_->opts.budget)
    impl_->opts.budget = io.budget();
}

server::~server() {
  stop_accepting();
}

void server::on_websocket(std::string path, ws_factory factory, upgrade_reads reads) {
  impl_->ws_routes.push_back({std::move(path), false, {}, std::move(factory),
                              reads == upgrade_reads::any_time});
}

void server::on_websocket_prefix(std::string prefix, upgrade_check check, ws_factory factory) {
  impl_->ws_routes.push_back({std::move(prefix), true, std::move(check), std::move(factory)});
}

void server::on_http(http_handler handler) {
  impl_->http = std::move(handler);
}

std::string server::listen() {
  error_code ec;
  auto address = asio::ip::make_address(impl_->opts.bind, ec);
  if (ec)
    return "invalid bind address '" + impl_->opts.bind + "': " + ec.message();
  auto try_bind = [&](std::uint16_t port) -> error_code {
    error_code e;
    tcp::endpoint ep{address, port};
    auto& a = impl_->acceptor;
    if (a.is_open())
      a.close(e);
    a.open(ep.protocol(), e);
    if (e)
      return e;
    a.set_option(asio::socket_base::reuse_address(true), e);
    a.bind(ep, e);
    if (e)
      return e;
    a.listen(asio::socket_base::max_listen_connections, e);
    return e;
  };
  auto& o = impl_->opts;
  if (o.port == 0 && o.range_first != 0) {
    for (unsigned p = o.range_first; p <= o.range_last; ++p) {
      ec = try_bind(static_cast<std::uint16_t>(p));
      if (!ec)
        break;
    }
    if (ec)
      return "no free port in " + std::to_string(o.range_first) + "-"
             + std::to_string(o.range_last) + " on " + o.bind;
  } else if ((ec = try_bind(o.port))) {
    return "cannot listen on " + o.bind + ":" + std::to_string(o.port) + ": " + ec.message();
  }
  impl_->bound_port = impl_->acceptor.local_endpoint(ec).port();
  spare().ensure();
  impl_->do_accept();
  return {};
}

std::uint16_t server::port() const {
  return impl_->bound_port;
}

void server::stop_accepting() {
  asio::post(impl_->acceptor.get_executor(), [self = impl_] {
    error_code ignored;
    self->acceptor.close(ignored);
    self->retry.cancel();
  });
}

const socket_counters& server::counters() const {
  return *impl_->counters;
}

} // namespace actor_host::net
