#define CAF_SUITE ws_frame_reader

#include <caf/test/unit_test.hpp>

#include "net/detail/ws_frame_reader.hpp"
#include "ws_client_frames.hpp"

#include <cstdint>
#include <string>
#include <vector>

using actor_host::net::detail::ws_frame_reader;
using actor_host::net::detail::ws_frame_sink;

namespace {

std::string frame(std::uint8_t opcode, const std::string& payload, bool fin = true,
                  bool masked = true) {
  return actor_host::test::client_frame(opcode, payload, fin, masked);
}

struct recorder : ws_frame_sink {
  std::vector<std::string> events;
  std::string message;
  int stop_after = -1; // events before feed is told to stop

  bool on_data(std::string_view piece, bool text, bool last) override {
    message.append(piece);
    if (last) {
      events.push_back((text ? "text:" : "binary:") + message);
      message.clear();
    }
    return go();
  }
  bool on_control(std::uint8_t opcode, std::string_view payload) override {
    events.push_back("control" + std::to_string(opcode) + ":" + std::string{payload});
    return go();
  }
  bool go() {
    return stop_after < 0 || static_cast<int>(events.size()) < stop_after;
  }
};

std::size_t feed(ws_frame_reader& r, std::string bytes, recorder& rec) {
  return r.feed(bytes.data(), bytes.size(), rec);
}

} // namespace

CAF_TEST(frames in one read are handed on in order and unmasked) {
  ws_frame_reader r;
  recorder rec;
  auto bytes = frame(0x1, R"({"a":1})") + frame(0x9, "p") + frame(0x2, std::string(300, 'b'))
               + frame(0x1, "");
  CAF_CHECK_EQUAL(feed(r, bytes, rec), bytes.size());
  CAF_REQUIRE_EQUAL(rec.events.size(), 4u);
  CAF_CHECK_EQUAL(rec.events[0], R"(text:{"a":1})");
  CAF_CHECK_EQUAL(rec.events[1], "control9:p");
  CAF_CHECK_EQUAL(rec.events[2], "binary:" + std::string(300, 'b'));
  CAF_CHECK_EQUAL(rec.events[3], "text:");
  CAF_CHECK_EQUAL(r.failed(), 0);
}

CAF_TEST(a frame cut at every byte comes out whole) {
  const std::string payload(70000, 'x'); // a 64-bit length
  auto bytes = frame(0x1, "first") + frame(0x1, payload) + frame(0xA, "pong");
  for (std::size_t cut : {1u, 2u, 3u, 7u, 13u, 100u, 4096u}) {
    ws_frame_reader r;
    recorder rec;
    for (std::size_t i = 0; i < bytes.size(); i += cut) {
      const std::size_t given = std::min(cut, bytes.size() - i);
      CAF_CHECK_EQUAL(feed(r, bytes.substr(i, cut), rec), given);
    }
    CAF_REQUIRE_EQUAL(rec.events.size(), 3u);
    CAF_CHECK_EQUAL(rec.events[0], "text:first");
    CAF_CHECK_EQUAL(rec.events[1], "text:" + payload);
    CAF_CHECK_EQUAL(rec.events[2], "control10:pong");
  }
}

CAF_TEST(fragments make one message and control frames may come between them) {
  ws_frame_reader r;
  recorder rec;
  auto bytes = frame(0x1, "he", false) + frame(0x9, "") + frame(0x0, "ll", false)
               + frame(0x0, "o", true);
  CAF_CHECK_EQUAL(feed(r, bytes, rec), bytes.size());
  CAF_REQUIRE_EQUAL(rec.events.size(), 2u);
  CAF_CHECK_EQUAL(rec.events[0], "control9:");
  CAF_CHECK_EQUAL(rec.events[1], "text:hello");
  CAF_CHECK(!r.in_message());
}

CAF_TEST(a stop leaves the rest unread) {
  ws_frame_reader r;
  recorder rec;
  rec.stop_after = 1;
  auto first = frame(0x1, "one");
  auto bytes = first + frame(0x1, "two");
  CAF_CHECK_EQUAL(feed(r, bytes, rec), first.size());
  rec.stop_after = -1;
  CAF_CHECK_EQUAL(feed(r, bytes.substr(first.size()), rec), bytes.size() - first.size());
  CAF_REQUIRE_EQUAL(rec.events.size(), 2u);
  CAF_CHECK_EQUAL(rec.events[1], "text:two");
}

CAF_TEST(protocol errors fail with 1002) {
  auto fails = [](std::string bytes) {
    ws_frame_reader r;
    recorder rec;
    feed(r, std::move(bytes), rec);
    return r.failed();
  };
  CAF_CHECK_EQUAL(fails(frame(0x1, "x", true, false)), 1002); // not masked
  auto rsv = frame(0x1, "x");
  rsv[0] = static_cast<char>(rsv[0] | 0x40); // RSV1 without permessage-deflate
  CAF_CHECK_EQUAL(fails(rsv), 1002);
  CAF_CHECK_EQUAL(fails(frame(0x3, "x")), 1002);          // reserved data opcode
  CAF_CHECK_EQUAL(fails(frame(0xB, "x")), 1002);          // reserved control opcode
  CAF_CHECK_EQUAL(fails(frame(0x0, "x")), 1002);          // continuation of nothing
  CAF_CHECK_EQUAL(fails(frame(0x9, "x", false)), 1002);   // fragmented ping
  CAF_CHECK_EQUAL(fails(frame(0x9, std::string(126, 'p'))), 1002);
  CAF_CHECK_EQUAL(fails(frame(0x1, "a", false) + frame(0x1, "b")), 1002);
  // A length in a longer form than it needs.
  std::string longform = "\x81\xfe";
  longform += std::string("\x00\x05", 2) + std::string(4, '\0') + "hello";
  CAF_CHECK_EQUAL(fails(longform), 1002);
  std::string huge = "\x81\xff";
  huge += std::string("\x80\0\0\0\0\0\0\0", 8) + std::string(4, '\0');
  CAF_CHECK_EQUAL(fails(huge), 1002);
}

CAF_TEST(close frames are checked before they are handed on) {
  CAF_CHECK(ws_frame_reader::valid_close_payload(""));
  CAF_CHECK(ws_frame_reader::valid_close_payload(std::string("\x03\xe8", 2) + "bye"));
  CAF_CHECK(ws_frame_reader::valid_close_payload(std::string("\x0f\xa0", 2))); // 4000
  CAF_CHECK(!ws_frame_reader::valid_close_payload("\x03"));
  CAF_CHECK(!ws_frame_reader::valid_close_payload(std::string("\x03\xed", 2))); // 1005
  CAF_CHECK(!ws_frame_reader::valid_close_payload(std::string("\x03\xe8\xff", 3)));
  ws_frame_reader r;
  recorder rec;
  feed(r, frame(0x8, std::string("\x03\xee", 2)), rec); // 1006: never sent
  CAF_CHECK_EQUAL(r.failed(), 1002);
  CAF_CHECK(rec.events.empty());
}
