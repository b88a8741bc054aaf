#define CAF_SUITE packed_trace_id

#include "actors/common/packed_trace_id.hpp"

#include <caf/test/unit_test.hpp>

using namespace actor_host;

CAF_TEST(a trace id comes back as it was given) {
  for (std::string text : {"4bf92f3577b34da6a3ce929d0e0e4736", "00000000000000000000000000000000",
                           "ffffffffffffffffffffffffffffffff", "4BF92F3577B34DA6A3CE929D0E0E4736",
                           "4bf92f3577b34da6a3ce929d0e0e473", "4bf92f3577b34da6a3ce929d0e0e47360",
                           "4bf92f3577b34da6a3ce929d0e0e473g", "run-1", "x"}) {
    packed_trace_id id;
    id.assign(text);
    CAF_CHECK(!id.empty());
    CAF_CHECK_EQUAL(id.str(), text);
  }
}

CAF_TEST(an empty trace id is empty and assign replaces the one before) {
  packed_trace_id id;
  CAF_CHECK(id.empty());
  CAF_CHECK_EQUAL(id.str(), "");
  id.assign("run-1");
  id.assign("4bf92f3577b34da6a3ce929d0e0e4736");
  CAF_CHECK_EQUAL(id.str(), "4bf92f3577b34da6a3ce929d0e0e4736");
  id.assign("");
  CAF_CHECK(id.empty());
}

CAF_TEST(a hex trace id takes no more room than a string) {
  CAF_CHECK_LESS_OR_EQUAL(sizeof(packed_trace_id), sizeof(std::string));
}

CAF_TEST(the text of a trace id is written into the caller buffer) {
  packed_trace_id::text_buffer buf;
  packed_trace_id id;
  CAF_CHECK_EQUAL(id.text(buf), "");
  id.assign("4bf92f3577b34da6a3ce929d0e0e4736");
  CAF_CHECK_EQUAL(id.text(buf), "4bf92f3577b34da6a3ce929d0e0e4736");
  CAF_CHECK_EQUAL(static_cast<const void*>(id.text(buf).data()), static_cast<const void*>(buf.data()));
  id.assign("run-1");
  CAF_CHECK_EQUAL(id.text(buf), "run-1");
}
