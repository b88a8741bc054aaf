#define CAF_SUITE trace_key

#include "actors/tracing/trace_key.hpp"

#include <caf/test/unit_test.hpp>

#include <set>
#include <unordered_map>

// The trace keeper's index keys: equal texts are equal keys, and the text
// comes back as it was given, hex or not.

using namespace actor_host;

CAF_TEST(an id comes back as it was given) {
  for (std::string text : {"4bf92f3577b34da6a3ce929d0e0e4736", "00000000000000000000000000000000",
                           "ffffffffffffffffffffffffffffffff", "4BF92F3577B34DA6A3CE929D0E0E4736",
                           "4bf92f3577b34da6a3ce929d0e0e473", "4bf92f3577b34da6a3ce929d0e0e473g",
                           "run-1", ""})
    CAF_CHECK_EQUAL(trace_key{text}.str(), text);
  for (std::string text : {"00f067aa0ba902b7", "00F067AA0BA902B7", "root", ""})
    CAF_CHECK_EQUAL(span_key{text}.str(), text);
}

// Hex digits are read eight at a time (pack_8_digits): every byte value at
// every place of an id, against the digit rule of lower_hex_nibble.
CAF_TEST(every byte at every place of an id is read as the digit rule says) {
  const std::string base = "0123456789abcdef0fedcba987654321";
  std::size_t wrong = 0, packed = 0;
  for (std::size_t at = 0; at < base.size(); ++at)
    for (int b = 0; b < 256; ++b) {
      auto text = base;
      text[at] = static_cast<char>(b);
      trace_key key{text};
      wrong += key.str() != text;
      // Packed exactly when every byte is a digit: other text is hashed as
      // a std::string (a packed key's hash is another).
      bool digit = lower_hex_nibble(static_cast<char>(b)) >= 0;
      packed += digit;
      wrong += (key.hash() == std::hash<std::string>{}(text)) == digit;
      if (at < 16) {
        auto head = text.substr(0, 16);
        span_key span{head};
        wrong += span.str() != head;
        wrong += (span.hash() == std::hash<std::string>{}(head)) == digit;
      }
    }
  CAF_CHECK_EQUAL(wrong, 0u);
  CAF_CHECK_EQUAL(packed, 32u * 16u);
}

CAF_TEST(keys are equal exactly when their texts are) {
  std::vector<std::string> texts{"00000000000000000000000000000000", "",
                                 "00000000000000000000000000000001",
                                 "10000000000000000000000000000000", "0000000000000000",
                                 "4BF92F3577B34DA6A3CE929D0E0E4736",
                                 "4bf92f3577b34da6a3ce929d0e0e4736"};
  for (auto& a : texts)
    for (auto& b : texts) {
      CAF_CHECK_EQUAL(trace_key{a} == trace_key{b}, a == b);
      if (a == b)
        CAF_CHECK_EQUAL(trace_key{a}.hash(), trace_key{b}.hash());
    }
}

CAF_TEST(ids that differ in their low digits spread over the buckets) {
  std::set<std::size_t> buckets;
  for (int i = 0; i < 1024; ++i) {
    auto n = std::to_string(i);
    buckets.insert(trace_key{std::string(32 - n.size(), '0') + n}.hash() % 1031);
  }
  CAF_CHECK_GREATER(buckets.size(), 500u);
  std::unordered_map<trace_key, int, trace_key::hasher> m;
  m[trace_key{"4bf92f3577b34da6a3ce929d0e0e4736"}] = 1;
  m[trace_key{"run-1"}] = 2;
  CAF_CHECK_EQUAL(m.at(trace_key{"4bf92f3577b34da6a3ce929d0e0e4736"}), 1);
  CAF_CHECK_EQUAL(m.at(trace_key{"run-1"}), 2);
  CAF_CHECK_EQUAL(m.count(trace_key{"4BF92F3577B34DA6A3CE929D0E0E4736"}), 0u);
}

// Text that is not hex is held out of line and shared by copies: a copy
// outlives its original, and a key moved about a flat_key_map keeps it.
CAF_TEST(a key of other text is shared by its copies) {
  std::vector<trace_key> copies;
  for (int i = 0; i < 100; ++i) {
    trace_key original{"run-" + std::to_string(i)};
    copies.push_back(original);
  }
  for (int i = 0; i < 100; ++i) {
    CAF_CHECK_EQUAL(copies[i].str(), "run-" + std::to_string(i));
    CAF_CHECK(copies[i] == trace_key{"run-" + std::to_string(i)});
  }
  auto moved = std::move(copies[0]);
  CAF_CHECK_EQUAL(moved.str(), "run-0");
  CAF_CHECK(!(moved == trace_key{}));
}
