#include "net/detail/ws_frame_reader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstring>

namespace actor_host::net::detail {

namespace {

constexpr std::uint8_t op_continuation = 0x0;
constexpr std::uint8_t op_text = 0x1;
constexpr std::uint8_t op_binary = 0x2;
constexpr std::uint8_t op_close = 0x8;
constexpr std::uint8_t op_ping = 0x9;
constexpr std::uint8_t op_pong = 0xA;

constexpr std::uint16_t protocol_error = 1002;

// The header's size once its first two bytes are known: the extended
// length, then the mask key, which a client's frames always carry.
std::size_t header_size(std::uint8_t b1) {
  const std::uint8_t len7 = b1 & 0x7f;
  return 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((b1 & 0x80) ? 4 : 0);
}

} // namespace

bool ws_frame_reader::valid_close_payload(std::string_view p) {
  if (p.empty())
    return true;
  if (p.size() == 1)
    return false;
  const auto code = static_cast<std::uint16_t>((static_cast<std::uint8_t>(p[0]) << 8)
                                               | static_cast<std::uint8_t>(p[1]));
  // §7.4.1: the codes a peer may put in a close frame; 1004-1006 and 1015
  // are reserved for reports, never sent.
  const bool known = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014);
  if (!known && !(code >= 3000 && code <= 4999))
    return false;
  return simdjson::validate_utf8(p.data() + 2, p.size() - 2);
}

void ws_frame_reader::fail(std::uint16_t code, const char* what) {
  fail_code_ = code;
  fail_what_ = what;
}

bool ws_frame_reader::start_frame() {
  const std::uint8_t b0 = hdr_[0];
  const std::uint8_t b1 = hdr_[1];
  fin_ = (b0 & 0x80) != 0;
  opcode_ = b0 & 0x0f;
  if ((b0 & 0x70) != 0) {
    fail(protocol_error, "reserved bits set (no extension was agreed)");
    return false;
  }
  if ((b1 & 0x80) == 0) {
    fail(protocol_error, "client frame not masked");
    return false;
  }
  const std::uint8_t len7 = b1 & 0x7f;
  std::uint64_t len = len7;
  std::size_t i = 2;
  if (len7 == 126) {
    len = (std::uint64_t{hdr_[2]} << 8) | hdr_[3];
    i = 4;
    if (len < 126) {
      fail(protocol_error, "frame length not in its shortest form");
      return false;
    }
  } else if (len7 == 127) {
    len = 0;
    for (int k = 0; k < 8; ++k)
      len = (len << 8) | hdr_[2 + k];
    i = 10;
    if ((len >> 63) != 0) {
      fail(protocol_error, "frame length over 2^63");
      return false;
    }
    if (len <= 0xffff) {
      fail(protocol_error, "frame length not in its shortest form");
      return false;
    }
  }
  std::memcpy(mask_, hdr_ + i, 4);
  mask_off_ = 0;
  remaining_ = len;
  if (opcode_ & 0x8) {
    if (opcode_ != op_close && opcode_ != op_ping && opcode_ != op_pong) {
      fail(protocol_error, "unknown control opcode");
      return false;
    }
    if (!fin_ || len > 125) {
      fail(protocol_error, "control frame fragmented or over 125 bytes");
      return false;
    }
    return true;
  }
  if (opcode_ == op_continuation) {
    if (!in_message_) {
      fail(protocol_error, "continuation frame without a message");
      return false;
    }
    return true;
  }
  if (opcode_ != op_text && opcode_ != op_binary) {
    fail(protocol_error, "unknown data opcode");
    return false;
  }
  if (in_message_) {
    fail(protocol_error, "new message before the last one ended");
    return false;
  }
  in_message_ = true;
  message_text_ = opcode_ == op_text;
  return true;
}

void ws_frame_reader::unmask(char* p, std::size_t n) {
  // Eight bytes a step with the key rotated to where this piece starts.
  std::uint8_t key[8];
  for (int k = 0; k < 8; ++k)
    key[k] = mask_[(mask_off_ + k) & 3];
  std::uint64_t wide;
  std::memcpy(&wide, key, 8);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, p + i, 8);
    v ^= wide;
    std::memcpy(p + i, &v, 8);
  }
  for (; i < n; ++i)
    p[i] = static_cast<char>(p[i] ^ key[i & 7]);
  mask_off_ = static_cast<std::uint8_t>((mask_off_ + n) & 3);
}

std::size_t ws_frame_reader::feed(char* data, std::size_t n, ws_frame_sink& sink) {
  std::size_t i = 0;
  while (fail_code_ == 0) {
    if (!in_payload_) {
      while (hdr_len_ < 2 && i < n)
        hdr_[hdr_len_++] = static_cast<std::uint8_t>(data[i++]);
      if (hdr_len_ < 2)
        return i;
      const std::size_t need = header_size(hdr_[1]);
      while (hdr_len_ < need && i < n)
        hdr_[hdr_len_++] = static_cast<std::uint8_t>(data[i++]);
      if (hdr_len_ < need)
        return i;
      hdr_len_ = 0;
      if (!start_frame())
        return i;
      in_payload_ = true;
    } else if (i == n && remaining_ > 0) {
      return i;
    }
    const auto take = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, n - i));
    unmask(data + i, take);
    std::string_view piece{data + i, take};
    i += take;
    remaining_ -= take;
    const bool frame_done = remaining_ == 0;
    if (frame_done)
      in_payload_ = false;
    if (opcode_ & 0x8) {
      if (!frame_done) {
        control_.append(piece);
        return i;
      }
      std::string_view payload = piece;
      if (!control_.empty()) {
        control_.append(piece);
        payload = control_;
      }
      if (opcode_ == op_close && !valid_close_payload(payload)) {
        control_.clear();
        fail(protocol_error, "invalid close frame");
        return i;
      }
      const bool go = sink.on_control(opcode_, payload);
      control_.clear();
      if (!go)
        return i;
      continue;
    }
    const bool last = frame_done && fin_;
    if (last)
      in_message_ = false;
    // A piece of a frame whose payload goes on in the next read is handed
    // on now (the session collects it): nothing is kept here.
    if (!sink.on_data(piece, message_text_, last))
      return i;
    if (!frame_done)
      return i;
  }
  return i;
}

} // namespace actor_host::net::detail
