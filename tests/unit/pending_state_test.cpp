#define CAF_SUITE pending_state

#include "actors/dispatch/pending_request.hpp"

#include <caf/test/unit_test.hpp>

using namespace actor_host;

// 100,000 calls in flight are 100,000 of these (bench/runs/2026-12-07-pending.md):
// glibc hands out blocks in steps of 16 bytes, so 8 bytes more here can cost 16 a call.
CAF_TEST(a pending request keeps its state within 144 bytes) {
  CAF_CHECK_LESS_OR_EQUAL(sizeof(pending_state), 144u);
}
