// The HTTP request head as the listeners read it: Beast's request parser
// with the limits net/server.cpp sets, then what the session does with the
// message (upgrade description, target split into path and query, header
// names lower-cased), and the iii auth view of an upgrade (query and
// headers as JSON). One input may hold several pipelined requests.

#include "fuzz/fuzz_support.hpp"
#include "net/detail/ws_session.hpp"
#include "net/server.hpp"
#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"
#include "wire/url.hpp"

#include <boost/beast/http/parser.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

namespace net = actor_host::net;
namespace wire = actor_host::wire;
namespace http = boost::beast::http;
using actor_host::fuzz::require;

namespace {

// net/server.cpp's http_session::do_read.
constexpr std::size_t header_limit = 64 * 1024;

void use(net::http_request_message& req) {
  if (boost::beast::websocket::is_upgrade(req)) {
    auto up = net::describe_upgrade(req);
    require(up.target == req.target(), "the upgrade keeps the raw target");
    auto q = wire::iii::query_params_json(up.target);
    auto h = wire::iii::headers_json(up.headers);
    (void)q;
    (void)h;
  }
  std::string path;
  std::map<std::string, std::string> query;
  wire::split_target(req.target(), path, query);
  require(path.size() <= req.target().size(), "decoding never grows the path");
  auto headers = net::lower_case_headers(req);
  for (auto& [k, v] : headers)
    for (char c : k)
      require(!(c >= 'A' && c <= 'Z'), "header names are lower-case", k);
  req.keep_alive();
  // The target as a URL (CLI and config paths parse these).
  if (auto url = wire::parse_url(req.target())) {
    require(!url->host.empty() && !url->port.empty() && !url->target.empty()
              && url->target.front() == '/',
            "a parsed URL has host, port and target");
    wire::host_header(*url);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  boost::asio::const_buffer in{data, size};
  // Pipelined requests, as the session's read buffer holds them.
  for (int n = 0; n < 4 && in.size() > 0; ++n) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(header_limit);
    parser.body_limit(net::server_options{}.max_body_bytes);
    parser.eager(true);
    boost::beast::error_code ec;
    auto used = parser.put(in, ec);
    in += used;
    if (ec == http::error::need_more) {
      // The peer closed here: what async_read does at end of stream.
      ec = {};
      parser.put_eof(ec);
    }
    if (ec || !parser.is_done())
      return 0;
    auto req = parser.release();
    use(req);
  }
  return 0;
}
