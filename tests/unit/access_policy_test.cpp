#define CAF_SUITE access_policy

#include <caf/test/dsl.hpp>

#include "net/access_policy.hpp"
#include "wire/secure_random.hpp"

#include <map>
#include <string>

using namespace actor_host::net;

namespace {

struct head {
  std::string method = "GET";
  std::string path = "/api/runtimes";
  std::map<std::string, std::string> headers{{"host", "127.0.0.1:4100"}};
  std::map<std::string, std::string> query;
  std::string peer = "127.0.0.1";
  bool upgrade = false;

  access_verdict check(const access_policy& p) const {
    return check_access(p, {method, path, &headers, &query, peer, upgrade, {}});
  }
};

} // namespace

CAF_TEST(loopback origins) {
  CAF_CHECK(is_loopback_origin("http://localhost:4000"));
  CAF_CHECK(is_loopback_origin("http://localhost"));
  CAF_CHECK(is_loopback_origin("https://LOCALHOST:443"));
  CAF_CHECK(is_loopback_origin("http://app.localhost:3000"));
  CAF_CHECK(is_loopback_origin("http://127.0.0.1:4100"));
  CAF_CHECK(is_loopback_origin("http://127.1.2.3"));
  CAF_CHECK(is_loopback_origin("http://[::1]:4000"));
  CAF_CHECK(!is_loopback_origin("http://evil.example"));
  CAF_CHECK(!is_loopback_origin("http://localhost.evil.example"));
  CAF_CHECK(!is_loopback_origin("http://evillocalhost"));
  CAF_CHECK(!is_loopback_origin("http://127.0.0.1.evil.example"));
  CAF_CHECK(!is_loopback_origin("http://128.0.0.1"));
  CAF_CHECK(!is_loopback_origin("http://127.0.0.256"));
  CAF_CHECK(!is_loopback_origin("null"));
  CAF_CHECK(!is_loopback_origin("file://"));
  CAF_CHECK(!is_loopback_origin("ftp://localhost"));
  CAF_CHECK(!is_loopback_origin("http://localhost:4000/path"));
  CAF_CHECK(!is_loopback_origin("http://localhost:"));
  CAF_CHECK(!is_loopback_origin("http://localhost:abc"));
  CAF_CHECK(!is_loopback_origin("http://[::2]:4000"));
  // What crashed the regex: a port of 28,000 digits. A literal parse says no.
  CAF_CHECK(!is_loopback_origin("http://localhost:" + std::string(28000, '1')));
  CAF_CHECK(!is_loopback_origin("http://localhost:" + std::string(1000000, '9')));
}

CAF_TEST(configured origins) {
  access_policy p;
  p.allowed_origins = {"https://ui.example.com/"};
  CAF_CHECK(origin_allowed(p, "https://UI.example.com"));
  CAF_CHECK(!origin_allowed(p, "http://ui.example.com"));
  CAF_CHECK(!origin_allowed(p, "https://ui.example.com.evil"));
  p.allowed_origins = {"*"};
  CAF_CHECK(origin_allowed(p, "https://anything.example"));
}

CAF_TEST(hosts) {
  access_policy p;
  p.bind = "10.0.0.5";
  CAF_CHECK(host_allowed(p, "localhost:4100"));
  CAF_CHECK(host_allowed(p, "LocalHost"));
  CAF_CHECK(host_allowed(p, "127.0.0.1:4100"));
  CAF_CHECK(host_allowed(p, "[::1]:4100"));
  CAF_CHECK(host_allowed(p, "10.0.0.5:4100"));
  CAF_CHECK(!host_allowed(p, "evil.example"));
  CAF_CHECK(!host_allowed(p, "evil.example:4100"));
  CAF_CHECK(!host_allowed(p, "localhost:" + std::string(28000, '1')));
  CAF_CHECK(!host_allowed(p, ""));
  p.bind = "0.0.0.0";
  CAF_CHECK(!host_allowed(p, "0.0.0.0:4100"));
  p.allowed_hosts = {"actor-host.prod.svc", "10.1.2.3"};
  CAF_CHECK(host_allowed(p, "actor-host.prod.svc:4100"));
  CAF_CHECK(host_allowed(p, "10.1.2.3:4100"));
  CAF_CHECK(!host_allowed(p, "other.svc:4100"));
  p.allowed_hosts = {"*"};
  CAF_CHECK(host_allowed(p, "whatever:1"));
}

