#include "net/access_policy.hpp"

#include "wire/secure_random.hpp"
#include "wire/url.hpp"

#include <boost/asio/ip/address.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace actor_host::net {

namespace {

// ASCII only, as the names and schemes compared here are; std::tolower is a
// call per character and checked on every request.
char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return ascii_lower(x) == ascii_lower(y);
         });
}

bool iends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A port of 1 to 5 digits (the value is not checked: a long run of digits is
// what crashed the old regex, here it is just "no").
bool valid_port(std::string_view s) {
  return all_digits(s) && s.size() <= 5;
}

// Dotted quad, each part 0-255, no leading sign; first part 127.
bool is_loopback_ipv4(std::string_view s) {
  int parts = 0;
  while (true) {
    auto dot = s.find('.');
    auto part = s.substr(0, dot);
    if (!all_digits(part) || part.size() > 3)
      return false;
    int value = 0;
    for (char c : part)
      value = value * 10 + (c - '0');
    if (value > 255)
      return false;
    if (parts == 0 && part != "127")
      return false;
    ++parts;
    if (dot == std::string_view::npos)
      break;
    s.remove_prefix(dot + 1);
  }
  return parts == 4;
}

bool is_loopback_name(std::string_view host) {
  return iequals(host, "localhost") || iends_with(host, ".localhost") || is_loopback_ipv4(host)
         || host == "[::1]";
}

// Splits "host[:port]" ("[v6]:port" keeps its brackets). False when the port
// part is malformed.
bool split_host_port(std::string_view hp, std::string_view& host, std::string_view& port) {
  port = {};
  if (hp.starts_with('[')) {
    auto close = hp.find(']');
    if (close == std::string_view::npos)
      return false;
    host = hp.substr(0, close + 1);
    auto rest = hp.substr(close + 1);
    if (rest.empty())
      return true;
    if (rest.front() != ':')
      return false;
    port = rest.substr(1);
    return valid_port(port);
  }
  auto colon = hp.find(':');
  host = hp.substr(0, colon);
  if (colon == std::string_view::npos)
    return !host.empty();
  port = hp.substr(colon + 1);
  return !host.empty() && valid_port(port);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

const std::string* find(const std::map<std::string, std::string>* m, const std::string& key) {
  if (!m)
    return nullptr;
  auto i = m->find(key);
  return i == m->end() ? nullptr : &i->second;
}

bool is_open_path(const access_policy& p, std::string_view path) {
  return std::any_of(p.open_paths.begin(), p.open_paths.end(), [&](const std::string& o) {
    return o.size() > 1 && o.ends_with('/') ? path.starts_with(o) : path == o;
  });
}

bool is_json_content_type(std::string_view ct) {
  auto semi = ct.find(';');
  return iequals(trim(ct.substr(0, semi)), "application/json");
}

access_verdict refuse(int status, std::string message) {
  return {status, std::move(message), false, false};
}

} // namespace

bool is_loopback_origin(std::string_view origin) {
  std::string_view rest;
  if (origin.size() > 7 && iequals(origin.substr(0, 7), "http://"))
    rest = origin.substr(7);
  else if (origin.size() > 8 && iequals(origin.substr(0, 8), "https://"))
    rest = origin.substr(8);
  else
    return false;
  std::string_view host, port;
  return split_host_port(rest, host, port) && is_loopback_name(host);
}

bool origin_allowed(const access_policy& policy, std::string_view origin) {
  if (is_loopback_origin(origin))
    return true;
  auto o = origin;
  if (o.ends_with('/'))
    o.remove_suffix(1);
  return std::any_of(policy.allowed_origins.begin(), policy.allowed_origins.end(),
                     [&](const std::string& a) {
                       std::string_view v = a;
                       if (v.ends_with('/'))
                         v.remove_suffix(1);
                       return v == "*" || iequals(v, o);
                     });
}

bool host_allowed(const access_policy& policy, std::string_view host_header) {
  std::string_view host, port;
  if (!split_host_port(host_header, host, port))
    return false;
  if (is_loopback_name(host))
    return true;
  auto bare = host;
  if (bare.starts_with('[') && bare.ends_with(']'))
    bare = bare.substr(1, bare.size() - 2);
  if (!policy.bind.empty() && iequals(bare, policy.bind) && policy.bind != "0.0.0.0"
      && policy.bind != "::")
    return true;
  return std::any_of(policy.allowed_hosts.begin(), policy.allowed_hosts.end(),
                     [&](const std::string& a) {
                       std::string_view v = a;
                       if (v.starts_with('[') && v.ends_with(']'))
                         v = v.substr(1, v.size() - 2);
                       return v == "*" || iequals(v, bare) || iequals(a, host_header);
                     });
}

bool is_loopback_address(std::string_view ip) {
  boost::system::error_code ec;
  auto a = boost::asio::ip::make_address(std::string{ip}, ec);
  if (ec)
    return false;
  if (a.is_v6() && a.to_v6().is_v4_mapped())
    return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, a.to_v6()).is_loopback();
  return a.is_loopback();
}

