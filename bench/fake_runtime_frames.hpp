#pragma once

// bench_fake_runtime's reading of a manager's frames (Reflection V2 requests
// and notifications), through simdjson.

#include <string_view>

namespace bench {

// What a runtime needs from a manager's frame; views into the frame or the
// parser (valid until the next frame).
struct runtime_inbound {
  std::string_view method;
  std::string_view id; // raw JSON token, empty when absent
  bool has_result = false;
  // params
  std::string_view key;
  std::string_view input; // raw JSON
  std::string_view trace_id;
  std::string_view request_id; // raw JSON token
  std::string_view chunk;      // raw JSON
  bool stream = false;
};

/// False if `frame` is not a JSON object or a member has the wrong type.
bool parse_runtime_inbound(std::string_view frame, runtime_inbound& m);

} // namespace bench