CAF_TEST(addresses and tokens) {
  CAF_CHECK(is_loopback_address("127.0.0.1"));
  CAF_CHECK(is_loopback_address("127.9.9.9"));
  CAF_CHECK(is_loopback_address("::1"));
  CAF_CHECK(is_loopback_address("::ffff:127.0.0.1"));
  CAF_CHECK(!is_loopback_address("10.0.0.1"));
  CAF_CHECK(!is_loopback_address("::ffff:10.0.0.1"));
  CAF_CHECK(!is_loopback_address(""));
  CAF_CHECK(actor_host::wire::secrets_equal("abc", "abc"));
  CAF_CHECK(!actor_host::wire::secrets_equal("abc", "abd"));
  CAF_CHECK(!actor_host::wire::secrets_equal("abc", "abcd"));
  CAF_CHECK_EQUAL(bearer_token("Bearer s3cret"), "s3cret");
  CAF_CHECK_EQUAL(bearer_token("bearer  s3cret "), "s3cret");
  CAF_CHECK_EQUAL(bearer_token("Basic czNjcmV0"), "");
  CAF_CHECK_EQUAL(url_with_token("ws://localhost:3200", "a b/c"),
                  "ws://localhost:3200?token=a%20b%2Fc");
  CAF_CHECK_EQUAL(url_with_token("ws://h:1/p?x=1", "t"), "ws://h:1/p?x=1&token=t");
  CAF_CHECK_EQUAL(redact_token("ws://h:1/?x=1&token=secret&y=2"), "ws://h:1/?x=1&token=***&y=2");
  CAF_CHECK_EQUAL(redact_token("ws://h:1?token=secret"), "ws://h:1?token=***");
  CAF_CHECK_EQUAL(split_list(" a, ,b ,"), (std::vector<std::string>{"a", "b"}));
}

CAF_TEST(origin and host decide first) {
  access_policy p;
  head h;
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  CAF_CHECK(!h.check(p).cors);
  h.headers["origin"] = "http://localhost:4000";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  CAF_CHECK(h.check(p).cors);
  h.headers["origin"] = "http://evil.example";
  auto v = h.check(p);
  CAF_CHECK_EQUAL(v.status, 403);
  CAF_CHECK(v.message.find("Origin 'http://evil.example'") != std::string::npos);
  h.headers.erase("origin");
  h.headers["host"] = "evil.example";
  v = h.check(p);
  CAF_CHECK_EQUAL(v.status, 403);
  CAF_CHECK(v.message.find("allowed_hosts") != std::string::npos);
  h.headers.erase("host");
  CAF_CHECK_EQUAL(h.check(p).status, 403);
}

// <img src="http://127.0.0.1:4100/api/listTraces..."> on another site: the
// browser sends no Origin on such a GET, only Sec-Fetch-Site (it was served).
CAF_TEST(a request a page of another site made is refused unless its origin is admitted) {
  access_policy p;
  head h;
  for (auto site : {"cross-site", "same-site"}) {
    h.headers["sec-fetch-site"] = site;
    auto v = h.check(p);
    CAF_CHECK_EQUAL(v.status, 403);
    CAF_CHECK(v.message.find(std::string{"Sec-Fetch-Site: "} + site) != std::string::npos);
    h.method = "POST";
    CAF_CHECK_EQUAL(h.check(p).status, 403);
    h.method = "GET";
  }
  // Typed into the address bar, or the dashboard's own requests.
  for (auto site : {"none", "same-origin"}) {
    h.headers["sec-fetch-site"] = site;
    CAF_CHECK_EQUAL(h.check(p).status, 0);
  }
  // Another site's fetch with an admitted Origin (CORS) is served.
  p.allowed_origins = {"https://ui.example.com"};
  h.headers["sec-fetch-site"] = "cross-site";
  h.headers["origin"] = "https://ui.example.com";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
}

CAF_TEST(a deciding header sent twice is refused) {
  access_policy p;
  head h;
  for (auto name : {"host", "origin", "content-type", "authorization", "sec-fetch-site"}) {
    CAF_CHECK(is_singleton_header(name));
    auto v = check_access(p, {h.method, h.path, &h.headers, &h.query, h.peer, h.upgrade, name});
    CAF_CHECK_EQUAL(v.status, 400);
    CAF_CHECK_EQUAL(v.message, "Bad Request: the " + std::string{name}
                                 + " header is sent more than once.");
  }
  CAF_CHECK(!is_singleton_header("accept"));
}

CAF_TEST(without a token only loopback peers) {
  access_policy p;
  head h;
  h.peer = "10.0.0.9";
  auto v = h.check(p);
  CAF_CHECK_EQUAL(v.status, 403);
  CAF_CHECK(v.message.find("auth_token_file") != std::string::npos);
  p.remote_without_token = true;
  CAF_CHECK_EQUAL(h.check(p).status, 0);
}