std::string_view bearer_token(std::string_view authorization) {
  auto v = trim(authorization);
  if (v.size() < 7 || !iequals(v.substr(0, 7), "bearer "))
    return {};
  return trim(v.substr(7));
}

std::string url_with_token(const std::string& url, std::string_view token) {
  return wire::with_query(url, "token", token);
}

std::string redact_token(std::string url) {
  auto q = url.find('?');
  if (q == std::string::npos)
    return url;
  for (auto pos = q; pos != std::string::npos && pos < url.size();) {
    auto start = pos + 1;
    if (url.compare(start, 6, "token=") == 0) {
      auto end = url.find_first_of("&#", start);
      url.replace(start + 6, (end == std::string::npos ? url.size() : end) - start - 6, "***");
    }
    pos = url.find('&', start);
  }
  return url;
}

std::string read_token_file(const std::string& path, std::string& token) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return "cannot read auth_token_file " + path;
  std::ostringstream ss;
  ss << in.rdbuf();
  auto t = ss.str();
  auto first = t.find_first_not_of(" \t\r\n");
  auto last = t.find_last_not_of(" \t\r\n");
  if (first == std::string::npos)
    return "auth_token_file " + path + " is empty";
  t = t.substr(first, last - first + 1);
  // Printable ASCII: it travels in a header and in a URL query.
  for (char c : t)
    if (c < 0x21 || c > 0x7e)
      return "auth_token_file " + path
             + ": the token must be one line of printable ASCII without spaces";
  token = std::move(t);
  return {};
}

std::vector<std::string> split_list(std::string_view csv) {
  std::vector<std::string> out;
  while (!csv.empty()) {
    auto comma = csv.find(',');
    auto item = trim(csv.substr(0, comma));
    if (!item.empty())
      out.emplace_back(item);
    if (comma == std::string_view::npos)
      break;
    csv.remove_prefix(comma + 1);
  }
  return out;
}

bool token_fits_path(std::string_view token) {
  if (token.empty() || token.size() > 512)
    return false;
  for (char c : token)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '~'
        && c != '+' && c != '=' && c != '-')
      return false;
  return true;
}

std::string loggable_path(std::string_view path) {
  // Only "/t/" is a token route, but a token sent as "/T/<token>" (a client
  // that upper-cased the path) is still a secret: hidden as well.
  if (path.size() < token_path_prefix.size()
      || !iequals(path.substr(0, token_path_prefix.size()), token_path_prefix))
    return std::string{path.substr(0, 200)};
  auto end = path.find('/', token_path_prefix.size());
  auto rest = end == std::string_view::npos ? std::string_view{} : path.substr(end);
  return std::string{token_path_prefix} + "<token>" + std::string{rest.substr(0, 200)};
}

bool is_singleton_header(std::string_view name) {
  return name == "host" || name == "origin" || name == "content-type" || name == "authorization"
         || name == "sec-fetch-site";
}

