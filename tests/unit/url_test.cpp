#define CAF_SUITE url

#include <caf/test/unit_test.hpp>

#include "wire/url.hpp"

using actor_host::wire::host_header;
using actor_host::wire::parse_url;

CAF_TEST(full url) {
  auto url = parse_url("http://example.com:8080/api/ws?x=1#frag");
  CAF_REQUIRE(url.has_value());
  CAF_CHECK_EQUAL(url->scheme, "http");
  CAF_CHECK_EQUAL(url->host, "example.com");
  CAF_CHECK_EQUAL(url->port, "8080");
  CAF_CHECK_EQUAL(url->target, "/api/ws?x=1");
}

CAF_TEST(default ports and target) {
  auto http = parse_url("http://127.0.0.1");
  CAF_REQUIRE(http.has_value());
  CAF_CHECK_EQUAL(http->port, "80");
  CAF_CHECK_EQUAL(http->target, "/");
  auto https = parse_url("https://host/");
  CAF_REQUIRE(https.has_value());
  CAF_CHECK_EQUAL(https->port, "443");
  auto ws = parse_url("ws://host:/p");
  CAF_REQUIRE(ws.has_value());
  CAF_CHECK_EQUAL(ws->port, "80");
  CAF_CHECK_EQUAL(ws->target, "/p");
  auto wss = parse_url("WSS://host?q");
  CAF_REQUIRE(wss.has_value());
  CAF_CHECK_EQUAL(wss->scheme, "wss");
  CAF_CHECK_EQUAL(wss->port, "443");
  CAF_CHECK_EQUAL(wss->target, "/?q");
}

CAF_TEST(ipv6 literal) {
  auto url = parse_url("ws://[::1]:4100/api/ws");
  CAF_REQUIRE(url.has_value());
  CAF_CHECK_EQUAL(url->host, "::1");
  CAF_CHECK_EQUAL(url->port, "4100");
  CAF_CHECK_EQUAL(host_header(*url), "[::1]:4100");
  auto plain = parse_url("ws://localhost:4100");
  CAF_REQUIRE(plain.has_value());
  CAF_CHECK_EQUAL(host_header(*plain), "localhost:4100");
}

CAF_TEST(rejected urls) {
  CAF_CHECK(!parse_url(""));
  CAF_CHECK(!parse_url("127.0.0.1:4100"));
  CAF_CHECK(!parse_url("ftp://host/"));
  CAF_CHECK(!parse_url("http://"));
  CAF_CHECK(!parse_url("http://:80/"));
  CAF_CHECK(!parse_url("http://host:0/"));
  CAF_CHECK(!parse_url("http://host:65536/"));
  CAF_CHECK(!parse_url("http://host:12a/"));
  CAF_CHECK(!parse_url("http://user@host/"));
  CAF_CHECK(!parse_url("http://::1/"));
  CAF_CHECK(!parse_url("http://[::1/"));
}

CAF_TEST(split target decodes the path and the query) {
  std::string path;
  std::map<std::string, std::string> query;
  actor_host::wire::split_target("/ws/channels/a%2Fb?key=k%3D1+2&dir=read&flag&dir=write", path,
                                query);
  CAF_CHECK_EQUAL(path, "/ws/channels/a/b");
  CAF_CHECK_EQUAL(query["key"], "k=1 2");
  CAF_CHECK_EQUAL(query["dir"], "write"); // a repeated key keeps the last value
  CAF_CHECK_EQUAL(query.count("flag"), 1u);
  CAF_CHECK_EQUAL(query["flag"], "");
  query.clear();
  actor_host::wire::split_target("/", path, query);
  CAF_CHECK_EQUAL(path, "/");
  CAF_CHECK(query.empty());
}

// The plain paths API calls use skip the parser: they must read as the
// parser reads them, and the same path escaped must too.
CAF_TEST(plain paths read as the parser reads them) {
  std::string path;
  std::map<std::string, std::string> query;
  for (std::string_view t : {"/api/runAction", "/", "/api/v1.2/x_y-z~", "/a/b/"}) {
    actor_host::wire::split_target(t, path, query);
    CAF_CHECK_EQUAL(path, t);
    CAF_CHECK(query.empty());
  }
  std::string escaped;
  actor_host::wire::split_target("/api/run%41ction", escaped, query);
  CAF_CHECK_EQUAL(escaped, "/api/runAction");
  // What the shortcut leaves to the parser still gets there.
  actor_host::wire::split_target("/api/runAction?x=1", path, query);
  CAF_CHECK_EQUAL(path, "/api/runAction");
  CAF_CHECK_EQUAL(query["x"], "1");
  query.clear();
  actor_host::wire::split_target("/a+b", path, query);
  CAF_CHECK_EQUAL(path, "/a b");
}