CAF_TEST(tokens) {
  access_policy p;
  p.token = "s3cret";
  head h;
  h.peer = "10.0.0.9";
  auto v = h.check(p);
  CAF_CHECK_EQUAL(v.status, 401);
  CAF_CHECK(v.message.find("Authorization: Bearer") != std::string::npos);
  h.headers["authorization"] = "Bearer wrong";
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  h.headers["authorization"] = "Bearer s3cret";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.headers["authorization"] = "Token s3cret";
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  // The query only where runtimes dial in, and only for upgrades.
  h.headers.erase("authorization");
  h.query["token"] = "s3cret";
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  p.token_in_query = true;
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  h.upgrade = true;
  v = h.check(p);
  CAF_CHECK_EQUAL(v.status, 0);
  CAF_CHECK(v.token_from_query);
  h.query["token"] = "nope";
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  // Open paths and preflights need none, but still the Origin rule.
  h.upgrade = false;
  h.query.clear();
  p.open_paths = {"/healthz", "/ws/channels/"};
  h.path = "/healthz";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.path = "/ws/channels/abc";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.path = "/healthzz";
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  // "/" is the root page, not a prefix of every path.
  p.open_paths = {"/", "/ui/"};
  h.path = "/";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.path = "/ui/app.js";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.path = "/api/runtimes";
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  h.method = "OPTIONS";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.headers["origin"] = "http://evil.example";
  CAF_CHECK_EQUAL(h.check(p).status, 403);
}

CAF_TEST(a token in the path reaches the exporter routes only) {
  access_policy p;
  p.token = "s3cret";
  p.json_posts = true;
  head h;
  h.peer = "10.0.0.9";
  h.method = "POST";
  h.headers["content-type"] = "application/json";
  h.path = "/t/s3cret/api/traces";
  // Without routes for it, the path is no credential.
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  p.token_path_routes = {"/api/traces", "/api/otlp/v1/traces"};
  auto v = h.check(p);
  CAF_CHECK_EQUAL(v.status, 0);
  CAF_CHECK_EQUAL(v.token_path_length, std::string{"/t/s3cret"}.size());
  h.path = "/t/s3cret/api/otlp/v1/traces";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.path = "/t/wrong/api/traces";
  CAF_CHECK_EQUAL(h.check(p).status, 401);
  h.path = "/t/s3cret/api/runAction";
  CAF_CHECK_EQUAL(h.check(p).status, 404);
  h.path = "/t/s3cret";
  CAF_CHECK_EQUAL(h.check(p).status, 404);
  h.path = "/t/s3cret/api/traces";
  h.method = "GET";
  CAF_CHECK_EQUAL(h.check(p).status, 404);
  // Still a JSON POST under the Origin rules.
  h.method = "POST";
  h.headers["content-type"] = "text/plain";
  CAF_CHECK_EQUAL(h.check(p).status, 415);
  h.headers["content-type"] = "application/json";
  h.headers["origin"] = "http://evil.example";
  CAF_CHECK_EQUAL(h.check(p).status, 403);
  // What may stand in a path as it is, and log lines without the token.
  CAF_CHECK(token_fits_path("abc-DEF_0.9~+="));
  for (auto bad : {"", "a/b", "a b", "a%2F", "a?b", "a#b"})
    CAF_CHECK(!token_fits_path(bad));
  CAF_CHECK(!token_fits_path(std::string(513, 'a')));
  CAF_CHECK_EQUAL(loggable_path("/t/s3cret/api/traces"), "/t/<token>/api/traces");
  CAF_CHECK_EQUAL(loggable_path("/t/s3cret"), "/t/<token>");
  CAF_CHECK_EQUAL(loggable_path("/api/traces"), "/api/traces");
  // The token sent under another spelling of the prefix is not served, but hidden all the same.
  CAF_CHECK_EQUAL(loggable_path("/T/s3cret/api/traces"), "/t/<token>/api/traces");
}

CAF_TEST(json posts) {
  access_policy p;
  p.json_posts = true;
  head h;
  h.method = "POST";
  h.path = "/api/runAction";
  CAF_CHECK_EQUAL(h.check(p).status, 415);
  h.headers["content-type"] = "text/plain";
  CAF_CHECK_EQUAL(h.check(p).status, 415);
  h.headers["content-type"] = "application/json; charset=utf-8";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.headers["content-type"] = "Application/JSON";
  CAF_CHECK_EQUAL(h.check(p).status, 0);
  h.headers["content-type"] = "application/jsonp";
  CAF_CHECK_EQUAL(h.check(p).status, 415);
}
