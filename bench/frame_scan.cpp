#include "bench/frame_scan.hpp"

namespace bench {

simdjson::error_code open_frame(const char* data, std::size_t size, std::size_t capacity,
                                od::document& doc) {
  // One parser per thread: its buffers are reused frame after frame, and the
  // tools read a frame to the end before they read the next.
  thread_local od::parser parser;
  return parser.iterate(data, size, capacity).get(doc);
}

} // namespace bench