CAF_TEST(ipv6 brackets) {
  auto v6 = parse_url("https://[2001:db8::1]:8443/a?b=c");
  CAF_REQUIRE(v6.has_value());
  CAF_CHECK_EQUAL(v6->host, "2001:db8::1");
  CAF_CHECK_EQUAL(v6->port, "8443");
  CAF_CHECK_EQUAL(v6->target, "/a?b=c");
  CAF_CHECK_EQUAL(host_header(*v6), "[2001:db8::1]:8443");
  auto bare = parse_url("ws://[::1]");
  CAF_REQUIRE(bare.has_value());
  CAF_CHECK_EQUAL(bare->host, "::1");
  CAF_CHECK_EQUAL(bare->port, "80");
  CAF_CHECK_EQUAL(bare->target, "/");
  auto v4 = parse_url("ws://127.0.0.1:4100");
  CAF_REQUIRE(v4.has_value());
  CAF_CHECK_EQUAL(host_header(*v4), "127.0.0.1:4100");
  CAF_CHECK(!parse_url("http://[::1]x/"));     // text after the bracket
  CAF_CHECK(!parse_url("http://[zz]/"));       // not an address
  CAF_CHECK(!parse_url("http://[v1.fe]/"));    // IPvFuture resolves to nothing
  CAF_CHECK(!parse_url("http://::1:80/"));     // unbracketed
}

CAF_TEST(percent decoding) {
  std::string path;
  std::map<std::string, std::string> query;
  actor_host::wire::split_target("/a%20b/c%2Fd%2f+e?x=%41%62&y=a+b%2Bc&%6B=v", path, query);
  CAF_CHECK_EQUAL(path, "/a b/c/d/ e"); // '+' is a space in the path too, as always
  CAF_CHECK_EQUAL(query["x"], "Ab");
  CAF_CHECK_EQUAL(query["y"], "a b+c");
  CAF_CHECK_EQUAL(query["k"], "v");
  // A URL's target stays encoded: it goes on the wire as it is.
  auto url = parse_url("http://host/a%20b?q=%41");
  CAF_REQUIRE(url.has_value());
  CAF_CHECK_EQUAL(url->target, "/a%20b?q=%41");
}

CAF_TEST(bad escapes in a request target stand for themselves) {
  std::string path;
  std::map<std::string, std::string> query;
  actor_host::wire::split_target("/a%zz%4?k=%g1&v=100%&w=%%41", path, query);
  CAF_CHECK_EQUAL(path, "/a%zz%4");
  CAF_CHECK_EQUAL(query["k"], "%g1");
  CAF_CHECK_EQUAL(query["v"], "100%");
  CAF_CHECK_EQUAL(query["w"], "%A");
  // Bytes RFC 3986 does not allow, as Beast admits them.
  query.clear();
  actor_host::wire::split_target("/caf\xc3\xa9/\"x\"{y}#z?q=a#b", path, query);
  CAF_CHECK_EQUAL(path, "/caf\xc3\xa9/\"x\"{y}#z");
  CAF_CHECK_EQUAL(query["q"], "a#b");
  // Targets that are not origin-form are a path as a whole.
  query.clear();
  actor_host::wire::split_target("http://h/p%41?x=1", path, query);
  CAF_CHECK_EQUAL(path, "http://h/pA");
  CAF_CHECK_EQUAL(query["x"], "1");
  actor_host::wire::split_target("*", path, query);
  CAF_CHECK_EQUAL(path, "*");
  actor_host::wire::split_target("", path, query);
  CAF_CHECK_EQUAL(path, "");
  // A configured URL is held to RFC 3986.
  CAF_CHECK(!parse_url("http://host/a%zz"));
  CAF_CHECK(!parse_url("http://host/a b"));
}

CAF_TEST(query splitting) {
  std::string path;
  std::map<std::string, std::string> query;
  actor_host::wire::split_target("/p?a=1&&b=2&=3&c&d=x=y&a=4&", path, query);
  CAF_CHECK_EQUAL(path, "/p");
  CAF_CHECK_EQUAL(query.size(), 5u);
  CAF_CHECK_EQUAL(query["a"], "4");
  CAF_CHECK_EQUAL(query["b"], "2");
  CAF_CHECK_EQUAL(query[""], "3"); // "=3": an empty key is still a key
  CAF_CHECK_EQUAL(query["c"], "");
  CAF_CHECK_EQUAL(query["d"], "x=y");
  query.clear();
  actor_host::wire::split_target("/p?", path, query);
  CAF_CHECK_EQUAL(path, "/p");
  CAF_CHECK(query.empty());
  actor_host::wire::split_target("/p?&", path, query);
  CAF_CHECK(query.empty());
  actor_host::wire::split_target("//double//slash?q?=?", path, query);
  CAF_CHECK_EQUAL(path, "//double//slash");
  CAF_CHECK_EQUAL(query["q?"], "?");
}
