#define CAF_SUITE http_head

#include <caf/test/unit_test.hpp>

#include "net/http_head.hpp"

#include <string>
#include <vector>

using namespace actor_host::net;

namespace {

std::string head_of(response_head h, std::vector<std::string>* dropped = nullptr) {
  std::string out;
  append_response_head(out, h, dropped);
  return out;
}

// Lines of a head, without the blank line that ends it.
std::vector<std::string> lines_of(const std::string& head) {
  std::vector<std::string> out;
  std::size_t i = 0;
  for (auto j = head.find("\r\n"); j != std::string::npos; j = head.find("\r\n", i)) {
    out.emplace_back(head.substr(i, j - i));
    i = j + 2;
  }
  if (!out.empty() && out.back().empty())
    out.pop_back();
  return out;
}

} // namespace

CAF_TEST(a head is written field by field) {
  http_headers extra{{"X-Genkit-Trace-Id", "abc123"}};
  auto h = head_of({200, "application/json", std::size_t{2}, "http://localhost:4000", &extra,
                    true});
  CAF_CHECK_EQUAL(h, "HTTP/1.1 200 OK\r\n"
                     "Server: actor-host\r\n"
                     "Content-Type: application/json\r\n"
                     "Content-Length: 2\r\n"
                     "Access-Control-Allow-Origin: http://localhost:4000\r\n"
                     "Access-Control-Expose-Headers: X-Genkit-Trace-Id\r\n"
                     "Vary: Origin\r\n"
                     "X-Genkit-Trace-Id: abc123\r\n"
                     "Connection: keep-alive\r\n\r\n");
  auto chunked = head_of({499, "", std::nullopt, "", nullptr, false});
  CAF_CHECK_EQUAL(chunked, "HTTP/1.1 499 Client Closed Request\r\n"
                           "Server: actor-host\r\n"
                           "Transfer-Encoding: chunked\r\n"
                           "Connection: close\r\n\r\n");
}

CAF_TEST(a peer-provided value with CR or LF never makes a header of its own) {
  // A trace id (or any value a peer chose) that smuggles a header line.
  for (const auto& bad : std::vector<std::string>{
         "abc\r\nSet-Cookie: owned=1", "abc\nSet-Cookie: owned=1", "abc\rSet-Cookie: owned=1",
         std::string{"abc\0Set-Cookie: x", 17}}) {
    http_headers extra{{"X-Genkit-Trace-Id", bad}, {"X-Other", "fine"}};
    std::vector<std::string> dropped;
    auto h = head_of({200, "application/json", std::size_t{0}, "", &extra, true}, &dropped);
    CAF_CHECK(h.find("Set-Cookie") == std::string::npos);
    CAF_CHECK(h.find("X-Genkit-Trace-Id") == std::string::npos);
    CAF_CHECK(h.find("X-Other: fine\r\n") != std::string::npos);
    CAF_CHECK_EQUAL(dropped, std::vector<std::string>{"X-Genkit-Trace-Id"});
    // Every line is still one of ours, and the head ends once.
    CAF_CHECK_EQUAL(lines_of(h).size(), 6u);
    CAF_CHECK_EQUAL(h.find("\r\n\r\n"), h.size() - 4);
  }
  // The name is checked as well as the value.
  http_headers bad_name{{"X-A\r\nSet-Cookie", "v"}};
  std::vector<std::string> dropped;
  auto h = head_of({200, "", std::size_t{0}, "", &bad_name, true}, &dropped);
  CAF_CHECK(h.find("Set-Cookie") == std::string::npos);
  CAF_CHECK_EQUAL(dropped.size(), 1u);
}

CAF_TEST(an unsafe content type or origin is left out) {
  auto h = head_of({200, "text/plain\r\nSet-Cookie: a=1", std::size_t{0},
                    "http://evil\r\nSet-Cookie: b=2", nullptr, true});
  CAF_CHECK(h.find("Set-Cookie") == std::string::npos);
  CAF_CHECK(h.find("Content-Type") == std::string::npos);
  CAF_CHECK(h.find("Access-Control-Allow-Origin") == std::string::npos);
  CAF_CHECK(header_safe("http://localhost:4000"));
  CAF_CHECK(!header_safe("a\rb"));
  CAF_CHECK(!header_safe("a\nb"));
  CAF_CHECK(!header_safe(std::string_view{"a\0b", 3}));
}

CAF_TEST(refusals are complete answers) {
  CAF_CHECK_EQUAL(refusal(503, "Too many connections"),
                  "HTTP/1.1 503 Service Unavailable\r\nServer: actor-host\r\n"
                  "Content-Type: text/plain\r\nContent-Length: 21\r\nConnection: close\r\n\r\n"
                  "Too many connections\n");
  CAF_CHECK_EQUAL(reason_phrase(404), "Not Found");
  CAF_CHECK_EQUAL(reason_phrase(499), "Client Closed Request");
}
