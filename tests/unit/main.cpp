// The test runner's main(): exactly one TU per binary includes the
// implementation. Every other test file defines CAF_SUITE and includes
// <caf/test/unit_test.hpp> or <caf/test/dsl.hpp> only.
#include <caf/test/unit_test_impl.hpp>