access_verdict check_access(const access_policy& p, const access_request& req) {
  if (!req.duplicate_header.empty())
    return refuse(400, "Bad Request: the " + std::string{req.duplicate_header}
                         + " header is sent more than once.");
  auto* host = find(req.headers, "host");
  if (!host)
    return refuse(403, "Forbidden: the request has no Host header.");
  if (!host_allowed(p, *host))
    return refuse(403, "Forbidden: Host '" + host->substr(0, 256)
                         + "' is not a name of this server (loopback names and the bind "
                           "address are; add it to allowed_hosts to serve it).");
  bool cors = false;
  if (auto* origin = find(req.headers, "origin")) {
    if (!origin_allowed(p, *origin))
      return refuse(403, "Forbidden: Origin '" + origin->substr(0, 256)
                           + "' may not use this server (loopback origins may; add it to "
                             "allowed_origins to admit it).");
    cors = true;
  }
  // A page of another site makes the browser send GETs with no Origin (an
  // <img>, a <script>, a link): only Sec-Fetch-Site tells them apart, and
  // nothing here is meant for such a page. Another site's fetch that gets
  // in has an admitted Origin (CORS).
  if (auto* site = find(req.headers, "sec-fetch-site");
      site && !cors && (*site == "cross-site" || *site == "same-site"))
    return refuse(403, "Forbidden: a request a page of another site made (Sec-Fetch-Site: "
                         + *site + ") is served only to an admitted Origin (allowed_origins).");
  access_verdict ok{0, {}, false, cors};
  // A preflight carries no credentials; it only tells an admitted origin
  // what it may send.
  if (req.method == "OPTIONS" && !req.upgrade)
    return ok;
  if (is_open_path(p, req.path))
    return ok;
  if (!p.token.empty() && !p.token_path_routes.empty() && req.path.starts_with(token_path_prefix)) {
    auto rest = req.path.substr(token_path_prefix.size());
    auto slash = rest.find('/');
    auto given = rest.substr(0, slash);
    auto route = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
    bool known = false;
    for (auto& r : p.token_path_routes)
      known = known || r == route;
    if (!known || req.method != "POST" || req.upgrade)
      return refuse(404, "Not Found: a token in the path is taken for POST to the trace "
                         "exporter routes only.");
    if (!wire::secrets_equal(given, p.token))
      return refuse(401, "Unauthorized: wrong token.");
    ok.token_path_length = token_path_prefix.size() + given.size();
  } else if (!p.token.empty()) {
    std::string_view given;
    if (auto* auth = find(req.headers, "authorization")) {
      given = bearer_token(*auth);
      if (given.empty())
        return refuse(401, "Unauthorized: the Authorization header is not 'Bearer <token>'.");
    } else if (auto* q = find(req.query, "token"); q && req.upgrade && p.token_in_query) {
      given = *q;
      ok.token_from_query = true;
    }
    if (given.empty())
      return refuse(401, std::string{"Unauthorized: this server needs a token: send "
                                     "'Authorization: Bearer <token>'"}
                           + (p.token_in_query ? " or add ?token=<token> to the URL." : ".")
                           + " The token is in the manager's auth_token_file.");
    if (!wire::secrets_equal(given, p.token))
      return refuse(401, "Unauthorized: wrong token.");
  } else if (!p.remote_without_token
             && !(req.peer_loopback ? *req.peer_loopback : is_loopback_address(req.peer_address))) {
    return refuse(403, "Forbidden: without auth_token_file only loopback peers are served; "
                       "configure a token to admit " + std::string{req.peer_address} + ".");
  }
  if (p.json_posts && req.method == "POST") {
    auto* ct = find(req.headers, "content-type");
    if (!ct || !is_json_content_type(*ct))
      return refuse(415, "Unsupported Media Type: POST bodies must be sent with "
                         "'Content-Type: application/json'.");
  }
  return ok;
}

} // namespace actor_host::net
