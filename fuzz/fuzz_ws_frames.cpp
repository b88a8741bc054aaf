// The bytes a WebSocket client sends after the upgrade, as the lean server
// session reads them (net/lean_ws_session.cpp): the first byte says where
// the reads are cut (a read of 1 + b bytes, b = byte % 64, or whole), the
// rest are the frames. The reader must come to the same end whatever the
// cuts, and never hand on more bytes than it was given.

#include "fuzz/fuzz_support.hpp"
#include "net/detail/ws_frame_reader.hpp"

#include <string>
#include <vector>

namespace detail = actor_host::net::detail;
using actor_host::fuzz::require;

namespace {

struct collect : detail::ws_frame_sink {
  std::string log;      // what came out, in order, to compare two cuttings
  std::string message;  // the message so far
  std::size_t bytes = 0;

  bool on_data(std::string_view piece, bool text, bool last) override {
    bytes += piece.size();
    message.append(piece);
    if (last) {
      log += text ? "T" : "B";
      log += std::to_string(message.size()) + ":" + message + ";";
      message.clear();
    }
    return true;
  }
  bool on_control(std::uint8_t opcode, std::string_view payload) override {
    bytes += payload.size();
    require(payload.size() <= 125, "a control frame over 125 bytes was handed on");
    if (opcode == 0x8)
      require(detail::ws_frame_reader::valid_close_payload(payload),
              "an invalid close frame was handed on");
    log += "C" + std::to_string(opcode) + ":" + std::string{payload} + ";";
    return true;
  }
};

struct outcome {
  std::string log;
  std::uint16_t failed = 0;
};

outcome run(std::string bytes, std::size_t cut) {
  detail::ws_frame_reader r;
  collect c;
  std::size_t i = 0;
  while (i < bytes.size() && r.failed() == 0) {
    const std::size_t n = std::min(cut, bytes.size() - i);
    const std::size_t used = r.feed(bytes.data() + i, n, c);
    require(used <= n, "the reader consumed more than it was given");
    if (r.failed() == 0)
      require(used == n, "the reader stopped without being told to");
    i += n;
  }
  require(c.bytes <= bytes.size(), "more payload handed on than read");
  return {c.log, r.failed()};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0)
    return 0;
  const std::size_t cut = 1 + data[0] % 64;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  auto whole = run(bytes, bytes.size() + 1);
  auto pieces = run(bytes, cut);
  require(whole.failed == pieces.failed, "the cuts changed whether the frames fail");
  require(whole.log == pieces.log, "the cuts changed what was handed on");
  require(whole.failed == 0 || whole.failed == 1002, "a failure other than 1002 from the reader");
  return 0;
}
