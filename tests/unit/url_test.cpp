#define CAF_SUITE url

#include <caf/test/unit_test.hpp>

#include "net/url.hpp"

using actor_host::net::host_header;
using actor_host::net::parse_url;

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
  actor_host::net::split_target("/ws/channels/a%2Fb?key=k%3D1+2&dir=read&flag&dir=write", path,
                                query);
  CAF_CHECK_EQUAL(path, "/ws/channels/a/b");
  CAF_CHECK_EQUAL(query["key"], "k=1 2");
  CAF_CHECK_EQUAL(query["dir"], "write"); // a repeated key keeps the last value
  CAF_CHECK_EQUAL(query.count("flag"), 1u);
  CAF_CHECK_EQUAL(query["flag"], "");
  query.clear();
  actor_host::net::split_target("/", path, query);
  CAF_CHECK_EQUAL(path, "/");
  CAF_CHECK(query.empty());
}
