#include "wire/url.hpp"

#include <boost/url/authority_view.hpp>
#include <boost/url/grammar/hexdig_chars.hpp>
#include <boost/url/params_view.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/pchars.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>

// Parsing, percent-decoding and query splitting are Boost.URL's. What is
// left here says how our two inputs differ from what RFC 3986 expects.
namespace actor_host::wire {

namespace urls = boost::urls;

namespace {

// What a request target may hold, escapes aside: path and query characters
// (RFC 3986 pchar, '/', '?'). '#' is not among them: a target has no
// fragment, so a '#' Beast admits is part of the path or a value.
constexpr auto target_chars = urls::pchars + '/' + '?';

bool starts_escape(std::string_view s, std::size_t i) {
  return s[i] == '%' && i + 2 < s.size() && urls::grammar::hexdig_chars(s[i + 1])
         && urls::grammar::hexdig_chars(s[i + 2]);
}

// Beast admits request targets that RFC 3986 does not: a '%' that starts no
// escape, '"', '{', '#', raw UTF-8 bytes. They have always been served, with
// those bytes standing for themselves, and a peer's odd target must keep
// meaning what it meant (a 404 of the same path, not a new kind of refusal).
// So they are escaped before Boost.URL reads the target. A target that is
// not origin-form ('*', "http://h/p", "h:443") has always been a path as a
// whole: a '/' in front makes it one, and is taken off after decoding.
// Returns false when `target` can be read as it is.
bool make_origin_form(std::string_view target, std::string& out) {
  const bool rooted = !target.empty() && target.front() == '/';
  bool clean = rooted;
  for (std::size_t i = 0; clean && i < target.size(); ++i)
    clean = target_chars(target[i]) || starts_escape(target, i);
  if (clean)
    return false;
  static constexpr char hex[] = "0123456789ABCDEF";
  out.reserve(target.size() + 16);
  if (!rooted)
    out += '/';
  for (std::size_t i = 0; i < target.size(); ++i) {
    const auto c = static_cast<unsigned char>(target[i]);
    if (target_chars(target[i]) || starts_escape(target, i)) {
      out += target[i];
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return true;
}

} // namespace

std::optional<parsed_url> parse_url(std::string_view url) {
  // The components are split here as RFC 3986 appendix B does, not by
  // parse_uri: Boost.URL 1.81 lets a path follow the authority without a '/'
  // (boostorg/url#636), so "ws://h:80x/" would be port 80 with target "x/",
  // and "1.2.3.4.nip.io" the address 1.2.3.4 with target ".nip.io".
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos)
    return std::nullopt;
  parsed_url result;
  result.scheme = url.substr(0, scheme_end);
  std::transform(result.scheme.begin(), result.scheme.end(), result.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (result.scheme != "http" && result.scheme != "https" && result.scheme != "ws"
      && result.scheme != "wss")
    return std::nullopt;
  auto rest = url.substr(scheme_end + 3);
  auto authority = rest.substr(0, rest.find_first_of("/?#"));
  auto tail = rest.substr(authority.size());
  // The target is held to RFC 3986: a configured URL with a space or a
  // stray '%' in it is refused, not guessed at.
  if (!tail.empty() && !urls::parse_relative_ref(tail))
    return std::nullopt;
  auto a = urls::parse_authority(authority);
  // 1.81 does not fall back to a name when a host starts like an IPv4
  // address ("1.2.3.4.nip.io"): read it as a name by putting a letter first.
  std::string lettered;
  if (!a && !authority.empty() && authority.front() >= '0' && authority.front() <= '9') {
    lettered = "x" + std::string{authority};
    a = urls::parse_authority(lettered);
    if (a && a->host_type() != urls::host_type::name)
      return std::nullopt;
  }
  // User info would put credentials on command lines and in logs; no caller
  // of this project needs it, so reject it instead of silently dropping it.
  // IPvFuture literals resolve to nothing.
  if (!a || a->has_userinfo() || a->host_type() == urls::host_type::ipvfuture)
    return std::nullopt;
  // IPv6 literals without their brackets: the form a resolver expects. A
  // name stays as written (as it always did): a decoded "%2F" or "%0D" has
  // no place in a Host header.
  result.host = a->encoded_host_address();
  if (!lettered.empty())
    result.host.erase(0, 1);
  if (result.host.empty())
    return std::nullopt;
  // RFC 3986 allows an empty port ("host:") and means the default. The
  // range is checked here: port_number() wraps past 65535 in 1.81.
  auto port = a->port();
  unsigned number = 0;
  if (port.empty())
    result.port = result.scheme == "https" || result.scheme == "wss" ? "443" : "80";
  else if (port.size() <= 5 && std::from_chars(port.data(), port.data() + port.size(), number).ec
                                   == std::errc{}
           && number >= 1 && number <= 65535)
    result.port = port;
  else
    return std::nullopt;
  // Path and query, without the fragment: it is never sent to a server.
  tail = tail.substr(0, tail.find('#'));
  result.target = tail.empty() || tail.front() != '/' ? "/" + std::string{tail} : std::string{tail};
  return result;
}

std::string host_header(const parsed_url& url) {
  if (url.host.find(':') != std::string::npos)
    return "[" + url.host + "]:" + url.port;
  return url.host + ":" + url.port;
}

namespace {

// A target that is a path of unreserved characters and single slashes, no
// query, no escapes, no dot segments: what Boost.URL would decode it to is
// itself. Every API call's request line is one; parsing it costs ~2 k
// instructions a request.
bool plain_path(std::string_view target) {
  if (target.empty() || target.front() != '/')
    return false;
  char previous = 0;
  for (char c : target) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                      || c == '-' || c == '_' || c == '~';
    if (!unreserved && c != '/' && c != '.')
      return false;
    if ((c == '/' || c == '.') && (previous == '/' || previous == '.'))
      return false; // "//", "/.", "./", "..": left to the parser
    previous = c;
  }
  return true;
}

} // namespace

void split_target(std::string_view target, std::string& path,
                  std::map<std::string, std::string>& query) {
  if (plain_path(target)) {
    path.assign(target);
    return;
  }
  std::string escaped;
  const bool as_is = !make_origin_form(target, escaped);
  auto r = urls::parse_origin_form(as_is ? target : escaped);
  if (!r) { // cannot happen after make_origin_form; read nothing rather than guess
    path.clear();
    return;
  }
  // '+' is a space in the path too: split_target has always decoded the path
  // like a form value.
  const urls::encoding_opts plus_is_space{true, false, false};
  path = r->encoded_path().decode(plus_is_space);
  if (target.empty() || target.front() != '/')
    path.erase(0, 1); // the '/' make_origin_form put in front
  for (auto p : r->params(plus_is_space))
    if (!p.key.empty() || p.has_value) // "a&&b" has an empty pair: nothing
      query[p.key] = p.value;
}

std::string with_query(std::string url, std::string_view key, std::string_view value) {
  static constexpr char hex[] = "0123456789ABCDEF";
  url += url.find('?') == std::string::npos ? '?' : '&';
  url += key;
  url += '=';
  for (char c : value) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      url += c;
    } else {
      url += '%';
      url += hex[u >> 4];
      url += hex[u & 15];
    }
  }
  return url;
}

} // namespace actor_host::wire
