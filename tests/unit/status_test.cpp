#define CAF_SUITE status

#include <caf/test/unit_test.hpp>

#include "wire/status.hpp"

#include <string>

using actor_host::wire::http_status_for;
using actor_host::wire::status_code;
using actor_host::wire::status_from_name;
using actor_host::wire::status_from_number;
using actor_host::wire::status_name;

// One table serves names, numbers and HTTP statuses (the CLI reads codes
// by number and by name through it): each way must agree with the others.
CAF_TEST(names and numbers map to each other for every code) {
  for (int code = 0; code <= 16; ++code) {
    auto by_number = status_from_number(code);
    CAF_REQUIRE(by_number);
    CAF_CHECK_EQUAL(static_cast<int>(*by_number), code);
    auto by_name = status_from_name(status_name(code));
    CAF_REQUIRE(by_name);
    CAF_CHECK_EQUAL(static_cast<int>(*by_name), code);
  }
  CAF_CHECK_EQUAL(status_name(14), "UNAVAILABLE");
  CAF_CHECK(status_from_number(4) == status_code::deadline_exceeded);
  CAF_CHECK(status_from_name("NOT_FOUND") == status_code::not_found);
}

CAF_TEST(numbers outside the set are no code) {
  CAF_CHECK(!status_from_number(-1));
  CAF_CHECK(!status_from_number(17));
  CAF_CHECK(!status_from_number(1LL << 40));
  CAF_CHECK_EQUAL(status_name(17), "UNKNOWN");
  CAF_CHECK_EQUAL(status_name(-1), "UNKNOWN");
  CAF_CHECK_EQUAL(http_status_for(17), 500);
  CAF_CHECK_EQUAL(http_status_for(3), 400);
}
