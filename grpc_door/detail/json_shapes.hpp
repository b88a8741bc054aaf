#pragma once

// What the door's converters between protobuf and the runtime's JSON share
// (json_message.cpp, json_wire.cpp, wire_json.cpp): the well-known JSON
// types and how a double is written.

#include <google/protobuf/descriptor.h>

#include <charconv>
#include <cmath>
#include <string>

namespace actor_host::grpc_door::detail {

/// google.protobuf.Value, Struct and ListValue: JSON itself, not a message.
enum class known { none, value, structure, list };

inline known well_known(const google::protobuf::Descriptor* d) {
  if (d->file()->name() != "google/protobuf/struct.proto")
    return known::none;
  const auto& n = d->name();
  return n == "Value" ? known::value
         : n == "Struct" ? known::structure
         : n == "ListValue" ? known::list
                            : known::none;
}

/// A double as JSON.stringify writes it: NaN and Infinity as null, whole
/// numbers as integers.
inline void put_json_double(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  if (std::fabs(d) < 9007199254740992.0 && d == std::trunc(d)) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(d));
    out.append(buf, r.ptr);
    return;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  out.append(buf, r.ptr);
}

} // namespace actor_host::grpc_door::detail
