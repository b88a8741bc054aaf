#pragma once

// For the WebSocket tests: a frame as a client writes it.

#include "net/detail/ws_frame_encoder.hpp"

#include <cstdint>
#include <string>

namespace actor_host::test {

/// One frame with `opcode`, masked as RFC 6455 §5.3 requires of a client
/// (unless `masked` is false, to break the rule), FIN unless `fin` is false.
inline std::string client_frame(std::uint8_t opcode, const std::string& payload, bool fin = true,
                                bool masked = true) {
  const std::uint8_t mask[4] = {0x12, 0x34, 0x56, 0x78};
  std::uint8_t h[14];
  auto n = net::put_frame_header(h, opcode, payload.size(), masked ? mask : nullptr);
  if (!fin)
    h[0] &= 0x7f;
  std::string out(reinterpret_cast<const char*>(h), n);
  for (std::size_t i = 0; i < payload.size(); ++i)
    out.push_back(static_cast<char>(payload[i] ^ (masked ? mask[i & 3] : 0)));
  return out;
}

} // namespace actor_host::test
