#define CAF_SUITE runtime_info

#include <caf/test/unit_test.hpp>

#include "registry/runtime_info.hpp"

using actor_host::registry::parse_register_params;
using actor_host::registry::runtime_info;

namespace {

std::string refusal(const std::string& params) {
  auto info = parse_register_params(params);
  return info ? "<accepted>" : info.error();
}

} // namespace

CAF_TEST(integral pids are taken as they are) {
  auto info = parse_register_params(R"({"id":"a","pid":4242})");
  CAF_REQUIRE(info);
  CAF_CHECK_EQUAL(info->pid, 4242);
  info = parse_register_params(R"({"id":"a","pid":4.242e3})");
  CAF_REQUIRE(info);
  CAF_CHECK_EQUAL(info->pid, 4242);
  info = parse_register_params(R"({"id":"a","pid":-7})");
  CAF_REQUIRE(info);
  CAF_CHECK_EQUAL(info->pid, -7);
}

// UBSan in fuzz_reflection_v2 on a hand-written seed
// (fuzz/corpus/reflection_v2/register-pid-1e300): converting 1e300 to int64
// is undefined behaviour (UBSan aborts; a release build stored INT64_MIN).
CAF_TEST(pids out of range or not integral are refused) {
  auto expected = std::string{"'pid' must be a 64-bit integer"};
  CAF_CHECK_EQUAL(refusal(R"({"id":"a","pid":1e300})"), expected);
  CAF_CHECK_EQUAL(refusal(R"({"id":"a","pid":-1e300})"), expected);
  CAF_CHECK_EQUAL(refusal(R"({"id":"a","pid":9223372036854775808})"), expected);
  CAF_CHECK_EQUAL(refusal(R"({"id":"a","pid":42.5})"), expected);
  CAF_CHECK_EQUAL(refusal(R"({"id":"a","pid":"42"})"), "'pid' must be a number");
}
