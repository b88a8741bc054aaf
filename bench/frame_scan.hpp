#pragma once

// The one walk over a JSON-RPC frame's members that bench_load,
// bench_fake_runtime and bench_relay share (simdjson On Demand): each tool
// says what it takes from a member, the walk and its error rules live here.
//
// Strings read from a frame (get_string, raw tokens) point into the frame or
// into this thread's parser: they stay valid until the thread scans its next
// frame.

#include <simdjson.h>

#include <cstddef>
#include <string_view>

namespace bench {

namespace od = simdjson::ondemand;

/// Starts this thread's parser on `size` bytes at `data`; `capacity` (at
/// least size + SIMDJSON_PADDING) is how many bytes may be read there.
simdjson::error_code open_frame(const char* data, std::size_t size, std::size_t capacity,
                                od::document& doc);

/// Calls on_member(key, value) for each member of `obj` in order; key is
/// unescaped. False as soon as a member cannot be read or on_member returns
/// false (the frame is rejected).
template <class OnMember>
bool for_each_member(od::object obj, OnMember&& on_member) {
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key))
      return false;
    od::value value;
    if (field.value().get(value))
      return false;
    if (!on_member(key, value))
      return false;
  }
  return true;
}

/// for_each_member over `v` when it is an object. Any other value (params
/// as an array, a state that is a string) has no members we want: true.
template <class OnMember>
bool for_each_member_if_object(od::value& v, OnMember&& on_member) {
  od::object obj;
  if (v.get_object().get(obj))
    return true;
  return for_each_member(obj, on_member);
}

/// The frame's top-level members through on_member (see for_each_member).
/// False: not a JSON object, an unreadable member, or on_member said no.
template <class OnMember>
bool scan_frame(const char* data, std::size_t size, std::size_t capacity, OnMember&& on_member) {
  od::document doc;
  if (open_frame(data, size, capacity, doc))
    return false;
  od::object obj;
  if (doc.get_object().get(obj))
    return false;
  return for_each_member(obj, on_member);
}

} // namespace bench
