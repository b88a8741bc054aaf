#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace actor_host {

/// A lowercase hex digit's value, -1 for anything else (uppercase too: it
/// would not come back as it was given). Shared with tracing/trace_key.hpp.
constexpr int lower_hex_nibble(char c) noexcept {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

/// A run's trace id as a call in flight keeps it. Runtimes report
/// OpenTelemetry trace ids, 32 lowercase hex digits: a std::string holds
/// those on the heap (33 bytes, a 48-byte block) beside its own 32, once
/// per call in flight. Packed here into 16 bytes in place; any other text
/// (another runtime's ids, uppercase) is kept as it came, on the heap. The
/// text given is the text returned.
class packed_trace_id {
public:
  bool empty() const noexcept {
    return !packed_ && !other_;
  }

  void assign(std::string_view text) {
    other_.reset();
    packed_ = text.size() == 2 * bytes_.size() && pack(text);
    if (!packed_ && !text.empty())
      other_ = std::make_unique<std::string>(text);
  }

  std::string str() const {
    text_buffer buf;
    return std::string{text(buf)};
  }

  /// Room for the text of a packed id.
  using text_buffer = std::array<char, 32>;

  /// The text without a heap block (the route span's path copies it once
  /// more anyway): in `buf` when packed; valid while `buf` and this are.
  std::string_view text(text_buffer& buf) const noexcept {
    if (other_)
      return *other_;
    if (!packed_)
      return {};
    static constexpr char digits[] = "0123456789abcdef";
    for (std::size_t i = 0; i < bytes_.size(); ++i) {
      buf[2 * i] = digits[bytes_[i] >> 4];
      buf[2 * i + 1] = digits[bytes_[i] & 0xf];
    }
    return {buf.data(), buf.size()};
  }

private:
  bool pack(std::string_view text) noexcept {
    for (std::size_t i = 0; i < bytes_.size(); ++i) {
      auto hi = lower_hex_nibble(text[2 * i]);
      auto lo = lower_hex_nibble(text[2 * i + 1]);
      if (hi < 0 || lo < 0)
        return false;
      bytes_[i] = static_cast<std::uint8_t>(hi << 4 | lo);
    }
    return true;
  }

  std::array<std::uint8_t, 16> bytes_{};
  std::unique_ptr<std::string> other_;
  bool packed_ = false;
};

} // namespace actor_host
