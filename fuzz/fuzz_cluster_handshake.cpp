// The cluster port's guard (actors/cluster/basp_header_check): every byte a
// peer sends there before CAF's BASP broker is judged by it, and CAF sizes a
// buffer from whatever header it lets through. The input is a connection's
// bytes: a first header (judged as an accepted connection's), then headers
// each followed by the payload they announce, as the broker reads them.
//
// Oracle: a header let through never announces more than the cap for its
// kind; the first one let through is a client handshake within 64 KiB;
// judging never reads past the bytes given.

#include "actors/cluster/basp_header_check.hpp"
#include "fuzz/fuzz_support.hpp"

#include <caf/io/basp/header.hpp>

#include <vector>

using actor_host::basp_header_verdict;
using actor_host::fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t header = caf::io::basp::header_size;
  bool first = true;
  std::size_t at = 0;
  while (at < size) {
    // A copy of exactly what is left: a read past it is ASan's to catch.
    std::vector<std::uint8_t> rest(data + at, data + size);
    auto v = actor_host::judge_basp_header(rest.data(), rest.size(), first);
    using kind = basp_header_verdict::kind;
    if (v.what == kind::not_caf) {
      require(first, "only a first header is judged not CAF's");
      return 0;
    }
    if (v.what == kind::incomplete) {
      require(rest.size() < header, "a whole header is parsed");
      return 0;
    }
    if (v.what == kind::oversized) {
      require(v.payload_len > v.cap, "oversized means over the cap");
      return 0;
    }
    require(v.payload_len <= v.cap, "a header let through is within its cap");
    require(v.cap <= actor_host::max_basp_message_payload, "no cap above the largest");
    if (first)
      require(v.handshake && v.cap == actor_host::max_basp_handshake_payload,
              "the first header let through is a handshake within 64 KiB");
    first = false;
    at += header + v.payload_len;
  }
  return 0;
}
