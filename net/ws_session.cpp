#include "net/detail/ws_session.hpp"

#include "net/io_runtime.hpp"
#include "net/url.hpp"
#include "net/ws_connect.hpp"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <spdlog/spdlog.h>

#include <cctype>
#include <deque>

namespace actor_host::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

// simdjson reads up to this many bytes past the end of a frame.
constexpr std::size_t simdjson_padding = 64;

class ws_session : public transport, public std::enable_shared_from_this<ws_session> {
public:
  ws_session(tcp::socket&& socket, ws_limits limits, std::shared_ptr<socket_counters> counters,
             std::string peer)
    : ws_(std::move(socket)), strand_(ws_.get_executor()), limits_(limits),
      counters_(std::move(counters)), peer_(std::move(peer)) {
    ++counters_->websockets;
  }

  ~ws_session() override {
    --counters_->websockets;
    counters_->queued_bytes.fetch_sub(static_cast<std::int64_t>(out_bytes_),
                                      std::memory_order_relaxed);
  }

  void accept(http::request<http::string_body> req, session_factory factory) {
    configure(beast::role_type::server);
    upgrade_.target = std::string{req.target()};
    for (auto& f : req) {
      std::string name{f.name_string()};
      for (auto& c : name)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      upgrade_.headers[name] = std::string{f.value()};
    }
    split_target(upgrade_.target, upgrade_.path, upgrade_.query);
    factory_ = std::move(factory);
    ws_.async_accept(req, beast::bind_front_handler(&ws_session::on_accept, shared_from_this()));
  }

  void handshake(const std::string& host, const std::string& target, session_factory factory,
                 std::function<void(std::string)> on_fail) {
    configure(beast::role_type::client);
    factory_ = std::move(factory);
    on_fail_ = std::move(on_fail);
    ws_.async_handshake(host, target,
                        beast::bind_front_handler(&ws_session::on_accept, shared_from_this()));
  }

  void send_text(std::string frame) override {
    asio::post(strand_, [self = shared_from_this(), f = std::move(frame)]() mutable {
      self->on_send(std::move(f), false);
    });
  }

  void send_binary(std::string frame) override {
    asio::post(strand_, [self = shared_from_this(), f = std::move(frame)]() mutable {
      self->on_send(std::move(f), true);
    });
  }

  // dispatch: called on the strand (by a handler, inside on_read), the
  // pause holds before the next read is started. A closing session keeps
  // reading: that read reports the end to the handler.
  void pause_reading() override {
    asio::dispatch(strand_, [self = shared_from_this()] {
      if (!self->closing_ && !self->closed_)
        self->read_paused_ = true;
    });
  }

  void resume_reading() override {
    asio::post(strand_, [self = shared_from_this()] {
      self->read_paused_ = false;
      if (self->read_parked_ && !self->closed_) {
        self->read_parked_ = false;
        self->do_read();
      }
    });
  }

  void close(std::uint16_t code, std::string reason) override {
    asio::post(strand_, [self = shared_from_this(), code, r = std::move(reason)]() mutable {
      self->on_close_request(code, std::move(r));
    });
  }

  void drop() override {
    asio::post(strand_, [self = shared_from_this()] {
      if (self->closed_)
        return;
      self->closing_ = true;
      self->unpark();
      error_code ignored;
      beast::get_lowest_layer(self->ws_).socket().close(ignored);
    });
  }

  const std::string& peer() const override {
    return peer_;
  }

