#include "actors/cluster/basp_header_check.hpp"

#include <caf/binary_deserializer.hpp>
#include <caf/io/basp/header.hpp>

namespace actor_host {

namespace basp = caf::io::basp;

basp_header_verdict judge_basp_header(const void* buf, std::size_t size, bool first) {
  basp_header_verdict v;
  basp::header hdr;
  bool parsed = false;
  if (size >= basp::header_size) {
    caf::binary_deserializer source{
      nullptr, caf::span<const caf::byte>{static_cast<const caf::byte*>(buf), basp::header_size}};
    parsed = !source(hdr);
  }
  if (first && (!parsed || hdr.operation != basp::message_type::client_handshake
                || !basp::valid(hdr))) {
    v.what = basp_header_verdict::kind::not_caf;
    return v;
  }
  if (!parsed)
    return v; // incomplete
  v.payload_len = hdr.payload_len;
  v.handshake = hdr.operation == basp::message_type::client_handshake
                || hdr.operation == basp::message_type::server_handshake;
  v.cap = v.handshake ? max_basp_handshake_payload : max_basp_message_payload;
  v.what = hdr.payload_len > v.cap ? basp_header_verdict::kind::oversized
                                   : basp_header_verdict::kind::ok;
  return v;
}

} // namespace actor_host
