#pragma once

#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace actor_host::net {

/// The header that counts the managers a call has passed through.
inline constexpr const char* hops_header = "X-Actor-Host-Hops";

/// One HTTP/1.1 request an http_fetch() makes (plain http:// only: the peers
/// are local Genkit runtimes and telemetry servers).
struct http_request_spec {
  bool post = false; // GET otherwise
  std::string url;   // http://host:port/path?query
  std::string body;  // POST only
  std::string content_type = "application/json";
  /// The whole exchange, resolve to last byte; 0 = only connecting is timed
  /// (a stream that may stay quiet for long: its owner cancels it).
  std::chrono::milliseconds timeout{0};
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(5)};
  /// The answer's body beyond this fails the exchange (checked as it
  /// arrives, before anyone parses it); 0 = no cap (a stream whose reader
  /// caps its own records).
  std::size_t max_body_bytes = 8u << 20;
  /// > 0: sent as X-Actor-Host-Hops, the times the call has passed through
  /// a manager (a V1 runtime's URL that leads back to one is a loop).
  std::uint32_t hops = 0;
};

/// The head of an answer: its status and fields (names as sent).
struct http_answer_head {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> fields;

  /// The first field named `name` (case-insensitive), or "".
  std::string_view field(std::string_view name) const;
};

/// How an exchange ended.
struct http_end {
  std::string error;    // "" = the whole answer arrived; else why not, for a person
  bool reached = false; // a connection to the server was made
};

/// What an exchange reports, in this order, on its executor: the head once,
/// the body as it arrives (pieces in order, any sizes), then the end. A
/// failure before the head skips on_head. Nothing is reported after
/// cancel() was called on the executor.
struct http_handlers {
  std::function<void(http_answer_head)> on_head;
  std::function<void(std::string_view)> on_data;
  std::function<void(http_end)> on_end;
};

/// A request in flight.
class http_exchange {
public:
  virtual ~http_exchange() = default;
  /// Closes the connection; no handler runs afterwards when called on the
  /// exchange's executor (from elsewhere one may still be running). Idempotent.
  virtual void cancel() = 0;
  /// Flow control, on the executor: no more of the body is read until
  /// resume_reading() (TCP then pushes back on the server).
  virtual void pause_reading() = 0;
  virtual void resume_reading() = 0;
};

/// Starts `spec` on `executor` (a strand: every handler runs there). A URL
/// that is not http:// fails through on_end.
std::shared_ptr<http_exchange> http_fetch(const boost::asio::any_io_executor& executor,
                                          http_request_spec spec, http_handlers handlers);

} // namespace actor_host::net
