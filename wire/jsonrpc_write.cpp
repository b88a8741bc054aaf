#include "wire/jsonrpc.hpp"

#include <cstdio>

// The writing side of wire/jsonrpc.hpp: frames built from raw JSON parts.
namespace actor_host::wire::jsonrpc {

std::string quote(std::string_view text) {
  std::string out;
  append_quoted(out, text);
  return out;
}

void append_quoted(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

namespace {

// How envelope() writes a member's text.
enum class as {
  raw,      // JSON text, written as it is
  optional, // the same, and the member is left out when the text is empty
  name,     // a method name: quoted, not escaped (callers pass plain names)
};

struct member {
  std::string_view key;
  std::string_view text;
  as kind = as::raw;
};

// Every envelope: {"jsonrpc":"2.0","key":text,...}.
std::string envelope(std::initializer_list<member> members) {
  std::size_t size = 18;
  for (auto& m : members)
    size += m.key.size() + m.text.size() + 6;
  std::string s;
  s.reserve(size);
  s += R"({"jsonrpc":"2.0")";
  for (auto& m : members) {
    if (m.kind == as::optional && m.text.empty())
      continue;
    s += R"(,")";
    s += m.key;
    s += R"(":)";
    if (m.kind == as::name)
      s += '"';
    s += m.text;
    if (m.kind == as::name)
      s += '"';
  }
  s += '}';
  return s;
}

} // namespace

std::string request(std::string_view method, std::string_view params, std::string_view id) {
  return envelope({{"method", method, as::name}, {"params", params, as::optional}, {"id", id}});
}

std::string notification(std::string_view method, std::string_view params) {
  return envelope({{"method", method, as::name}, {"params", params, as::optional}});
}

std::string result_response(std::string_view id, std::string_view result) {
  return envelope({{"result", result}, {"id", id}});
}

std::string error_response(std::string_view id, std::string_view error) {
  return envelope({{"error", error}, {"id", id.empty() ? std::string_view{"null"} : id}});
}

std::string error_object(int code, std::string_view message, std::string_view data) {
  std::string s = R"({"code":)" + std::to_string(code) + R"(,"message":)" + quote(message);
  if (!data.empty()) {
    s += R"(,"data":)";
    s += data;
  }
  s += '}';
  return s;
}

} // namespace actor_host::wire::jsonrpc
