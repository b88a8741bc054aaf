#pragma once

#include "net/tls.hpp"

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace actor_host::net {
class blocking_ws_client;
}

/// The CLI's side of the manager's `/api/ws` (docs/API.md): the connection
/// and JSON-RPC calls on it. What the commands print lives in cli.cpp.
namespace actor_host::apps {

/// The outcome of one JSON-RPC call.
struct call_result {
  /// Set on success.
  std::optional<boost::json::value> result;
  /// The error object when the manager answered with an error.
  boost::json::object error;
  /// Set when the connection failed before an answer arrived.
  std::string transport_error;
};

/// Receives `method` and `params` of notifications addressed to the call.
using notification_handler = std::function<void(std::string_view, const boost::json::object&)>;

/// Derives the `/api/ws` URL from the `--manager` value (the API server's
/// http:// URL). A ws:// URL is accepted too, and a URL that already ends in
/// /api/ws is used as is. nullopt with the reason in `error` if it is no URL.
std::optional<std::string> api_ws_url(std::string manager, std::string& error);

/// One WebSocket connection to the manager, with sequential calls on it.
class manager_session {
public:
  /// Why open() failed.
  enum class open_failure {
    usage, // the manager URL or the TLS files are unusable
    unreachable, // resolve, connect or handshake failed
  };

  /// Connects to the manager `manager` (the `--manager` value), sending
  /// `token` (if any) as a bearer token. nullptr on failure, with the
  /// message to print in `error` and its kind in `why`.
  static std::unique_ptr<manager_session> open(const std::string& manager,
                                               const net::tls_client_files& tls,
                                               const std::string& token, std::string& error,
                                               open_failure& why);

  explicit manager_session(std::unique_ptr<net::blocking_ws_client> client);

  ~manager_session();

  /// Sends a request and blocks until its response. Notifications whose
  /// `params.requestId` equals this request's id go to `on_notification`;
  /// everything else (other ids, unknown methods) is ignored.
  call_result call(std::string_view method, boost::json::object params,
                   const notification_handler& on_notification = {});

private:
  std::unique_ptr<net::blocking_ws_client> client_;
  int next_id_ = 1;
};

} // namespace actor_host::apps
