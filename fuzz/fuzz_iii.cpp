// iii worker protocol frames (wire/iii_protocol) as the worker connection
// reads them: decode, the members each frame type uses, and the mappings
// between iii and Genkit payloads. Also the auth function's AuthResult
// (registry::parse_auth_result), which arrives the same way.

#include "fuzz/fuzz_support.hpp"
#include "registry/worker_rbac.hpp"
#include "wire/iii_protocol.hpp"
#include "wire/jsonrpc.hpp"

namespace iii = actor_host::wire::iii;
namespace rpc = actor_host::wire::jsonrpc;
using actor_host::fuzz::require;

namespace {

bool valid(std::string_view json) {
  return rpc::validate(json);
}

std::string raw_or_empty(const iii::frame& f, std::string_view name) {
  auto* raw = f.find(name);
  return raw && *raw != "null" ? *raw : std::string{};
}

void members_of(const iii::frame& f) {
  for (auto name : {"id", "invocation_id", "function_id", "trigger_type", "description",
                    "traceparent", "baggage", "previous_worker_id", "reattach_token"})
    f.text(name);
  for (auto name : {"metadata", "request_format", "response_format", "config"})
    raw_or_empty(f, name);
}

void invoke(const iii::frame& f) {
  if (auto* action = f.find("action")) {
    std::string type;
    if (auto a = rpc::split_object(*action))
      if (auto* t = a->find("type"))
        rpc::string_value(*t, type);
  }
  auto function_id = f.text("function_id");
  if (auto target = iii::parse_genkit_function_id(function_id))
    require(target->key.size() >= 2 && target->key.front() == '/', "a genkit key starts with '/'",
            target->key);
  auto* data = f.find("data");
  std::string payload = data ? *data : std::string{"null"};
  require(valid(payload), "a relayed payload is valid JSON", payload);
  auto with_caller = iii::with_caller_worker_id(payload, "w-1");
  if (valid(payload))
    require(valid(with_caller), "a payload with _caller_worker_id is valid JSON", with_caller);
  auto out = iii::invoke_function(f.text("invocation_id"), function_id, payload,
                                  raw_or_empty(f, "metadata"), f.text("traceparent"),
                                  f.text("baggage"));
  require(valid(out), "a relayed invokefunction frame is valid JSON", out);
}

void result(const iii::frame& f) {
  if (auto* error = f.find("error"); error && *error != "null") {
    auto genkit = iii::iii_error_to_genkit(*error);
    require(valid(genkit), "iii_error_to_genkit() is valid JSON", genkit);
    auto back = iii::genkit_error_to_iii(genkit);
    require(valid(back), "genkit_error_to_iii() is valid JSON", back);
  } else if (auto* r = f.find("result")) {
    auto genkit = iii::iii_result_to_genkit(*r, f.text("invocation_id"));
    require(valid(genkit), "iii_result_to_genkit() is valid JSON", genkit);
    iii::genkit_result_to_iii(genkit);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = actor_host::fuzz::text_of(data, size);
  if (auto f = iii::decode(text)) {
    require(!f->type.empty(), "a decoded frame has a type");
    members_of(*f);
    if (f->type == "invokefunction")
      invoke(*f);
    else if (f->type == "invocationresult")
      result(*f);
  } else {
    require(!f.error().empty(), "a refused frame says why");
  }
  // The same text as a Genkit error or result, and as an AuthResult.
  auto err = iii::genkit_error_to_iii(text);
  require(valid(err), "genkit_error_to_iii() is valid JSON", err);
  iii::genkit_result_to_iii(text);
  (void) actor_host::registry::parse_auth_result(text);
  // Text as an upgrade target and as a function id / glob.
  auto q = iii::query_params_json(text);
  require(valid(q) || !valid(rpc::quote(text)), "query_params_json() is valid JSON", q);
  iii::is_uuid(text);
  auto cut = text.find('\n');
  if (cut != std::string::npos)
    iii::glob_match(std::string_view{text}.substr(0, cut), std::string_view{text}.substr(cut + 1));
  return 0;
}