  const upgrade_request& upgrade() const override {
    return upgrade_;
  }

private:
  void configure(beast::role_type role) {
    websocket::stream_base::timeout t;
    t.handshake_timeout = std::chrono::seconds(30);
    // Pings every half period find dead peers (a runtime whose host vanished)
    // without any JSON-RPC heartbeat; every Reflection V2 peer answers pings.
    t.idle_timeout = std::chrono::seconds(120);
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.read_message_max(limits_.max_frame_bytes);
    if (role == beast::role_type::server)
      ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "actor-host"); }));
    else
      ws_.set_option(websocket::stream_base::decorator(
        [](websocket::request_type& req) { req.set(http::field::user_agent, "actor-host"); }));
    beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay{true});
  }

  void on_accept(error_code ec) {
    if (ec) {
      spdlog::debug("websocket handshake with {} failed: {}", peer_, ec.message());
      if (auto f = std::move(on_fail_))
        f("websocket handshake failed: " + ec.message());
      return;
    }
    on_fail_ = nullptr;
    handler_ = factory_(shared_from_this());
    factory_ = nullptr;
    do_read();
  }

  // The next read, unless the reader paused us: then the read waits for
  // resume_reading (no read outstanding, so TCP pushes back on the peer).
  void read_next() {
    if (read_paused_) {
      read_parked_ = true;
      return;
    }
    do_read();
  }

  // Closing: a read must be outstanding again so that its completion reports
  // the end to the handler.
  void unpark() {
    read_paused_ = false;
    if (read_parked_) {
      read_parked_ = false;
      do_read();
    }
  }

  void do_read() {
    ws_.async_read(buffer_, beast::bind_front_handler(&ws_session::on_read, shared_from_this()));
  }

  void on_read(error_code ec, std::size_t n) {
    if (ec)
      return on_done(ec);
    if (!ws_.got_text()) {
      auto data = buffer_.cdata();
      bool taken = handler_ && !closing_
                   && handler_->on_binary({static_cast<const char*>(data.data()), n});
      buffer_.consume(n);
      if (taken) {
        counters_->frames_in.fetch_add(1, std::memory_order_relaxed);
        counters_->bytes_in.fetch_add(n, std::memory_order_relaxed);
        return read_next();
      }
      spdlog::warn("closing {}: binary frame (only JSON text frames are accepted)", peer_);
      on_close_request(static_cast<std::uint16_t>(websocket::close_code::bad_payload),
                       "binary frames are not supported");
      return do_read();
    }
    counters_->frames_in.fetch_add(1, std::memory_order_relaxed);
    counters_->bytes_in.fetch_add(n, std::memory_order_relaxed);
    std::string frame;
    frame.reserve(n + simdjson_padding);
    auto data = buffer_.cdata();
    frame.assign(static_cast<const char*>(data.data()), n);
    buffer_.consume(n);
    if (handler_ && !closing_)
      handler_->on_text(std::move(frame));
    read_next();
  }

  void on_done(error_code ec) {
    closed_ = true;
    std::string reason;
    if (ec == websocket::error::closed)
      reason = "closed by peer";
    else if (ec == websocket::error::message_too_big)
      reason = "message larger than " + std::to_string(limits_.max_frame_bytes) + " bytes";
    else
      reason = ec.message();
    if (ec == websocket::error::message_too_big)
      spdlog::warn("closed {}: {}", peer_, reason);
    if (auto h = std::move(handler_)) {
      if (ec == websocket::error::closed)
        h->on_peer_close(static_cast<std::uint16_t>(ws_.reason().code),
                         std::string{ws_.reason().reason.c_str()});
      h->on_closed(std::move(reason));
    }
  }

  void on_send(std::string frame, bool binary) {
    if (closed_ || closing_)
      return;
    add_out_bytes(static_cast<std::int64_t>(frame.size()));
    outq_.push_back({std::move(frame), binary});
    if (out_bytes_ > limits_.max_write_queue_bytes) {
      // The peer does not drain its socket; a close frame would queue behind
      // the same backlog, so drop the connection.
      counters_->write_queue_overflows.fetch_add(1, std::memory_order_relaxed);
      spdlog::warn("dropping {}: {} bytes wait to be written (limit {})", peer_, out_bytes_,
                   limits_.max_write_queue_bytes);
      closing_ = true;
      unpark();
      error_code ignored;
      beast::get_lowest_layer(ws_).socket().close(ignored);
      return;
    }
    if (!writing_)
      do_write();
  }

  // out_bytes_ and the listener-wide gauge move together.
  void add_out_bytes(std::int64_t delta) {
    out_bytes_ = static_cast<std::size_t>(static_cast<std::int64_t>(out_bytes_) + delta);
    counters_->queued_bytes.fetch_add(delta, std::memory_order_relaxed);
  }

  void do_write() {
    writing_ = true;
    ws_.binary(outq_.front().binary);
    ws_.async_write(asio::buffer(outq_.front().data),
                    beast::bind_front_handler(&ws_session::on_write, shared_from_this()));
  }

  void on_write(error_code ec, std::size_t n) {
    writing_ = false;
    if (ec) {
      // The read side sees the same failure and reports it.
      outq_.clear();
      add_out_bytes(-static_cast<std::int64_t>(out_bytes_));
      return;
    }
    counters_->frames_out.fetch_add(1, std::memory_order_relaxed);
    counters_->bytes_out.fetch_add(n, std::memory_order_relaxed);
    add_out_bytes(-static_cast<std::int64_t>(outq_.front().data.size()));
    outq_.pop_front();
    if (!outq_.empty())
      return do_write();
    if (closing_ && !closed_)
      do_close();
  }

  void on_close_request(std::uint16_t code, std::string reason) {
    if (closing_ || closed_)
      return;
    closing_ = true;
    unpark();
    close_reason_ = websocket::close_reason(static_cast<websocket::close_code>(code), reason);
    if (!writing_)
      do_close();
  }

  void do_close() {
    ws_.async_close(close_reason_, [self = shared_from_this()](error_code) {
      // nop: the pending read completes with websocket::error::closed
    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  const asio::any_io_executor strand_;
  ws_limits limits_;
  std::shared_ptr<socket_counters> counters_;
  std::string peer_;
  upgrade_request upgrade_;
  session_factory factory_;
  std::function<void(std::string)> on_fail_;
  frame_handler_ptr handler_;
  beast::flat_buffer buffer_;
  struct out_frame {
    std::string data;
    bool binary = false;
  };
  std::deque<out_frame> outq_;
  std::size_t out_bytes_ = 0;
  websocket::close_reason close_reason_;
  bool writing_ = false;
  bool read_paused_ = false;
  bool read_parked_ = false; // paused with no read outstanding
  bool closing_ = false;
  bool closed_ = false;
};


// Resolves, connects and hands the socket to a client-side session.
class connector : public std::enable_shared_from_this<connector> {
public:
  connector(asio::io_context& ioc, parsed_url url, connect_options opts, session_factory factory,
            std::function<void(std::string)> on_fail)
    : resolver_(asio::make_strand(ioc)), stream_(resolver_.get_executor()), url_(std::move(url)),
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
      return on_fail_("cannot connect to " + host_header(url_) + ": " + ec.message());
    stream_.expires_never();
    auto peer = ep.address().to_string() + ":" + std::to_string(ep.port());
    auto s = std::make_shared<ws_session>(stream_.release_socket(), ws_limits{opts_.max_frame_bytes},
                                          opts_.counters ? opts_.counters
                                                         : std::make_shared<socket_counters>(),
                                          std::move(peer));
    s->handshake(host_header(url_), url_.target, std::move(factory_), std::move(on_fail_));
  }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  parsed_url url_;
  connect_options opts_;
  session_factory factory_;
  std::function<void(std::string)> on_fail_;
};

} // namespace

void run_server_websocket(tcp::socket&& socket, http::request<http::string_body>&& req,
                          std::string peer, const session_factory& factory, ws_limits limits,
                          std::shared_ptr<socket_counters> counters) {
  auto s = std::make_shared<ws_session>(std::move(socket), limits, std::move(counters),
                                        std::move(peer));
  s->accept(std::move(req), factory);
}

void ws_connect(io_runtime& io, const std::string& url, connect_options opts,
                session_factory on_open, std::function<void(std::string)> on_fail) {
  auto parsed = parse_url(url);
  if (!parsed || (parsed->scheme != "ws" && parsed->scheme != "http")) {
    auto why = "unsupported manager URL '" + url + "' (expected ws://host:port)";
    asio::post(io.context(), [f = std::move(on_fail), why] { f(why); });
    return;
  }
  std::make_shared<connector>(io.context(), std::move(*parsed), opts, std::move(on_open),
                              std::move(on_fail))
    ->run();
}

} // namespace actor_host::net
