#pragma once

#include "wire/expected.hpp"

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// JSON-RPC 2.0 envelopes as Reflection V2 uses them: one object per frame,
/// payloads kept as raw JSON text so relayed results and chunks are never
/// re-serialised.
namespace actor_host::wire::jsonrpc {

/// The deepest nesting of JSON the whole system takes (the manager checks
/// every frame against it, the runtime role parses inputs and bidi chunks
/// with it): deeper is refused with an error, never read as something else.
constexpr int max_json_depth = 512;

namespace code {
constexpr int parse_error = -32700;
constexpr int invalid_request = -32600;
constexpr int method_not_found = -32601;
constexpr int invalid_params = -32602;
constexpr int internal_error = -32603;
constexpr int server_error = -32000;
} // namespace code

enum class kind { request, notification, response };

struct message {
  jsonrpc::kind kind = kind::notification;
  std::string method;
  std::string id;     // raw JSON of the id ("\"3\"", "3"); empty when absent
  std::string params; // raw JSON; empty when absent
  std::string result; // raw JSON; empty when absent
  std::string error;  // raw JSON; empty when absent
};

struct decode_error {
  int code = 0;
  std::string message;
  std::string id = "null"; // raw id of the offending message when it was readable
};

/// Decodes one frame. May grow `frame`'s capacity for the parser's padding.
bool decode(std::string& frame, message& out, decode_error& err);

/// Top-level members of a JSON object, each as raw JSON text.
struct object_members {
  std::vector<std::pair<std::string, std::string>> members;
  const std::string* find(std::string_view name) const;
};

/// Splits an object into its members; the reason on invalid JSON or a
/// non-object.
wire::expected<object_members> split_object(std::string_view json);
/// The same on `json` itself: its capacity grows by the parser's padding
/// (views into it taken earlier are invalid afterwards), no copy is made.
wire::expected<object_members> split_object_in_place(std::string& json);

/// Raw JSON of the named top-level members of the object in `json`, as views
/// into it (left empty when absent; the first occurrence counts), in one pass
/// and without copies. May grow `json`'s capacity for the parser's padding,
/// so views taken from it earlier are invalid afterwards. False if `json` is
/// not an object or a member cannot be read; the members after the ones read
/// are not checked (unlike split_object).
bool find_members(std::string& json, std::initializer_list<std::string_view> names,
                  std::string_view* out);

/// The same for `part`, a view into `owner` (e.g. a member found above):
/// parsed in place, since the rest of `owner` and its padding follow it.
bool find_members(const std::string& owner, std::string_view part,
                  std::initializer_list<std::string_view> names, std::string_view* out);

/// True if `json` is one complete, valid JSON value (checks every scalar).
bool validate(std::string_view json, std::string* why = nullptr);
/// The same on `json` itself, as split_object_in_place.
bool validate_in_place(std::string& json, std::string* why = nullptr);

/// Decodes a raw JSON string literal; false if `raw` is not a string.
bool string_value(std::string_view raw, std::string& out);

/// Raw JSON of a number, if `raw` is one.
bool number_value(std::string_view raw, double& out);

inline bool is_bool(std::string_view raw, bool& out) {
  if (raw == "true")
    return out = true, true;
  if (raw == "false")
    return out = false, true;
  return false;
}

/// JSON string literal for `text`.
std::string quote(std::string_view text);
/// The same, appended to `out` (no string of its own).
void append_quoted(std::string& out, std::string_view text);

std::string request(std::string_view method, std::string_view params, std::string_view id);
std::string notification(std::string_view method, std::string_view params);
std::string result_response(std::string_view id, std::string_view result);
std::string error_response(std::string_view id, std::string_view error);
std::string error_object(int code, std::string_view message, std::string_view data = {});

} // namespace actor_host::wire::jsonrpc
