#pragma once

// The text of the HTTP/1.1 answers the server writes itself: the head of a
// response and the short plain-text refusals. No sockets, no Beast here, so
// the header guard can be tested on its own.

#include "net/http_exchange.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace actor_host::net {

/// Beast's reason phrase ("OK", "Not Found", ...); "Client Closed Request" for 499.
std::string reason_phrase(int status);

/// True if `v` can stand in a header line: CR, LF or NUL would end the
/// header (or the head) early and let whoever chose the value write headers
/// of their own.
bool header_safe(std::string_view v);

/// What goes into a response head besides the fixed Server header.
struct response_head {
  int status = 200;
  std::string_view content_type;         // empty: no Content-Type
  std::optional<std::size_t> length;     // none: chunked
  std::string_view cors_origin;          // empty: no CORS headers
  const http_headers* extra = nullptr;   // more headers, e.g. X-Genkit-Trace-Id
  bool keep_alive = true;
};

/// Appends the status line and the headers of `head` to `out`, up to and
/// including the blank line. A value that is not header_safe never reaches
/// the wire: an unsafe Content-Type or CORS origin is left out, and so is an
/// extra header with an unsafe name or value (its name goes to `dropped`).
void append_response_head(std::string& out, const response_head& head,
                          std::vector<std::string>* dropped = nullptr);

/// A complete "Connection: close" answer with a plain-text body, written
/// before (or instead of) any HTTP session: refused connections, plaintext
/// on a TLS port.
std::string refusal(int status, std::string_view text);

} // namespace actor_host::net
