#define CAF_SUITE ws_frame_encoder

#include <caf/test/unit_test.hpp>

#include "net/detail/ws_frame_encoder.hpp"

#include <boost/asio/buffer.hpp>

#include <cstdint>
#include <deque>
#include <string>

using namespace actor_host::net;

namespace {

std::string joined(const ws_frame_encoder& enc) {
  std::string out;
  for (auto& b : enc.buffers())
    out.append(static_cast<const char*>(b.data()), b.size());
  return out;
}

} // namespace

CAF_TEST(frame headers follow RFC 6455 length forms) {
  std::uint8_t h[14];
  CAF_CHECK_EQUAL(put_frame_header(h, false, 5, nullptr), 2u);
  CAF_CHECK_EQUAL(h[0], 0x81);
  CAF_CHECK_EQUAL(h[1], 5);
  CAF_CHECK_EQUAL(put_frame_header(h, true, 300, nullptr), 4u);
  CAF_CHECK_EQUAL(h[0], 0x82);
  CAF_CHECK_EQUAL(h[1], 126);
  CAF_CHECK_EQUAL((h[2] << 8) | h[3], 300);
  CAF_CHECK_EQUAL(put_frame_header(h, false, 70000, nullptr), 10u);
  CAF_CHECK_EQUAL(h[1], 127);
  const std::uint8_t mask[4] = {1, 2, 3, 4};
  CAF_CHECK_EQUAL(put_frame_header(h, false, 5, mask), 6u);
  CAF_CHECK_EQUAL(h[1], 0x85);
  CAF_CHECK_EQUAL(h[5], 4);
}

CAF_TEST(server frames go out unmasked in one batch) {
  std::deque<out_frame> q{{"hello", false}, {"ab", true}};
  ws_frame_encoder enc;
  enc.encode(q);
  CAF_CHECK_EQUAL(enc.frames(), 2u);
  CAF_CHECK_EQUAL(enc.payload_bytes(), 7u);
  CAF_CHECK_EQUAL(joined(enc), std::string("\x81\x05hello\x82\x02" "ab"));
}

CAF_TEST(client frames are masked) {
  std::deque<out_frame> q{{"hello", false}};
  ws_frame_encoder enc;
  enc.use_masks();
  enc.encode(q);
  auto wire = joined(enc);
  CAF_REQUIRE_EQUAL(wire.size(), 2u + 4u + 5u);
  CAF_CHECK_EQUAL(static_cast<std::uint8_t>(wire[1]), 0x85);
  std::string payload;
  for (std::size_t i = 0; i < 5; ++i)
    payload += static_cast<char>(wire[6 + i] ^ wire[2 + (i & 3)]);
  CAF_CHECK_EQUAL(payload, "hello");
}

CAF_TEST(a batch stops at its byte budget but always takes one frame) {
  std::deque<out_frame> q;
  for (int i = 0; i < 3; ++i)
    q.push_back({std::string(200u << 10, 'x'), false});
  ws_frame_encoder enc;
  enc.encode(q);
  CAF_CHECK_EQUAL(enc.frames(), 1u); // 200 KiB + 200 KiB is past 256 KiB
  // Large unmasked payloads are not copied: header buffer + the payload itself.
  CAF_CHECK_EQUAL(enc.buffers().size(), 2u);
  CAF_CHECK_EQUAL(enc.buffers()[1].data(), static_cast<const void*>(q.front().payload.data()));
}
