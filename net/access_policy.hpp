#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace actor_host::net {

/// Who may use one listener, decided from the request head alone (before any
/// body is read or upgrade accepted). Browsers are the threat the Origin and
/// Host rules stop: a web page can make the user's browser send requests to
/// loopback (CSRF, cross-site WebSocket hijacking) and can point its own name
/// at 127.0.0.1 (DNS rebinding); neither can forge Origin or Host.
struct access_policy {
  /// Origins admitted besides loopback ones: "scheme://host[:port]",
  /// compared case-insensitively; "*" admits any.
  std::vector<std::string> allowed_origins;
  /// Host names admitted besides loopback names and `bind`; the port of
  /// the Host header is ignored; "*" admits any.
  std::vector<std::string> allowed_hosts;
  /// The listener's bind address: a Host naming it is fine.
  std::string bind;
  /// The shared secret; empty = none, then only loopback peers are admitted.
  std::string token;
  /// WebSocket upgrades may carry the token as `?token=` (Genkit runtimes and
  /// iii workers cannot set headers); HTTP requests still need the header.
  bool token_in_query = false;
  /// POSTs need `Content-Type: application/json` (a browser cannot send it
  /// cross-site without a preflight, which only allowed origins pass).
  bool json_posts = false;
  /// Something else authenticates remote peers (TLS client certificates,
  /// --insecure, RBAC's auth function): no token and no loopback rule.
  bool remote_without_token = false;
  /// Paths served without the token (still under the Origin/Host rules):
  /// health probes, and WebSockets authenticated by their own key. An entry
  /// ending in '/' is a prefix, except "/" itself (the root page only).
  std::vector<std::string> open_paths;
  /// POST routes also reachable as `/t/<token><route>`, the token in the
  /// path, for clients that can be given a base URL and nothing else
  /// (Genkit's trace exporter posts to GENKIT_TELEMETRY_SERVER + /api/traces).
  std::vector<std::string> token_path_routes;
};

/// The path prefix of a route reached with the token in its path.
inline constexpr std::string_view token_path_prefix = "/t/";

/// Whether `token` can stand in a URL path as it is (what a base URL for
/// token_path_routes needs): 1 to 512 of [A-Za-z0-9._~+=-].
bool token_fits_path(std::string_view token);

/// `path` fit for a log line: a token in it (token_path_prefix) is hidden.
std::string loggable_path(std::string_view path);

/// The request head as the policy sees it.
struct access_request {
  std::string_view method;                          // "GET", "POST", "OPTIONS", ...
  std::string_view path;                            // decoded, without the query
  const std::map<std::string, std::string>* headers = nullptr; // lower-case names
  const std::map<std::string, std::string>* query = nullptr;   // decoded
  std::string_view peer_address;                    // IP of the TCP peer
  bool upgrade = false;                             // a WebSocket upgrade
  /// A header that decides access or how the body is read (Host, Origin,
  /// Content-Type, Authorization, Sec-Fetch-Site) sent twice: its name, else
  /// empty. Refused rather than resolved last-wins, which a proxy in front
  /// may resolve the other way.
  std::string_view duplicate_header;
  /// Whether peer_address is loopback, if the caller knows it already (a
  /// connection's peer does not change); else check_access works it out.
  std::optional<bool> peer_loopback;
};

/// The headers access_request::duplicate_header watches, lower case.
bool is_singleton_header(std::string_view lower_case_name);

/// 0: admitted. Otherwise the HTTP status to answer (400, 401, 403, 415)
/// and a message a person can act on.
struct access_verdict {
  int status = 0;
  std::string message;
  /// The token came in the query: strip it before the request goes on.
  bool token_from_query = false;
  /// Origin may see our answers (CORS headers): present and admitted.
  bool cors = false;
  /// The token came in the path (`/t/<token><route>`): the route is what
  /// follows it.
  std::size_t token_path_length = 0;
};

access_verdict check_access(const access_policy& policy, const access_request& req);

/// "http(s)://" + localhost, *.localhost, 127.0.0.0/8 or [::1], any port, no path.
bool is_loopback_origin(std::string_view origin);

/// Whether `origin` may call us: loopback, or listed (or "*").
bool origin_allowed(const access_policy& policy, std::string_view origin);

/// Whether a Host header value (with or without port) names us.
bool host_allowed(const access_policy& policy, std::string_view host);

/// Loopback IP (127.0.0.0/8, ::1, ::ffff:127.x.x.x); false for anything unparsable.
bool is_loopback_address(std::string_view ip);


/// The token of an `Authorization: Bearer <token>` value, or "".
std::string_view bearer_token(std::string_view authorization);

/// `url` with `token=<percent-encoded token>` added to its query.
std::string url_with_token(const std::string& url, std::string_view token);

/// `url` with the value of a `token` query parameter replaced by "***", for logs.
std::string redact_token(std::string url);

/// Reads the token from `path` (surrounding whitespace dropped). Returns ""
/// or why not (unreadable, empty, not printable ASCII).
std::string read_token_file(const std::string& path, std::string& token);

/// Splits a comma-separated setting into trimmed, non-empty entries.
std::vector<std::string> split_list(std::string_view csv);

} // namespace actor_host::net
