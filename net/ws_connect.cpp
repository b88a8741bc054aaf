#include "net/ws_connect.hpp"

#include "net/detail/beast_names.hpp"
#include "net/detail/flex_stream.hpp"
#include "net/detail/ws_session.hpp"
#include "net/io_runtime.hpp"
#include "wire/url.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>

#include <optional>

namespace actor_host::net {

namespace {

// Resolves, connects and hands the socket to a client-side session.
class connector : public std::enable_shared_from_this<connector> {
public:
  connector(asio::io_context& ioc, wire::parsed_url url, connect_options opts, session_factory factory,
            std::function<void(std::string)> on_fail)
    : strand_(asio::make_strand(ioc)), resolver_(strand_), stream_(strand_), url_(std::move(url)),
      opts_(opts), factory_(std::move(factory)), on_fail_(std::move(on_fail)) {
  }

  void run() {
    resolver_.async_resolve(url_.host, url_.port,
                            beast::bind_front_handler(&connector::on_resolve, shared_from_this()));
  }

private:
  void on_resolve(error_code ec, tcp::resolver::results_type results) {
    if (ec)
      return on_fail_("cannot resolve " + url_.host + ": " + ec.message());
    stream_.expires_after(opts_.timeout);
    stream_.async_connect(results,
                          beast::bind_front_handler(&connector::on_connect, shared_from_this()));
  }

  void on_connect(error_code ec, tcp::endpoint ep) {
    if (ec)
      return on_fail_("cannot connect to " + wire::host_header(url_) + ": " + ec.message());
    peer_ = ep.address().to_string() + ":" + std::to_string(ep.port());
    flex_.emplace(std::move(stream_));
    if (!opts_.tls)
      return open();
    flex_->start_tls(opts_.tls->box);
    verify_server_name(flex_->tls(), url_.host);
    flex_->tls().async_handshake(asio::ssl::stream_base::client,
                                 beast::bind_front_handler(&connector::on_tls,
                                                           shared_from_this()));
  }

  void on_tls(error_code ec) {
    if (ec)
      return on_fail_("TLS handshake with " + wire::host_header(url_)
                      + " failed: " + describe_tls_error(ec, &flex_->tls()));
    open();
  }

  void open() {
    flex_->next_layer().expires_never();
    auto stream = std::move(*flex_);
    flex_.reset();
    run_client_websocket(std::move(stream), std::move(peer_), wire::host_header(url_), url_.target,
                         std::move(factory_), std::move(on_fail_),
                         ws_limits{opts_.max_frame_bytes, opts_.max_write_queue_bytes, opts_.idle_timeout},
                         opts_.counters ? opts_.counters : std::make_shared<socket_counters>());
  }

  io_strand strand_; // the connection's, from the resolve on
  tcp::resolver resolver_;
  flex_stream::tcp_layer stream_;
  std::optional<flex_stream> flex_;
  std::string peer_;
  wire::parsed_url url_;
  connect_options opts_;
  session_factory factory_;
  std::function<void(std::string)> on_fail_;
};

} // namespace

void ws_connect(io_runtime& io, const std::string& url, connect_options opts,
                session_factory on_open, std::function<void(std::string)> on_fail) {
  auto parsed = wire::parse_url(url);
  const bool secure = parsed && (parsed->scheme == "wss" || parsed->scheme == "https");
  std::string why;
  if (!parsed)
    why = "unsupported manager URL '" + url + "' (expected ws://host:port or wss://host:port)";
  else if (secure && !opts.tls)
    why = "manager URL '" + url + "' needs TLS but no TLS client context was given";
  else if (!secure && opts.tls)
    opts.tls = nullptr; // ws:// stays plain even with --tls-ca-file
  if (!why.empty()) {
    asio::post(io.context(), [f = std::move(on_fail), why] { f(why); });
    return;
  }
  std::make_shared<connector>(io.context(), std::move(*parsed), opts, std::move(on_open),
                              std::move(on_fail))
    ->run();
}

} // namespace actor_host::net
