#include "net/http_head.hpp"

#include <boost/beast/http/status.hpp>

#include <charconv>

namespace actor_host::net {

namespace {

std::string_view reason_view(int status) {
  if (status == 499)
    return "Client Closed Request";
  namespace http = boost::beast::http;
  auto r = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
  return r.empty() ? std::string_view{"Unknown"} : std::string_view{r.data(), r.size()};
}

// Decimal digits of `n` appended to `out`: no temporary string.
template <class Number>
void append_number(std::string& out, Number n) {
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
  out.append(digits, end);
}

} // namespace

std::string reason_phrase(int status) {
  return std::string{reason_view(status)};
}

bool header_safe(std::string_view v) {
  // A plain loop: find_first_of searches the three characters per byte.
  for (char c : v)
    if (c == '\r' || c == '\n' || c == '\0')
      return false;
  return true;
}

void append_response_head(std::string& out, const response_head& head,
                          std::vector<std::string>* dropped) {
  auto field = [&out](std::string_view name, std::string_view value) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  };
  // A response's head is written per call: appended in place, without the
  // temporaries `+` makes.
  out += "HTTP/1.1 ";
  append_number(out, head.status);
  out += ' ';
  out += reason_view(head.status);
  out += "\r\nServer: actor-host\r\n";
  if (!head.content_type.empty() && header_safe(head.content_type))
    field("Content-Type", head.content_type);
  if (head.length) {
    out += "Content-Length: ";
    append_number(out, *head.length);
    out += "\r\n";
  } else {
    field("Transfer-Encoding", "chunked");
  }
  if (!head.cors_origin.empty() && header_safe(head.cors_origin)) {
    field("Access-Control-Allow-Origin", head.cors_origin);
    field("Access-Control-Expose-Headers", "X-Genkit-Trace-Id");
    field("Vary", "Origin");
  }
  if (head.extra)
    for (auto& [k, v] : *head.extra) {
      if (header_safe(k) && header_safe(v))
        field(k, v);
      else if (dropped)
        dropped->push_back(k);
    }
  field("Connection", head.keep_alive ? "keep-alive" : "close");
  out += "\r\n"; // the end of the head
}

std::string refusal(int status, std::string_view text) {
  std::string body{text};
  body += '\n';
  return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status)
         + "\r\nServer: actor-host\r\nContent-Type: text/plain\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

} // namespace actor_host::net
