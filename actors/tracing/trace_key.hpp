#pragma once

#include "actors/common/packed_trace_id.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace actor_host {

/// An id of N bytes as the trace keeper's indexes hold it: OpenTelemetry's
/// lowercase hex (2N digits) packed in place, any other text kept as it
/// came. The keeper looks every route span's trace up two to five times;
/// with std::string keys those lookups (a heap block per key, a byte hash
/// of 32 digits) were its top symbols after SQLite (bench/runs/
/// 2026-12-07-trace-cost.md). Equal texts make equal keys; str() gives the
/// text back as it was given.
template <std::size_t N>
class packed_hex {
public:
  static_assert(N % 8 == 0, "whole words");

  packed_hex() = default;

  explicit packed_hex(std::string_view text) {
    if (text.size() == 2 * N && pack(text))
      return;
    words_ = {};
    if (!text.empty())
      other_ = std::make_shared<const std::string>(text);
  }

  bool operator==(const packed_hex& other) const noexcept {
    return packed_ == other.packed_ && words_ == other.words_ && text() == other.text();
  }

  std::size_t hash() const noexcept {
    if (other_)
      return std::hash<std::string>{}(*other_);
    // Ids are random as a rule, but a runtime may count them: every word
    // is mixed, so ids that differ only in their low digits spread too.
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (auto w : words_) {
      h ^= w;
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    return static_cast<std::size_t>(h);
  }

  std::string str() const {
    std::string out;
    assign_to(out);
    return out;
  }

  /// The text into `out` (as str(), in the string's own buffer: no heap
  /// block once it has held an id).
  void assign_to(std::string& out) const {
    if (other_ || is_null()) {
      out.assign(text());
      return;
    }
    static constexpr char digits[] = "0123456789abcdef";
    out.resize(2 * N);
    for (std::size_t i = 0; i < N; ++i) {
      auto byte = static_cast<std::uint8_t>(words_[i / 8] >> (8 * (7 - i % 8)));
      out[2 * i] = digits[byte >> 4];
      out[2 * i + 1] = digits[byte & 0xf];
    }
  }

  /// Made from "" (str() is "").
  bool empty() const noexcept {
    return is_null() && !other_;
  }

  struct hasher {
    std::size_t operator()(const packed_hex& x) const noexcept {
      return x.hash();
    }
  };

private:
  bool is_null() const noexcept {
    return !packed_;
  }

  bool pack(std::string_view text) noexcept {
    if constexpr (std::endian::native == std::endian::little) {
      for (std::size_t i = 0; i < N / 8; ++i) {
        std::uint32_t hi, lo;
        if (!pack_8_digits(text.data() + 16 * i, hi) || !pack_8_digits(text.data() + 16 * i + 8, lo))
          return false;
        words_[i] = std::uint64_t{hi} << 32 | lo;
      }
    } else {
      for (std::size_t i = 0; i < N; ++i) {
        auto hi = lower_hex_nibble(text[2 * i]);
        auto lo = lower_hex_nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0)
          return false;
        auto& w = words_[i / 8];
        w = w << 8 | static_cast<std::uint64_t>(hi << 4 | lo);
      }
    }
    packed_ = true;
    return true;
  }

  // Eight lowercase hex digits at `p` as four bytes, the first digits the
  // most significant; false for anything else (lower_hex_nibble's rule).
  // A word at a time: the keeper parses every route span's trace id, and
  // the digit loop was ~500 instructions a span (bench/runs/
  // 2026-12-07-trace-batch.md). Little-endian words.
  static bool pack_8_digits(const char* p, std::uint32_t& out) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ull;
    constexpr std::uint64_t highs = 0x8080808080808080ull;
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    // Bytes below 0x80 only: then b + (0x80 - n) sets the byte's high bit
    // iff b >= n, without a carry into the next byte.
    auto at_least = [&](std::uint64_t n) { return (w + (0x80 - n) * ones) & highs; };
    auto digit = at_least('0') & ~at_least('9' + 1);
    auto letter = at_least('a') & ~at_least('f' + 1);
    if ((w & highs) != 0 || (digit | letter) != highs)
      return false;
    // A digit's value is its low nibble; a letter's (bit 6 set) that + 9.
    auto v = (w & 0x0f0f0f0f0f0f0f0full) + ((w >> 6) & ones) * 9;
    // Pairs of nibbles into bytes 0, 2, 4, 6, then those side by side.
    auto b = ((v << 4) | (v >> 8)) & 0x00ff00ff00ff00ffull;
    b = (b | b >> 8) & 0x0000ffff0000ffffull;
    b = (b | b >> 16) & 0xffffffffull;
    out = __builtin_bswap32(static_cast<std::uint32_t>(b));
    return true;
  }

  std::string_view text() const noexcept {
    return other_ ? std::string_view{*other_} : std::string_view{};
  }

  std::array<std::uint64_t, N / 8> words_{};
  // Any other text, out of line: a key is 16 or 8 bytes and a pointer, so
  // the keeper's tables (flat_key_map: thousands of slots, one random slot
  // per lookup) take fewer cache lines than with a std::string in every
  // key. Null when packed (no heap block), shared when copied.
  std::shared_ptr<const std::string> other_;
  bool packed_ = false;
};

/// A trace id (16 bytes) and a span id (8 bytes) as the keeper keys them.
using trace_key = packed_hex<16>;
using span_key = packed_hex<8>;

} // namespace actor_host
