// Reflection V2 frames as the manager and the runtime decode them.
//
// Plain functions where they exist: registry::parse_register_params (the
// manager's `register`), actions::normalize_list_actions (a listActions
// result). The rest is done inside actors (runtime_connection's
// runActionState/streamChunk, manager_link's runAction, cancelAction,
// listValues and input chunks), so this target replays the sequence of
// wire/jsonrpc calls those handlers make on each frame.

#include "actions/action_list.hpp"
#include "fuzz/fuzz_support.hpp"
#include "registry/runtime_info.hpp"
#include "wire/jsonrpc.hpp"

namespace rpc = actor_host::wire::jsonrpc;
namespace actions = actor_host::actions;
namespace registry = actor_host::registry;
using actor_host::fuzz::require;

namespace {

// actors/dispatch/runtime_connection.cpp: on_register, on_notification.
void manager_side(rpc::message& m) {
  if (m.kind == rpc::kind::response) {
    if (m.result.empty())
      return;
    if (auto result = actions::normalize_list_actions(m.result))
      require(rpc::validate(*result), "a normalised listActions result is valid JSON", *result);
    return;
  }
  if (m.method == "register") {
    if (auto info = registry::parse_register_params(m.params)) {
      require(!info->id.empty(), "a registered runtime has an id");
      info->timestamp = "2026-01-01T00:00:00.000Z";
      auto json = info->to_json();
      require(rpc::validate(json), "RuntimeInfo JSON is valid", json);
    } else {
      require(!info.error().empty(), "a refused register says why");
    }
    return;
  }
  if (m.method != "streamChunk" && m.method != "runActionState")
    return;
  std::string_view f[3]; // requestId, chunk, state
  if (!rpc::find_members(m.params, {"requestId", "chunk", "state"}, f))
    return;
  std::string_view t[1];
  std::string trace;
  if (!f[2].empty() && rpc::find_members(m.params, f[2], {"traceId"}, t) && !t[0].empty())
    rpc::string_value(t[0], trace);
  if (!f[1].empty())
    require(rpc::validate(f[1]), "a relayed chunk is valid JSON", f[1]);
}

// actors/runtime/manager_link.cpp: on_run_action, on_cancel_action,
// on_list_values, on_input.
void runtime_side(const rpc::message& m) {
  std::string text;
  auto split = rpc::split_object(m.params);
  if (!split)
    return;
  auto& p = *split;
  if (m.method == "runAction") {
    auto* key = p.find("key");
    if (!key || !rpc::string_value(*key, text))
      return;
    auto* ctx = p.find("context");
    if (ctx && *ctx != "null")
      require(!ctx->empty(), "a present member has raw text");
    bool b = false;
    for (auto name : {"stream", "streamInput"})
      if (auto* s = p.find(name))
        rpc::is_bool(*s, b);
  } else if (m.method == "cancelAction") {
    if (auto* t = p.find("traceId"))
      rpc::string_value(*t, text);
  } else if (m.method == "listValues") {
    if (auto* t = p.find("type"))
      rpc::string_value(*t, text);
  } else if (m.method == "sendInputStreamChunk" || m.method == "endInputStream") {
    p.find("requestId");
    if (auto* chunk = p.find("chunk"))
      require(rpc::validate(*chunk), "an input chunk is valid JSON", *chunk);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string frame = actor_host::fuzz::text_of(data, size);
  rpc::message m;
  rpc::decode_error err;
  if (!rpc::decode(frame, m, err))
    return 0;
  // find_members may grow params (padding): work on a copy per side.
  rpc::message copy = m;
  manager_side(copy);
  runtime_side(m);
  // A body that is a register params object on its own (the decoders take
  // params from any frame).
  (void) registry::parse_register_params(actor_host::fuzz::text_of(data, size));
  return 0;
}
