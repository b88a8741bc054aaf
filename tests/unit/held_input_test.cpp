#define CAF_SUITE held_input

#include "actors/common/held_input.hpp"

#include <caf/test/unit_test.hpp>

#include <string>
#include <vector>

using namespace actor_host;

namespace {

/// What a release handed on: chunks as they are, "<end>" for the end.
std::vector<std::string> released(held_input& h) {
  std::vector<std::string> out;
  h.release([&](std::string&& chunk) { out.push_back(std::move(chunk)); },
            [&] { out.emplace_back("<end>"); });
  return out;
}

} // namespace

CAF_TEST(input is handed on in wire order with its end) {
  held_input h;
  CAF_CHECK(h.hold("1", 0));
  CAF_CHECK(h.hold("22", 0));
  h.hold_end();
  CAF_CHECK_EQUAL(h.size(), 3u);
  auto out = released(h);
  CAF_REQUIRE_EQUAL(out.size(), 3u);
  CAF_CHECK_EQUAL(out[0], "1");
  CAF_CHECK_EQUAL(out[1], "22");
  CAF_CHECK_EQUAL(out[2], "<end>");
  CAF_CHECK(h.empty());
}

CAF_TEST(a chunk past the cap is refused and nothing of it is held) {
  held_input h;
  CAF_CHECK(h.hold("abcd", 10));
  CAF_CHECK(h.hold("efghij", 10)); // exactly at the cap
  CAF_CHECK(!h.hold("k", 10));
  CAF_CHECK_EQUAL(h.size(), 2u);
  auto out = released(h);
  CAF_REQUIRE_EQUAL(out.size(), 2u);
  CAF_CHECK_EQUAL(out[1], "efghij");
}

CAF_TEST(a release frees the bytes it held for the cap) {
  held_input h;
  CAF_CHECK(h.hold("0123456789", 10));
  CAF_CHECK(!h.hold("x", 10));
  released(h);
  CAF_CHECK(h.hold("0123456789", 10));
}

CAF_TEST(cap zero holds without limit) {
  held_input h;
  for (int i = 0; i < 1000; ++i)
    CAF_CHECK(h.hold(std::string(1024, 'x'), 0));
  CAF_CHECK_EQUAL(h.size(), 1000u);
}
