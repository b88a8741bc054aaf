#include "net/ws_client.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "net/detail/beast_names.hpp"
#include "net/detail/flex_stream.hpp"
#include "wire/url.hpp"

#ifndef ACTOR_HOST_VERSION
#  define ACTOR_HOST_VERSION "dev"
#endif

namespace actor_host::net {

namespace {

// The manager caps what it *accepts*, not what it sends (results pass through
// from runtimes), so the client only guards against absurd sizes.
constexpr std::uint64_t max_message_bytes = 1ull << 30;

// Bounds the closing handshake: a peer that never answers our close frame
// must not keep a command-line tool from exiting.
constexpr auto close_timeout = std::chrono::seconds{2};

std::string describe(const beast::error_code& ec) {
  // "End of file" reads like a local file problem; say what happened.
  if (ec == asio::error::eof || ec == asio::error::connection_reset)
    return "connection closed by peer without a close frame (" + ec.message() + ")";
  return ec.message();
}

} // namespace

struct blocking_ws_client::impl {
  // Only the connect and close phases run the io_context (they need a
  // deadline); reads and writes in between use Beast's synchronous calls.
  asio::io_context ioc_;
  websocket::stream<flex_stream> ws_{flex_stream::tcp_layer{asio::make_strand(ioc_)}};
  beast::flat_buffer buffer_;
  bool open_ = false;
};

blocking_ws_client::blocking_ws_client(std::unique_ptr<impl> ptr) : impl_(std::move(ptr)) {
  // nop
}

blocking_ws_client::~blocking_ws_client() {
  close();
}

std::unique_ptr<blocking_ws_client>
blocking_ws_client::connect(const std::string& url, std::string& error,
                            std::chrono::milliseconds timeout, tls_client_context_ptr tls,
                            const std::string& bearer_token) {
  auto parsed = wire::parse_url(url);
  if (!parsed) {
    error = "invalid URL '" + url + "'";
    return nullptr;
  }
  if (parsed->scheme != "ws" && parsed->scheme != "wss") {
    error = "unsupported URL scheme '" + parsed->scheme + "://' (expected ws:// or wss://)";
    return nullptr;
  }
  if (parsed->scheme == "wss" && !tls) {
    error = "wss:// needs a TLS client context";
    return nullptr;
  }
  auto ptr = std::make_unique<impl>();
  auto& ioc = ptr->ioc_;
  auto& ws = ptr->ws_;
  ws.read_message_max(max_message_bytes);
  ws.set_option(websocket::stream_base::decorator([bearer_token](websocket::request_type& req) {
    req.set(http::field::user_agent, "actor-host-cli/" ACTOR_HOST_VERSION);
    if (!bearer_token.empty())
      req.set(http::field::authorization, "Bearer " + bearer_token);
  }));
  // Resolve -> connect -> handshake as one async chain, so that a single
  // run_for() puts one deadline on all three steps.
  tcp::resolver resolver{ioc};
  const auto host = wire::host_header(*parsed);
  const auto& target = parsed->target;
  websocket::response_type response;
  beast::error_code result;
  const char* stage = "resolve";
  bool done = false;
  bool cancelled = false;
  auto finish = [&](beast::error_code ec) {
    result = ec;
    done = true;
  };
  resolver.async_resolve(
    parsed->host, parsed->port,
    [&](beast::error_code ec, const tcp::resolver::results_type& endpoints) {
      if (ec || cancelled)
        return finish(ec ? ec : asio::error::operation_aborted);
      stage = "connect";
      beast::get_lowest_layer(ws).async_connect(
        endpoints, [&](beast::error_code ec, const tcp::endpoint&) {
          if (ec || cancelled)
            return finish(ec ? ec : asio::error::operation_aborted);
          auto upgrade = [&] {
            stage = "handshake";
            ws.async_handshake(response, host, target, finish);
          };
          if (parsed->scheme != "wss")
            return upgrade();
          stage = "TLS handshake";
          auto& fs = ws.next_layer();
          fs.start_tls(tls->box);
          verify_server_name(fs.tls(), parsed->host);
          fs.tls().async_handshake(asio::ssl::stream_base::client, [&, upgrade](beast::error_code ec) {
            if (ec || cancelled)
              return finish(ec ? ec : asio::error::operation_aborted);
            upgrade();
          });
        });
    });
  ioc.run_for(timeout);
  if (!done) {
    // Abort the pending step and drain its handler: the handlers capture this
    // stack frame, so none may outlive it.
    cancelled = true;
    resolver.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(ws).socket().close(ignored);
    ioc.restart();
    ioc.run();
    error = std::string{stage} + " timed out after " + std::to_string(timeout.count()) + " ms";
    return nullptr;
  }
  if (result) {
    auto& fs = ws.next_layer();
    error = std::string{stage} + " failed: "
            + (fs.is_tls() ? describe_tls_error(result, &fs.tls()) : describe(result));
    if (result == websocket::error::upgrade_declined) {
      // The server's reason, e.g. why the token was refused; the target may
      // carry a token, so only its path is shown.
      auto body = response.body().substr(0, 300);
      while (!body.empty() && (body.back() == '\n' || body.back() == '\r'))
        body.pop_back();
      error += " (HTTP " + std::to_string(response.result_int()) + " for "
               + target.substr(0, target.find('?')) + (body.empty() ? ")" : "): " + body);
    }
    return nullptr;
  }
  ptr->open_ = true;
  return std::unique_ptr<blocking_ws_client>{new blocking_ws_client(std::move(ptr))};
}

bool blocking_ws_client::send_text(std::string_view text, std::string& error) {
  auto& st = *impl_;
  if (!st.open_) {
    error = "connection is closed";
    return false;
  }
  beast::error_code ec;
  st.ws_.text(true);
  st.ws_.write(asio::buffer(text.data(), text.size()), ec);
  if (ec) {
    // A failed write leaves the stream unusable.
    st.open_ = false;
    error = "send failed: " + describe(ec);
    return false;
  }
  return true;
}

std::optional<std::string> blocking_ws_client::read_text(std::string& error) {
  auto& st = *impl_;
  if (!st.open_) {
    error = "connection is closed";
    return std::nullopt;
  }
  beast::error_code ec;
  // Beast answers pings and handles a close frame inside read().
  st.ws_.read(st.buffer_, ec);
  if (ec) {
    st.open_ = false;
    if (ec == websocket::error::closed) {
      const auto& reason = st.ws_.reason();
      error = "connection closed by peer (code " + std::to_string(reason.code);
      if (!reason.reason.empty())
        error += ": " + std::string{reason.reason.c_str()};
      error += ")";
    } else {
      error = "receive failed: " + describe(ec);
    }
    return std::nullopt;
  }
  // The manager only sends text frames; a binary one is returned as-is
  // rather than dropped so that a protocol mistake stays visible.
  auto text = beast::buffers_to_string(st.buffer_.data());
  st.buffer_.consume(st.buffer_.size());
  return text;
}

void blocking_ws_client::close() {
  if (!impl_)
    return;
  auto& st = *impl_;
  auto& socket = beast::get_lowest_layer(st.ws_).socket();
  if (st.open_) {
    st.open_ = false;
    // Polite close: send a close frame and wait briefly for the answer.
    bool done = false;
    st.ioc_.restart();
    st.ws_.async_close(websocket::close_code::normal,
                       [&done](beast::error_code) { done = true; });
    st.ioc_.run_for(close_timeout);
    if (!done) {
      beast::error_code ignored;
      socket.close(ignored);
      st.ioc_.restart();
      st.ioc_.run();
    }
  }
  if (socket.is_open()) {
    beast::error_code ignored;
    socket.close(ignored);
  }
}

} // namespace actor_host::net
