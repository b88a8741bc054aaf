#pragma once

// bench_load's reading of inbound frames: fast paths for the exact shapes
// actor-host and the relay write, simdjson for anything else.

#include <cstdint>
#include <string_view>

namespace bench {

/// What bench_load needs of one frame from the manager.
struct inbound {
  bool response = false;
  bool error = false;
  std::uint64_t id = 0;       // response id / notification requestId
  bool has_id = false;
  std::string_view method;    // notifications
  std::string_view result;    // raw
  std::string_view trace_id;  // runActionState
  long chunk_num = -1;        // {"i":k} / {"q":k} chunks
};

/// The frame shapes actor-host and the relay produce (streamChunk,
/// runActionState, result, error), read without a JSON parser. False:
/// another shape (use slow_parse).
bool fast_parse(std::string_view f, inbound& m);

/// Any JSON-RPC frame, through simdjson. False: not a JSON object.
bool slow_parse(std::string_view f, inbound& m);

/// A runActionState notification in actor-host's exact layout.
bool is_run_action_state(std::string_view f);

} // namespace bench
