#pragma once

#include <cstddef>
#include <cstdint>

namespace actor_host {

/// What the cluster port's guard (cluster_port_guard.cpp) makes of one BASP
/// header, before CAF reads it: CAF sizes (and zero-fills) the payload's
/// buffer from the header alone, so the size it announces is checked first.
/// Pure, so that the fuzz target drives it with any bytes.
struct basp_header_verdict {
  enum class kind {
    ok,          // CAF may read it (and then its payload)
    not_caf,     // the first header of an accepted connection is no client handshake
    oversized,   // it announces more than the cap for its kind
    incomplete,  // fewer bytes than a header (not the first: CAF asks for whole ones)
  };
  kind what = kind::incomplete;
  std::uint32_t payload_len = 0; // what it announces (when parsed)
  std::uint32_t cap = 0;         // the cap for its kind
  bool handshake = false;        // a client or server handshake
};

/// The largest payloads a BASP header may announce. A handshake carries a
/// node id, the application ids and a published actor's interface: a few
/// hundred bytes. Any other message is one of CAF's or a gateway batch
/// (docs/CLUSTER.md): at most one call's input or answer beside 256 KiB of
/// others, or a node's directory snapshot.
inline constexpr std::uint32_t max_basp_handshake_payload = 64 * 1024;
inline constexpr std::uint32_t max_basp_message_payload = 64u << 20;

/// Judges the header in the first bytes of `buf`. `first`: the first header
/// of a connection this node accepted, which must be a valid client
/// handshake.
basp_header_verdict judge_basp_header(const void* buf, std::size_t size, bool first);

} // namespace actor_host
