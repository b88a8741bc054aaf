#include "net/url.hpp"

#include <algorithm>
#include <cctype>

namespace actor_host::net {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

std::string percent_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() && hex_value(in[i + 1]) >= 0 && hex_value(in[i + 2]) >= 0) {
      out += static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

std::string to_lower(std::string_view str) {
  std::string result{str};
  std::transform(result.begin(), result.end(), result.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return result;
}

std::string_view default_port(std::string_view scheme) {
  return scheme == "https" || scheme == "wss" ? "443" : "80";
}

bool valid_port(std::string_view port) {
  if (port.empty() || port.size() > 5)
    return false;
  unsigned value = 0;
  for (auto c : port) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  return value >= 1 && value <= 65535;
}

} // namespace

std::optional<parsed_url> parse_url(std::string_view url) {
  parsed_url result;
  // Scheme.
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos)
    return std::nullopt;
  result.scheme = to_lower(url.substr(0, scheme_end));
  if (result.scheme != "http" && result.scheme != "https" && result.scheme != "ws"
      && result.scheme != "wss")
    return std::nullopt;
  auto rest = url.substr(scheme_end + 3);
  // Authority ends at the first '/', '?' or '#'.
  auto authority_end = rest.find_first_of("/?#");
  auto authority = rest.substr(0, authority_end);
  auto tail = authority_end == std::string_view::npos ? std::string_view{}
                                                      : rest.substr(authority_end);
  // User info would put credentials on command lines and in logs; no caller
  // of this project needs it, so reject it instead of silently dropping it.
  if (authority.find('@') != std::string_view::npos)
    return std::nullopt;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    // IPv6 literal: [addr] or [addr]:port.
    auto close = authority.find(']');
    if (close == std::string_view::npos)
      return std::nullopt;
    result.host = std::string{authority.substr(1, close - 1)};
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':')
        return std::nullopt;
      port = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      result.host = std::string{authority.substr(0, colon)};
      port = authority.substr(colon + 1);
    } else {
      result.host = std::string{authority};
    }
    // A second colon means an unbracketed IPv6 literal: ambiguous, reject.
    if (result.host.find(':') != std::string::npos)
      return std::nullopt;
  }
  if (result.host.empty())
    return std::nullopt;
  // RFC 3986 allows an empty port ("host:") and means the default.
  if (port.empty())
    result.port = std::string{default_port(result.scheme)};
  else if (valid_port(port))
    result.port = std::string{port};
  else
    return std::nullopt;
  // Target: path and query, without the fragment.
  tail = tail.substr(0, tail.find('#'));
  if (tail.empty() || tail.front() != '/')
    result.target = "/" + std::string{tail};
  else
    result.target = std::string{tail};
  return result;
}

std::string host_header(const parsed_url& url) {
  if (url.host.find(':') != std::string::npos)
    return "[" + url.host + "]:" + url.port;
  return url.host + ":" + url.port;
}

void split_target(std::string_view target, std::string& path,
                  std::map<std::string, std::string>& query) {
  auto q = target.find('?');
  path = percent_decode(target.substr(0, q));
  if (q == std::string_view::npos)
    return;
  auto rest = target.substr(q + 1);
  while (!rest.empty()) {
    auto amp = rest.find('&');
    auto pair = rest.substr(0, amp);
    auto eq = pair.find('=');
    if (!pair.empty())
      query[percent_decode(pair.substr(0, eq))]
        = eq == std::string_view::npos ? std::string{} : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos)
      break;
    rest = rest.substr(amp + 1);
  }
}

} // namespace actor_host::net
