#pragma once

// Frames a runtime sends about a run, for the suites that play the runtime.

#include <string>
#include <string_view>

namespace actor_host::testing {

/// A runtime's runActionState notification naming the trace of the run
/// with `request_id` (raw JSON).
inline std::string trace_state(std::string_view request_id, std::string_view trace) {
  return R"({"jsonrpc":"2.0","method":"runActionState","params":{"requestId":)"
         + std::string{request_id} + R"(,"state":{"traceId":")" + std::string{trace} + R"("}}})";
}

} // namespace actor_host::testing
