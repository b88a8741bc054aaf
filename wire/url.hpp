#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace actor_host::wire {

/// The parts of an absolute http(s)/ws(s) URL that a client needs to connect.
struct parsed_url {
  /// Lower-case scheme: `http`, `https`, `ws` or `wss`.
  std::string scheme;
  /// Host name or address. IPv6 literals are stored without brackets (`::1`),
  /// which is the form a resolver expects; use `host_header()` for the wire.
  std::string host;
  /// Decimal port; the scheme's default (80 or 443) when the URL has none.
  std::string port;
  /// Path plus query, never empty (`/` when the URL has no path). The
  /// fragment is dropped: it is never sent to a server.
  std::string target;
};

/// Parses `scheme://host[:port][/path][?query][#fragment]` for the schemes
/// http, https, ws and wss. Returns `std::nullopt` for anything else,
/// including URLs with user info (`user@host`), an empty host or a port
/// outside 1..65535.
std::optional<parsed_url> parse_url(std::string_view url);

/// Returns `host:port` for an HTTP `Host` header, with brackets around IPv6
/// literals.
std::string host_header(const parsed_url& url);

/// Splits a request target into its percent-decoded path and query
/// parameters (`+` is a space; a repeated key keeps the last value).
void split_target(std::string_view target, std::string& path,
                  std::map<std::string, std::string>& query);

/// `url` with `key=<percent-encoded value>` added to its query (`key` is
/// taken as it is: callers pass literal names).
std::string with_query(std::string url, std::string_view key, std::string_view value);

} // namespace actor_host::wire
