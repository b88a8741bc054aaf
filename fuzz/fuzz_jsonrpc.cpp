// The JSON-RPC 2.0 envelope (wire/jsonrpc): every frame on the reflection and
// API WebSockets goes through decode() first, and the helpers below pick
// members out of what it returns.

#include "fuzz/fuzz_support.hpp"
#include "wire/jsonrpc.hpp"

namespace rpc = actor_host::wire::jsonrpc;
using actor_host::fuzz::require;

namespace {

bool valid(std::string_view json) {
  return rpc::validate(json);
}

// A string member read back and written again must be the same string.
// `raw` comes from the parser (UTF-8 and structure checked).
void check_string(std::string_view raw) {
  std::string s;
  if (!rpc::string_value(raw, s))
    return;
  auto quoted = rpc::quote(s);
  std::string again;
  require(rpc::string_value(quoted, again) && again == s, "quote/string_value round trip", raw);
  // simdjson checks UTF-8, so a decoded string is valid UTF-8 and its
  // quoted form must be valid JSON.
  if (raw.find('\\') != std::string_view::npos)
    require(valid(quoted), "quote() of a decoded string is valid JSON", quoted);
}

void check_members(std::string text) {
  if (auto members = rpc::split_object(text))
    for (auto& [k, v] : members->members) {
      check_string(v);
      double d;
      rpc::number_value(v, d);
      bool b;
      rpc::is_bool(v, b);
    }
  std::string_view f[4];
  if (rpc::find_members(text, {"method", "id", "params", "state"}, f) && !f[2].empty()) {
    std::string_view g[2];
    // A member found above, parsed in place as runtime_connection does.
    rpc::find_members(text, f[2], {"requestId", "traceId"}, g);
    for (auto v : g)
      check_string(v);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = actor_host::fuzz::text_of(data, size);
  std::string frame = text;
  rpc::message m;
  rpc::decode_error err;
  if (rpc::decode(frame, m, err)) {
    // ("method":"" is a request for a method that is not found.)
    require(m.kind != rpc::kind::response
              || (m.method.empty() && (!m.result.empty() || !m.error.empty())),
            "a response has result or error and no method");
    require((m.kind == rpc::kind::notification) == m.id.empty(), "only requests carry an id");
    if (m.kind != rpc::kind::notification) {
      auto reply = m.kind == rpc::kind::request ? rpc::result_response(m.id, "null")
                                                 : rpc::error_response(m.id, "null");
      require(valid(reply), "the echoed id makes a valid reply", reply);
    }
    for (auto* raw : {&m.params, &m.result, &m.error})
        require(raw->empty() || valid(*raw), "decode() hands on valid JSON only", *raw);
    auto method_error = rpc::error_object(rpc::code::method_not_found,
                                          "Method not found: " + m.method);
    require(valid(method_error), "error_object() is valid JSON", method_error);
  } else {
    require(err.code != 0 && !err.message.empty(), "a decode error has a code and a message");
    auto obj = rpc::error_object(err.code, err.message);
    require(valid(obj), "error_object() is valid JSON", obj);
    auto reply = rpc::error_response(err.id, obj);
    require(valid(reply), "the echoed id makes a valid error reply", reply);
  }
  check_members(text);
  std::string why;
  rpc::validate(text, &why);
  std::string s; // any text, not only what the parser produced
  rpc::string_value(text, s);
  return 0;
}
